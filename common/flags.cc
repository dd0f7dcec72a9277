// The one phrasing of a bad flag: see flags.h.
#include "common/flags.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/diagnostics.h"
#include "common/text.h"

namespace mps_audit {

std::string choices_text(const std::vector<std::string>& choices) {
  if (choices.empty()) return "nothing";
  if (choices.size() == 1) return choices.front();
  if (choices.size() > 5) return fmt::format("one of {}", fmt::join(choices, ", "));
  return fmt::format("{} or {}", fmt::join(choices.begin(), choices.end() - 1, ", "), choices.back());
}

void bad_flag(std::string_view flag, std::string_view value, std::string_view expected,
              const std::vector<std::string>& candidates) {
  throw UserError(fmt::format("{} {}: expected {}{}", flag, value, expected,
                              candidates.empty() ? "" : did_you_mean(std::string(value), candidates)));
}

void check_choice(std::string_view flag, const std::string& value, const std::vector<std::string>& choices) {
  if (std::find(choices.begin(), choices.end(), value) == choices.end()) {
    bad_flag(flag, value, choices_text(choices), choices);
  }
}

void check_choices(std::string_view flag, const std::vector<std::string>& values,
                   const std::vector<std::string>& choices) {
  for (const auto& v : values) check_choice(flag, v, choices);
}

void check_at_least(std::string_view flag, int64_t value, int64_t least) {
  if (value < least) bad_flag(flag, std::to_string(value), fmt::format("{} or more", least));
}

void check_macos(std::string_view flag, int64_t value) {
  if (value < 11 || value > 30) bad_flag(flag, std::to_string(value), "a macOS major version, 11 to 30");
}

void check_positive_seconds(std::string_view flag, double value, std::string_view hint) {
  if (!std::isfinite(value) || value <= 0) {
    bad_flag(flag, fmt::format("{}", value),
             fmt::format("a positive number of seconds{}", hint.empty() ? "" : fmt::format(" ({})", hint)));
  }
}

}  // namespace mps_audit
