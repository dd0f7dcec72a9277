// Which data types MPS accepts on a given macOS version, and the message it gives when it refuses one
// (../shared facts: float64 and complex128 never; bfloat16 and complex64 from macOS 14).
#pragma once

#include <optional>
#include <string>

#include <c10/core/ScalarType.h>

namespace mps_audit::emu {

inline constexpr int kDefaultMacosMajor = 14;

// nullopt when MPS takes the type on that macOS; otherwise MPS's own message.
std::optional<std::string> mps_dtype_refusal(c10::ScalarType type, int macos_major);

}  // namespace mps_audit::emu
