// What each probe took in the last runs in an output folder, and the order it makes for the next run's work
// (Note [Slowest operators first] in probe_costs.cc).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "results/result.h"
#include "results/results_file.h"

namespace mps_audit {

// The file, in the output folder, that keeps the costs between runs.
inline constexpr const char* kProbeCostsFile = ".mps-audit-costs";

struct ProbeCosts {
  std::string target;                                             // the --target they were measured on
  std::map<std::pair<std::string, std::string>, double> seconds;  // (op, dtype) -> seconds of its last record
};

// The costs kept in `path` for `target`. Empty when the file is missing, unreadable, not such a file, or kept for
// another target: costs only order the work, so a bad file costs the order and nothing else. Lines that do not read
// are left out.
ProbeCosts read_probe_costs(const std::string& path, const std::string& target);

// Adds the seconds of `results`' records for the probes `costs` has no figure for, when they were measured on the
// same target: a --baseline's figures, for a folder that has none of its own yet (a clean clone in CI).
void add_missing_costs(ProbeCosts& costs, const Results& results);

// Adds `more`'s figures for the probes `costs` has none for, when they were measured on the same target.
void add_missing_costs(ProbeCosts& costs, const ProbeCosts& more);

// The figures that come with a release's data folder (data/pytorch-X.Y.Z/) for a target, in the same form as the
// output folder's file: "probe-costs-<target>.txt" there.
std::string release_costs_path(const std::string& release_dir, const std::string& target);

// The file's text: `costs` with each record's seconds in place of what it had for that probe.
std::string render_probe_costs(ProbeCosts costs, const std::vector<ProbeResult>& records);

// What each probe (`probes[i]`: its op and dtype) is expected to take: its seconds in `costs`, else the mean of the
// probes of `probes` there are costs for (1 when there are none).
std::vector<double> expected_seconds(const std::vector<std::pair<std::string, std::string>>& probes,
                                     const ProbeCosts& costs);

// Orders `groups` (each the plan indices of one operator's probes) by their expected cost, largest first, keeping the
// order of equals: a probe's cost is `expected[i]`, as expected_seconds() gives it (with no figures every probe
// counts 1, which orders by the number of probes).
void order_slowest_first(std::vector<std::vector<size_t>>& groups, const std::vector<double>& expected);

}  // namespace mps_audit
