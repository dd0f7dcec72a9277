// A run's plan: the op x dtype probes it makes, in plan order (every dtype of an operator next to each other), and
// the slice of it a shard runs.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "results/shard.h"

namespace mps_audit {

struct PlannedProbe {
  std::string op, dtype;
};

// Every aten operator of the linked libtorch that has a schema, sorted.
std::vector<std::string> aten_ops();

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
