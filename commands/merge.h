// `mps-audit merge`: the results.json of the shards of one run (`run --shard K/N`) into the results of the whole run
// (results/merge.h says what it refuses), with any other report beside it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace mps_audit {

struct MergeOptions {
  std::vector<std::string> inputs;              // results.json files
  std::string output;                           // the merged results.json
  std::vector<std::string> formats = {"json"};  // json and any other report, written beside `output`
};

// Reads, merges and writes; returns the exit code. Nothing is written when an input is refused.
int run_merge(const MergeOptions& options, std::ostream& out);

}  // namespace mps_audit
