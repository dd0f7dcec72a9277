// `mps-audit model --calls calls.pt`: replays a program's recorded ATen calls (`mps-audit record`) on the CPU and a
// target through the prober, and says per call site and per operator what runs natively, falls back to the CPU (and
// which leaf ran there), is refused, gives wrong numbers or crashes, and what share of the program's calls and
// operator time falls back. See Note [Replaying a program's calls] in calls_replay.cc and docs/model.md. What it
// finds is a CallsAudit (results/model_results.h), which report/model_reports.h renders.
#pragma once

#include <functional>
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

// The call is expected to fail on a real Mac: an entry of PyTorch's own MPS test lists decides its record (a failure
// the emulator cannot reproduce; a flaky entry, which 1.13.1's BLOCKLIST gives most of its operators, or a dtype the
// allow list is silent on, decides nothing: Note [Expected verdicts]), or the call meets a known bug on this Mac (Note
// [Known bugs a call meets] in calls_replay.cc). The run's rules, so that the replay and the pytest plugin flag what
// `run` calls a failure, and list what it calls a note as notes.
bool expected_to_fail(const ReplayedCall& call);

// The known bugs a recorded call of `op` x `dtype` meets or may meet, from the call's own traits (null: the replay did
// not run the call): emu::RunExpectations::bugs_of_call() of the run's.
using CallBugs =
    std::function<std::vector<KnownBugNote>(const std::string& op, const std::string& dtype, const SampleTraits*)>;

// What the replay's records say of each call, site and total (pure: from the file, the replay's results, and the
// known bugs of `bugs`, none when empty): the calls of each op x dtype grouped under its record, counted per site and
// in the totals.
CallsAudit analyse_calls(CallsFile file, Results results, const CallBugs& bugs = {});

int run_calls_audit(const CallsOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mps_audit
