// Checking a command-line flag's value: one phrasing for every flag of every subcommand, one place that says it.
//   error: --fallback maybe: expected on or off
//   error: --dtypes flaot32: expected one of float32, float16, ... (did you mean 'float32'?)
//   error: --jobs 0: expected 1 or more
// Each check throws UserError (one line, exit 2); the library code that takes options checks them through these.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mps_audit {

// "on or off", "text, md or json"; more than five: "one of a, b, c, ...".
std::string choices_text(const std::vector<std::string>& choices);

// "--FLAG VALUE: expected WHAT", with a suggestion among `candidates` for a near miss.
[[noreturn]] void bad_flag(std::string_view flag, std::string_view value, std::string_view expected,
                           const std::vector<std::string>& candidates = {});

// `value` is one of `choices`.
void check_choice(std::string_view flag, const std::string& value, const std::vector<std::string>& choices);

// Each of `values` is one of `choices`.
void check_choices(std::string_view flag, const std::vector<std::string>& values,
                   const std::vector<std::string>& choices);

void check_at_least(std::string_view flag, int64_t value, int64_t least);

// A macOS major version the MPS rules know of (11 to 30).
void check_macos(std::string_view flag, int64_t value);

// A positive, finite number of seconds; `hint` follows the message (how to ask for no limit).
void check_positive_seconds(std::string_view flag, double value, std::string_view hint = "");

}  // namespace mps_audit
