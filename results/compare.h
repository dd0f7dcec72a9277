// Several runs side by side: one op x dtype matrix with a column group per run (`mps-audit compare`), and what
// changed from each run to the next (which fallbacks a release fixed, which it introduced).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "results/analysis.h"
#include "results/diff.h"

namespace mps_audit {

struct RunComparison {
  std::vector<std::string> labels;  // one per run, from its environment, unique
  std::vector<std::string> dtypes;  // every run's dtypes, in first-seen order
  struct Row {
    std::string op;
    std::vector<std::map<std::string, Verdict>> cells;  // per run: dtype -> verdict
    bool differs = false;                               // some dtype's verdict is not the same in every run
  };
  std::vector<Row> rows;              // every operator of any run, by name
  std::vector<VerdictCounts> counts;  // per run
  std::vector<RunDiff> steps;         // run i -> run i+1
};

// A run's name in a comparison: "emulated MPS (PyTorch 1.13.1 registry, macOS 14 rules)", "cuda, libtorch 2.11.0".
std::string run_label(const RunEnvironment& env);

RunComparison compare_runs(const std::vector<Results>& runs);

// The fallbacks a step fixed (fallback -> pass) and introduced (pass -> fallback): operator -> its dtypes, in the
// order the diff lists them.
using DtypesByOp = std::vector<std::pair<std::string, std::vector<std::string>>>;
DtypesByOp fallbacks_fixed(const RunDiff& step);
DtypesByOp fallbacks_introduced(const RunDiff& step);

}  // namespace mps_audit
