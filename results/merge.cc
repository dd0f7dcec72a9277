// Merging the results of shards: checks that they belong together, then the union in plan order.
#include "results/merge.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/diagnostics.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "results/shard.h"

namespace mps_audit {
namespace {

// "Darwin 23" of "Darwin 23.6.0 (arm64)": shards of one audit may run on machines whose kernels differ in minor
// versions, but not across major ones (on macOS, a major version is a macOS release with its own MPS).
std::string os_release(const std::string& os) {
  const size_t space = os.find(' ');
  if (space == std::string::npos) return os;
  const size_t end = os.find_first_of(". (", space + 1);
  const std::string machine = os.find('(') == std::string::npos ? "" : os.substr(os.find('('));
  return os.substr(0, end) + (machine.empty() ? "" : " " + machine);
}

// The first way two environments differ, as "what: a, b"; empty when they may be merged.
std::string environment_difference(const RunEnvironment& a, const RunEnvironment& b) {
  const std::vector<std::tuple<const char*, std::string, std::string>> fields = {
      {"libtorch", a.torch_version, b.torch_version},
      {"target", a.target, b.target},
      {"device", a.device, b.device},
      {"emulator (release and macOS rules)", a.emulator, b.emulator},
      {"fallback mode", a.fallback_mode, b.fallback_mode},
      {"spec", a.spec, b.spec},
      {"spec's content", a.spec_hash, b.spec_hash},
      {"recorded samples", a.samples_hash, b.samples_hash},
      {"operating system", os_release(a.os), os_release(b.os)},
  };
  for (const auto& [what, x, y] : fields) {
    if (x != y) return fmt::format("{} '{}', not '{}'", what, y.empty() ? "none" : y, x.empty() ? "none" : x);
  }
  return "";
}

// The shard a part's results say it is: none (a whole run), or K/N as `run --shard` takes it.
Shard shard_of(const MergeInput& part) {
  if (part.results.run.shard.empty()) return {};
  try {
    return parse_shard(part.results.run.shard);
  } catch (const UserError& e) {
    throw UserError(fmt::format("its run.shard: {}", e.message()), {part.path});
  }
}

}  // namespace

Results merge_results(const std::vector<MergeInput>& parts) {
  MPS_AUDIT_ASSERT(!parts.empty(), "nothing to merge");
  const MergeInput& first = parts.front();
  // One split of one run: either every part is a shard of N, or none is.
  const Shard split = shard_of(first);
  std::map<size_t, std::string> shards;  // index -> path
  for (const auto& part : parts) {
    const std::string difference = environment_difference(first.results.environment, part.results.environment);
    if (!difference.empty()) {
      throw UserError(
          fmt::format("not from the same environment as {}: {}; only shards of one run merge", first.path, difference),
          {part.path});
    }
    const Shard s = shard_of(part);
    if (s.count != split.count) {
      throw UserError(fmt::format("{}, but {} is {}: only the shards of one split merge",
                                  s.count ? "shard " + part.results.run.shard : "a whole run", first.path,
                                  split.count ? "shard " + first.results.run.shard : "a whole run"),
                      {part.path});
    }
    if (s.count && !shards.emplace(s.index, part.path).second) {
      throw UserError(fmt::format("shard {} is given twice (also {})", part.results.run.shard, shards[s.index]),
                      {part.path});
    }
  }
  if (split.count) {
    std::vector<std::string> missing;
    for (size_t k = 1; k <= split.count; ++k) {
      if (!shards.count(k)) missing.push_back(fmt::format("{}/{}", k, split.count));
    }
    if (!missing.empty()) {
      throw UserError(fmt::format("shard{} {} of this split {} missing: merge every shard of a run",
                                  missing.size() == 1 ? "" : "s", fmt::join(missing, ", "),
                                  missing.size() == 1 ? "is" : "are"));
    }
  }

  Results merged;
  merged.environment = first.results.environment;
  merged.timeline.releases = first.results.timeline.releases;
  std::map<std::pair<std::string, std::string>, const std::string*> seen;
  std::vector<std::string> interrupted;
  for (const auto& part : parts) {
    for (const auto& r : part.results.records) {
      const auto [it, fresh] = seen.emplace(std::make_pair(r.op, r.dtype), &part.path);
      if (!fresh) {
        throw UserError(fmt::format("{} {} is also in {}: the parts overlap, so they are not shards of one run", r.op,
                                    r.dtype, *it->second),
                        {part.path});
      }
      merged.records.push_back(r);
    }
    merged.timeline.native_since.insert(part.results.timeline.native_since.begin(),
                                        part.results.timeline.native_since.end());
    merged.run.planned += part.results.run.planned;
    merged.run.finished += part.results.run.finished;
    if (!part.results.run.interrupted.empty()) {
      interrupted.push_back(part.results.run.shard.empty()
                                ? part.results.run.interrupted
                                : part.results.run.interrupted + " in shard " + part.results.run.shard);
    }
  }
  merged.run.interrupted = fmt::format("{}", fmt::join(interrupted, ", "));
  // The plan lists operators by name and, within one, dtypes in the spec's order, which the shard that ran the
  // operator kept: a stable sort by operator gives the whole run's order.
  std::stable_sort(merged.records.begin(), merged.records.end(),
                   [](const ProbeResult& a, const ProbeResult& b) { return a.op < b.op; });
  return merged;
}

}  // namespace mps_audit
