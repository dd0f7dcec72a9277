// A run's plan: the op x dtype probes it makes, in plan order (every dtype of an operator next to each other), and
// the slice of it a shard runs.
#pragma once

#include <cstddef>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "emu/expected_verdicts.h"
#include "probe/probe_costs.h"
#include "probe/recorded_samples.h"
#include "probe/spec.h"
#include "registry/registry.h"
#include "results/result.h"
#include "results/shard.h"
#include "run/request.h"

namespace mps_audit {

struct PlannedProbe {
  std::string op, dtype;
};

// Every aten operator of the linked libtorch that has a schema, sorted.
std::vector<std::string> aten_ops();

// What a run probes, before shards: the operators `filter` matches, each in the dtypes asked for (`dtypes`, narrowed
// by the spec's own list for that operator, and by `pairs` when it is not empty).
struct PlanRequest {
  const std::vector<std::string>* ops = nullptr;  // the linked libtorch's, sorted (aten_ops())
  const std::regex* filter = nullptr;
  const Registry* on_cpu = nullptr;  // the live CPU registry: an operator the CPU cannot run has no reference
  const Spec* spec = nullptr;
  std::vector<std::string> dtypes;
  std::set<std::pair<std::string, std::string>> pairs;
  // Operators planned whatever the CPU says, to be recorded as not probed with these reasons (Note [Kernels the
  // linked libtorch lacks]); those of them the linked libtorch lacks are planned too, in name order.
  const std::map<std::string, std::string>* not_probed = nullptr;
};
std::vector<PlannedProbe> plan_probes(const PlanRequest& request);

// The record of a planned probe that is not run, saying why, with what `statuses` (the target's registry) says of it.
ProbeResult not_probed_record(const PlannedProbe& p, const std::string& why, const Registry& statuses);

// The plan indices of a shard, in plan order. `plan_ops` is the operator of each probe in plan order (all dtypes of
// an operator next to each other). Every operator goes whole to one shard; operators are dealt out largest first to
// the shard with the fewest probes so far (ties: plan order, lower shard), so shards are balanced by probe count and
// the slicing depends only on the plan.
std::vector<size_t> shard_slice(const std::vector<std::string>& plan_ops, const Shard& shard);

// Refuses a spec file with nothing in it (only blanks and comments): it would probe every operator with synthesized
// inputs as if that was meant, and an empty file is far more often a mistake (a wrong path, /dev/null, a failed
// download) than a request. Throws UserError naming the file.
void check_spec_not_empty(const std::string& text, const std::string& path);

// A run's plan, made from its request before anything is written: what it probes and what it knows beforehand.
struct RunPlan {
  Spec spec;
  std::string spec_hash;
  std::string mps_limits_hash;  // of the limits emulated kernels enforce (emu/mps_limits.h); empty: none
  std::string known_bugs_hash;  // of the ledger whose repros the spec holds (Note [Known bugs' own calls]); empty: none
  const Recordings* recordings = nullptr;         // the recorded samples replayed, or none
  Registry statuses;                              // what the target's registry says of each operator
  emu::RunExpectations expecting;                 // PyTorch's expectations and the known bugs, for which Mac
  std::map<std::string, std::string> not_probed;  // recorded without a probe, with why
  std::string release_version;                    // the emulated release's ("2.14.1"), else empty
  std::vector<PlannedProbe> probes;               // this shard's, in plan order
  size_t whole = 0;                               // the plan's probes before the shard
  std::vector<std::string> dtypes;
  nlohmann::json identity;  // what the journal's first line records (run/journal.h)
  std::string where;        // the target, and the emulated release when MPS is emulated: every line says it

  // The (emulated or real) Mac's macOS major version: 14; 0 off MPS.
  int macos_major() const { return expecting.version / 100; }
  // "emulated MPS (PyTorch 2.14.1 on macOS 15)": the emulator's label (emu/mps_emulator.h), for an emulated target.
  std::string emulator() const;
  // A worker's record, as the run keeps it: the registry's status, its basis, and the expectations that apply.
  void annotate(ProbeResult& r, const Target& target) const;
};

// Reads the spec, the recorded samples, the registries and the expectations the request names, and plans. Writes the
// line that says no expectations were found, when so. Throws UserError for bad input; writes no file.
RunPlan make_run_plan(const RunRequest& request, std::ostream& err);

// What is left to run, grouped by operator name (every overload: logaddexp and logaddexp.out meet the same kernels,
// which CUDA compiles at first use in each process), each group in plan order, slowest first (Note [Slowest operators
// first] in probe/probe_costs.cc); each probe's expected seconds; the figures to update once the run is done.
struct WorkOrder {
  std::vector<std::vector<size_t>> groups;
  std::vector<double> expected;
  ProbeCosts costs;
  std::string costs_path;
  size_t probes = 0;  // in the groups
  size_t jobs = 0;    // the workers to start: as asked, at most one per group
};
// `done`: the plan's probes recorded already. The figures are the last run's in this folder, then the baseline's, then
// those shipped with the linked release.
WorkOrder order_work(const RunRequest& request, const RunPlan& plan, const std::vector<bool>& done,
                     const Results* baseline);

}  // namespace mps_audit
