// `mps-audit merge`: puts the results of the shards of one run (`run --shard K/N`) back together into the results
// of the whole run, and refuses anything that would make that a lie.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "results/results_file.h"

namespace mps_audit {

struct MergeInput {
  std::string path;  // for diagnostics
  Results results;
};

// The union of the parts' records, in plan order (operators by name, each operator's dtypes in the order its part
// lists them), with the first part's environment and the parts' progress added up. A part that was interrupted makes
// the whole incomplete. Throws UserError naming the file, with nothing decided, when the parts ran in different
// environments (libtorch, target, device, emulated release and macOS rules, fallback mode, spec, operating system),
// when two parts hold a record of one op x dtype, when they are shards of different splits (2/3 and 1/4) or one
// shard is given twice, or when a shard of the split is missing.
Results merge_results(const std::vector<MergeInput>& parts);

}  // namespace mps_audit
