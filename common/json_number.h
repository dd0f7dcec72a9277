// A number as JSON writes it: JSON has no NaN or infinity, so those are written as null (and read back as NaN).
#pragma once

#include <cmath>

#include <nlohmann/json.hpp>

namespace mps_audit {

inline nlohmann::json json_number(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}

}  // namespace mps_audit
