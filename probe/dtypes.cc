// Data type names.
#include "probe/dtypes.h"

#include <utility>

namespace mps_audit {
namespace {

const std::vector<std::pair<std::string, c10::ScalarType>>& table() {
  static const std::vector<std::pair<std::string, c10::ScalarType>> t = {
      {"float32", c10::ScalarType::Float},
      {"float16", c10::ScalarType::Half},
      {"bfloat16", c10::ScalarType::BFloat16},
      {"float64", c10::ScalarType::Double},
      {"int64", c10::ScalarType::Long},
      {"int32", c10::ScalarType::Int},
      {"int16", c10::ScalarType::Short},
      {"int8", c10::ScalarType::Char},
      {"uint8", c10::ScalarType::Byte},
      {"bool", c10::ScalarType::Bool},
      {"complex64", c10::ScalarType::ComplexFloat},
      {"complex128", c10::ScalarType::ComplexDouble},
  };
  return t;
}

}  // namespace

std::optional<c10::ScalarType> parse_dtype(std::string_view name) {
  for (const auto& [n, t] : table()) {
    if (n == name) return t;
  }
  return std::nullopt;
}

std::string dtype_name(c10::ScalarType type) {
  for (const auto& [n, t] : table()) {
    if (t == type) return n;
  }
  return c10::toString(type);
}

const std::vector<std::string>& known_dtype_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& entry : table()) v.push_back(entry.first);
    return v;
  }();
  return names;
}

const std::vector<std::string>& default_dtype_names() {
  static const std::vector<std::string> names = {"float32", "float16", "bfloat16", "int64", "int32",
                                                 "int16",   "int8",    "uint8",    "bool",  "complex64"};
  return names;
}

}  // namespace mps_audit
