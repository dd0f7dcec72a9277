// `mps-audit model --calls calls.pt`: replays a program's recorded ATen calls (`mps-audit record`) on the CPU and a
// target through the prober, and says per call site and per operator what runs natively, falls back to the CPU (and
// which leaf ran there), is refused, gives wrong numbers or crashes, and what share of the program's calls and
// operator time falls back. See Note [Replaying a program's calls] in calls_replay.cc and docs/model.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "model/calls_file.h"
#include "results/results_file.h"
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

// One distinct recorded call, with the verdict of its operator and dtype on the target.
struct ReplayedCall {
  RecordedCall call;
  Verdict verdict = Verdict::kSkip;
  bool probed = false;                    // its op x dtype has a record
  bool decided = false;                   // this call's sample decided that record's verdict
  std::vector<std::string> fallback_ops;  // the leaves that ran on the CPU
  std::string message;
  // PyTorch's own expectation of real MPS for its op x dtype (Note [Expected verdicts] in emu/expected_verdicts.cc).
  // Where it made the record a known_failure, `verdict` is what the target did (the record's `observed`), as the
  // TorchScript audit reports it, and the expectation is reported beside it.
  std::optional<ExpectationNote> expectation;
  // The known MPS bugs of the ledger its op x dtype may meet (Note [Known bugs] in emu/known_bugs.cc), the one that
  // decided the record first, each with the release that fixed it.
  std::vector<KnownBugNote> known_bugs;
};

// A line of the program, with every call made there.
struct CallSite {
  std::string site;  // "train.py:42"
  std::string code;  // that line
  int64_t calls = 0;
  Verdict worst = Verdict::kSkip;  // of the probed calls made there (kSkip: none probed)
  std::vector<size_t> replayed;    // indices into CallsAudit::calls
};

struct CallsAudit {
  CallsFile file;
  Results results;  // the replay's: one record per op x dtype the program called
  std::vector<ReplayedCall> calls;
  std::vector<CallSite> sites;  // worst first, then by calls
  int64_t probed_calls = 0, fallback_calls = 0, failed_calls = 0;
  int64_t expected_failures = 0;                 // calls PyTorch's own MPS test lists expect to fail on a real Mac
  int64_t flaky_calls = 0;                       // calls whose op x dtype the lists skip as flaky
  int64_t known_bug_calls = 0;                   // calls whose op x dtype a sample showed to meet a known MPS bug
  double seconds = 0, fallback_seconds = 0;      // recorded operator time, all and of the calls that fall back
  int64_t bytes_to_cpu = 0, bytes_from_cpu = 0;  // the calls that fall back: their arguments, and results back
  std::map<std::string, int64_t> not_probed;     // why -> calls
};

// "native", "fallback", "refused", "wrong", "known_failure", "error", "crash", "timeout", "not_probed"...: a call's
// status in model.json, from its record's verdict.
std::string call_status(Verdict v, bool probed);

// PyTorch's own MPS test lists expect the call to fail on a real Mac: an entry of a failure kind other than flaky (a
// flaky entry, which 1.13.1's BLOCKLIST gives most of its operators, says the test is unreliable there, not that the
// operator fails).
bool expected_to_fail(const ReplayedCall& call);

// What the replay's records say of each call, site and total (pure: from the file and the replay's results).
CallsAudit analyse_calls(CallsFile file, Results results);

// model.json: the replay's results.json (so that `compare` and `diff` read it, and a CI job can gate a program on a
// baseline) plus the program's own fields: program, calls, sites, totals.
std::string render_calls_json(const CallsAudit& audit);
std::string render_calls_markdown(const CallsAudit& audit);
std::string render_calls_html(const CallsAudit& audit);
std::string render_calls_summary(const CallsAudit& audit);  // the terminal lines

int run_calls_audit(const CallsOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mps_audit
