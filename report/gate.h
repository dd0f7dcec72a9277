// The gate of `run --baseline`: a finished run against its baseline (Note [What counts as a regression] in
// results/diff.cc).
#pragma once

#include <ostream>
#include <string>

#include "results/results_file.h"

namespace mps_audit {

// `run --baseline`: diffs a finished run against the baseline (loaded before the run, so that a bad --baseline is
// reported before it starts), prints the verdict of the gate, writes diff.md into `out_dir`, and returns 1 when a
// record regressed (or, with `conditional`, a new conditional failure came).
int apply_baseline_gate(const Results& now, const Results& baseline, const std::string& out_dir, bool conditional,
                        std::ostream& out);

}  // namespace mps_audit
