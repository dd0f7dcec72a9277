// Shards of a run: see shard.h.
#include "results/shard.h"

#include <regex>

#include <fmt/format.h>

#include "common/diagnostics.h"

namespace mps_audit {

std::string Shard::to_string() const {
  return count == 0 ? "" : fmt::format("{}/{}", index, count);
}

Shard parse_shard(const std::string& text) {
  static const std::regex form(R"(([0-9]{1,6})/([0-9]{1,6}))");
  std::smatch m;
  if (!std::regex_match(text, m, form)) {
    throw UserError(fmt::format("--shard '{}' is not K/N (the K-th of N slices of the plan, e.g. 2/3)", text));
  }
  Shard s{std::stoul(m[1].str()), std::stoul(m[2].str())};
  if (s.count == 0 || s.index == 0 || s.index > s.count) {
    throw UserError(fmt::format("--shard {}: K must be between 1 and N, and N at least 1", text));
  }
  return s;
}

}  // namespace mps_audit
