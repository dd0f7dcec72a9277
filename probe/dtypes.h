// The data type names the tool speaks ("float32", "int64", ...) and their ATen scalar types.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <c10/core/ScalarType.h>

namespace mps_audit {

std::optional<c10::ScalarType> parse_dtype(std::string_view name);
std::string dtype_name(c10::ScalarType type);  // "float32"; c10's own name for types without one here
const std::vector<std::string>& known_dtype_names();
// The dtypes probed when neither the spec nor --dtypes says otherwise.
const std::vector<std::string>& default_dtype_names();

}  // namespace mps_audit
