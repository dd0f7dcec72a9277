// Note [Slowest operators first]
// A run hands out whole operators, one to each free worker (Note [Worker protocol] in run/worker_protocol.cc), so an
// operator that takes long and is handed out late decides when the run ends. By number of probes (the most first),
// that is often the case on a GPU with empty kernel caches: special_erfcx has 20 probes and took 38 s, nearly all of
// it compiling the kernels of two dtypes, while the operators of 40 probes took 11 to 15 s each; begun 19 s into a
// run of 36 s, it was the run's end. A run cannot know what an operator costs before it runs it, but the last
// run in the same output folder measured it: as CTest keeps its tests' times for the next run's schedule, each run
// keeps every probe's seconds in the output folder (kProbeCostsFile, by target, updated with each run's records so
// that a run of some operators keeps the others' figures), and the next run there hands out the operators with the
// most seconds first. Probes the folder has no figure for take a --baseline's, when it was measured on the same
// target (a clean clone in CI has no figures, and the committed baseline's records have their seconds), else those
// that come with the linked release's data folder for the target (release_costs_path(): a cold run's figures for
// every probe, so that the first run on a machine, in a new folder, begins with the kernels CUDA compiles longest
// too, and ends with the operators that take least, those that end their worker among them: a figure for every probe
// of the default audit, not only for the slow ones, made a warm run in a new folder on CUDA 8% faster). Probes without
// a figure count as the mean of those with one; without any figures the order is by number of probes, as before. The
// order decides nothing but which worker runs what when: every record is the same.
//
// The file: a first line "mps-audit probe costs 1 <target>", then "<op>\t<dtype>\t<seconds>" per probe.
#include "probe/probe_costs.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <numeric>

#include <fmt/format.h>

#include "common/paths.h"

namespace mps_audit {
namespace {

constexpr const char* kHeader = "mps-audit probe costs 1 ";

}  // namespace

ProbeCosts read_probe_costs(const std::string& path, const std::string& target) {
  ProbeCosts costs;
  costs.target = target;
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line) || line != kHeader + target) return costs;
  while (std::getline(in, line)) {
    const size_t tab1 = line.find('\t'), tab2 = line.find('\t', tab1 + 1);
    if (tab1 == std::string::npos || tab2 == std::string::npos || tab1 == 0 || tab2 == tab1 + 1) continue;
    const std::string number = line.substr(tab2 + 1);
    char* end = nullptr;
    errno = 0;
    const double seconds = std::strtod(number.c_str(), &end);
    if (number.empty() || *end != '\0' || errno != 0 || !(seconds >= 0)) continue;
    costs.seconds[{line.substr(0, tab1), line.substr(tab1 + 1, tab2 - tab1 - 1)}] = seconds;
  }
  return costs;
}

void add_missing_costs(ProbeCosts& costs, const Results& results) {
  if (results.environment.target != costs.target) return;
  for (const auto& r : results.records) costs.seconds.emplace(std::make_pair(r.op, r.dtype), std::max(0.0, r.seconds));
}

void add_missing_costs(ProbeCosts& costs, const ProbeCosts& more) {
  if (more.target != costs.target) return;
  for (const auto& [probe, seconds] : more.seconds) costs.seconds.emplace(probe, seconds);
}

std::string release_costs_path(const std::string& release_dir, const std::string& target) {
  return join_path(release_dir, "probe-costs-" + target + ".txt");
}

std::string render_probe_costs(ProbeCosts costs, const std::vector<ProbeResult>& records) {
  for (const auto& r : records) costs.seconds[{r.op, r.dtype}] = std::max(0.0, r.seconds);
  std::string text = kHeader + costs.target + "\n";
  for (const auto& [probe, seconds] : costs.seconds)
    text += fmt::format("{}\t{}\t{:.6g}\n", probe.first, probe.second, seconds);
  return text;
}

std::vector<double> expected_seconds(const std::vector<std::pair<std::string, std::string>>& probes,
                                     const ProbeCosts& costs) {
  std::vector<double> out(probes.size(), -1.0);
  double known = 0;
  size_t count = 0;
  for (size_t i = 0; i < probes.size(); ++i) {
    if (const auto it = costs.seconds.find(probes[i]); it != costs.seconds.end()) {
      out[i] = it->second;
      known += it->second;
      ++count;
    }
  }
  const double unknown = count ? known / static_cast<double>(count) : 1.0;
  for (double& x : out) {
    if (x < 0) x = unknown;
  }
  return out;
}

void order_slowest_first(std::vector<std::vector<size_t>>& groups, const std::vector<double>& expected) {
  std::vector<double> cost(groups.size(), 0.0);
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t i : groups[g]) cost[g] += expected[i];
  }
  std::vector<size_t> order(groups.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  std::vector<std::vector<size_t>> sorted;
  sorted.reserve(groups.size());
  for (size_t g : order) sorted.push_back(std::move(groups[g]));
  groups = std::move(sorted);
}

}  // namespace mps_audit
