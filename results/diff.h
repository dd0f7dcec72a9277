// What changed between two runs, op x dtype by op x dtype: the CI gate (`mps-audit diff`, `run --baseline`).
//
// Note [What counts as a regression]
// Verdicts are ranked: pass and xpass 0; fallback 1; unsupported, xfail and known_failure 2; mismatch, error, crash
// and timeout are failures. A record regressed when
//   - it now fails (mismatch, error, crash, timeout) and did not before (skip included: a newly found crash counts),
//   - its rank rose (pass -> fallback, fallback -> unsupported, pass -> xfail, pass -> known_failure: PyTorch's own
//     lists now say the pair fails on a real Mac),
//   - it disappeared, having had a verdict other than skip.
// Improvements (rank fell) never fail the gate, which makes it a ratchet. A conditional failure (Note [Conditional
// failures] in emu/known_bugs.cc: a record that passes for ordinary inputs and fails under a condition) that the base
// did not have is listed as a new conditional failure; it fails the gate only when asked (`--fail-on-conditional`):
// by default the gate decides on verdicts. Not counted either way, but listed:
// records that are new, that became skip ("no longer probed": the CPU reference or the inputs changed, not the
// target), that were skip and now pass, fall back or are refused ("newly probed"), that moved between two failures
// or within a rank ("changed"), and skips that disappeared.
#pragma once

#include <string>
#include <vector>

#include "results/results_file.h"

namespace mps_audit {

struct RecordChange {
  std::string op, dtype;
  Verdict before = Verdict::kSkip, after = Verdict::kSkip;  // meaningful only where present
  bool in_base = true, in_new = true;
  std::string message;  // the new record's (the base's for a record that disappeared)
};

struct RunDiff {
  RunEnvironment base_env, new_env;
  RunProgress base_run, new_run;
  // "torch_version: 1.13.0 -> 2.11.0", for every field that tells the runs apart.
  std::vector<std::string> environment_differences;
  std::vector<RecordChange> regressions, improvements, changed, added, newly_probed, no_longer_probed, removed;
  std::vector<RecordChange> conditional;  // new conditional failures, one per condition (message: which, and why)
  size_t unchanged = 0;
  bool gate_conditional = false;  // new conditional failures fail the gate too
  // What fails the gate: the regressions, and where asked the new conditional failures.
  size_t gate_failures() const { return regressions.size() + (gate_conditional ? conditional.size() : 0); }
  bool has_regressions() const { return gate_failures() > 0; }
};

// `conditional_gate`: new conditional failures fail the gate (`--fail-on-conditional`).
RunDiff diff_runs(const Results& base, const Results& now, bool conditional_gate = false);

// Fields of two environments that differ in a way verdicts may depend on (not the OS kernel's build string).
std::vector<std::string> environment_differences(const RunEnvironment& a, const RunEnvironment& b);

}  // namespace mps_audit
