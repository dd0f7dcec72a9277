// `mps-audit model --calls calls.pt`: replays a program's recorded ATen calls (`mps-audit record`) on the CPU and a
// target through the prober, and says per call site and per operator what runs natively, falls back to the CPU (and
// which leaf ran there), is refused, gives wrong numbers or crashes, and what share of the program's calls and
// operator time falls back. See Note [Replaying a program's calls] in calls_replay.cc and docs/model.md. What it
// finds is a CallsAudit (results/model_results.h), which report/model_reports.h renders.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "results/model_results.h"
#include "targets/targets.h"

namespace mps_audit {

struct CallsOptions {
  std::string calls;     // the calls file
  TargetRequest target;  // --target (auto, mps, mps-emu, cuda, cpu) and the --emu-* flags
  std::string fallback = "on";
  std::string expectations = "auto";
  std::string out_dir = "out";
  std::vector<std::string> formats = {"json", "md"};  // json, md, html
  double timeout_s = 60;                              // per probe
  std::optional<int> jobs;
  std::string self;  // this executable, to start the prober's workers with
  bool progress = true;
};

// PyTorch's own MPS test lists expect the call to fail on a real Mac: an entry of a failure kind other than flaky (a
// flaky entry, which 1.13.1's BLOCKLIST gives most of its operators, says the test is unreliable there, not that the
// operator fails).
bool expected_to_fail(const ReplayedCall& call);

// What the replay's records say of each call, site and total (pure: from the file and the replay's results): the
// calls of each op x dtype grouped under its record, counted per site and in the totals.
CallsAudit analyse_calls(CallsFile file, Results results);

int run_calls_audit(const CallsOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mps_audit
