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

#include "probe/spec.h"
#include "registry/registry.h"
#include "results/result.h"
#include "results/shard.h"

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

// The dispatch key whose registry a target's records cite: MPS, CUDA, Meta or CPU.
std::string registry_key(const std::string& target);

// The plan indices of a shard, in plan order. `plan_ops` is the operator of each probe in plan order (all dtypes of
// an operator next to each other). Every operator goes whole to one shard; operators are dealt out largest first to
// the shard with the fewest probes so far (ties: plan order, lower shard), so shards are balanced by probe count and
// the slicing depends only on the plan.
std::vector<size_t> shard_slice(const std::vector<std::string>& plan_ops, const Shard& shard);

// Refuses a spec file with nothing in it (only blanks and comments): it would probe every operator with synthesized
// inputs as if that was meant, and an empty file is far more often a mistake (a wrong path, /dev/null, a failed
// download) than a request. Throws UserError naming the file.
void check_spec_not_empty(const std::string& text, const std::string& path);

}  // namespace mps_audit
