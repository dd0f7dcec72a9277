// The typed results of `mps-audit model`, which its reports (report/model_reports.h) render: a TorchScript model's
// audit (ModelAudit, filled by model/model_audit.cc) and a program's replayed calls (CallsAudit, filled by
// model/calls_replay.cc from a recording, model/calls_file.h). Pure data: nothing here runs a model or decides a
// verdict.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/results_file.h"

namespace mps_audit {

// How the calls of one operator in one phase ended on the target. One word each, in model.json's `status`.
enum class CallStatus {
  kNative,    // ran on the target
  kFallback,  // a leaf inside it ran on the CPU (aten::_to_cpu)
  kFailed,    // it raised
  kCrash,     // it killed the audit's process
  kTimeout,   // the audit's process hung in it
};
std::string_view to_string(CallStatus status);

// One operator as the model (or autograd, or the optimizer) called it on the target: the top-level dispatcher
// calls, aggregated per operator and phase.
struct ModelOpCall {
  std::string op;     // "aten::conv2d"
  std::string phase;  // forward, loss, backward, optimizer
  std::string dtype;  // of its first tensor input
  int64_t calls = 0;
  std::vector<std::string> input_signatures;  // distinct "float32[4, 3, 32, 32], float32[8, 3, 3, 3]"
  CallStatus status = CallStatus::kNative;
  std::vector<std::string> fallback_ops;  // the leaf operators that ran on the CPU (aten::_to_cpu inside them)
  std::string message;                    // failed, crash, timeout: the target's error, signal or timeout
  bool unsupported = false;               // failed with NotImplementedError or a dtype TypeError
  // The first call whose outputs differ from the CPU's same call (only when the model's results differ).
  bool mismatch = false;
  std::string mismatch_message;
  double max_abs_error = 0, max_rel_error = 0;
  double seconds = 0;                            // all its calls, including the operators inside
  int64_t bytes_to_cpu = 0, bytes_from_cpu = 0;  // copied because of fallbacks
  // PyTorch's own expectation of real MPS for the call (Note [Expected verdicts] in emu/expected_verdicts.cc): its
  // own, or in a training step, for a forward call, its gradient's (backward runs through it).
  std::optional<ExpectationNote> expectation;
  // The known MPS bugs of the ledger its operator and dtype may meet on the Mac the audit stands for (Note [Known
  // bugs] in emu/known_bugs.cc), each with the release that fixed it. A model's calls are not probes with samples of
  // their own: none of them decides, they tell what to look at.
  std::vector<KnownBugNote> known_bugs;

  // The call did not end well: it raised, or it crashed or hung the process.
  bool failed() const;
};

struct Match {
  bool compared = false;  // false when the target failed before producing it
  bool match = false;
  double max_abs_error = 0, max_rel_error = 0;
  std::string message;  // what differs
};

struct NamedMatch {
  std::string name;  // parameter name
  Match match;
};

struct ModelAudit {
  RunEnvironment environment;
  std::string model;
  std::vector<std::string> inputs;  // as given, with dtypes filled in
  bool train = false;
  std::string loss;       // "cross_entropy (10 classes)" or "sum"
  std::string optimizer;  // --train: "SGD", "Adam", "AdamW"
  double lr = 0;
  std::string target_error;           // the model failed on the target: where and why (a finding, not a tool error)
  std::string failed_phase;           // setup, forward, loss, backward, optimizer
  bool target_unsupported = false;    // the target raised NotImplementedError or a dtype TypeError
  std::string target_ended;           // crash, timeout: the target killed the audit's process or hung in it
  std::vector<std::string> warnings;  // what the target warned, each once
  Match output;                       // forward output (train: the model's output before backward)
  Match loss_match;                   // --train
  std::vector<NamedMatch> gradients, updated;  // --train: per parameter
  std::vector<ModelOpCall> ops;                // fallbacks first, then failures, then by time
  double cpu_seconds = 0, target_seconds = 0;  // wall time of the whole pass on each side
  int64_t calls() const;
  int64_t fallback_calls() const;
  double op_seconds() const;
  double fallback_seconds() const;
  int64_t bytes_to_cpu() const;
  int64_t bytes_from_cpu() const;
  bool gradients_match() const;
  bool updated_match() const;
};

// How many of `matches` differ.
size_t mismatching(const std::vector<NamedMatch>& matches);

// One distinct call of a program's recording (`mps-audit record`, python/mps_audit_record.py): what it was, how often
// and where the program made it. Read by model/calls_file.h.
struct RecordedCall {
  size_t index = 0;                     // position in the file: the prober's sample "call:<index>"
  std::string op;                       // "aten::cumsum": what is replayed (Note [The recording device's own choices])
  std::string recorded_as;              // the recording's own operator, where that is another; else empty
  std::string dtype;                    // the dtype it is probed in: its first tensor's
  int64_t count = 0;                    // identical calls the program made
  double seconds = 0;                   // their time on the recording's device
  int64_t in_bytes = 0, out_bytes = 0;  // of one call's tensor arguments and results
  std::map<std::string, int64_t> phases;  // forward, loss, backward, optimizer -> calls
  // "train.py:42" -> phase -> calls made there (a line such as loss.backward() makes its calls in the backward phase)
  std::map<std::string, std::map<std::string, int64_t>> sites;
  // A test suite's recording (python/mps_audit.py, `pytest --mps-audit`): the tests that made it, "test_x.py::test_y"
  // -> the test's phase (setup, call, teardown) -> site -> calls. Empty for a program's recording.
  std::map<std::string, std::map<std::string, std::map<std::string, int64_t>>> tests;
  int64_t calls_at(const std::string& site) const;
};

// A program's recording, as model/calls_file.h reads it.
struct CallsFile {
  std::string path;
  std::string torch;                           // the version that recorded it
  std::vector<std::string> program;            // "python3 train.py --epochs 1"
  bool complete = true;                        // false: the program failed under the recorder
  std::string error;                           // why it did
  double seconds = 0;                          // the program's time under the recorder
  int64_t total = 0;                           // ATen calls seen, kept or not
  std::map<std::string, int64_t> dropped;      // "aten::op: reason" -> calls that could not be kept
  std::map<std::string, std::string> sources;  // "train.py:42" -> that line of the program
  std::vector<RecordedCall> calls;
};

// One distinct recorded call, with the verdict of its operator and dtype on the target.
struct ReplayedCall {
  RecordedCall call;
  Verdict verdict = Verdict::kSkip;
  bool probed = false;                    // its op x dtype has a record
  bool not_judged = false;                // it has one, but the replay could not judge it (`message` says why)
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
  // PyTorch's own MPS test lists, or a known bug that decided its record, expect it to fail on a real Mac
  // (expected_to_fail() in model/calls_replay.h).
  bool expected_failure = false;
};

// A line of the program, with every call made there.
struct CallSite {
  std::string site;  // "train.py:42"
  std::string code;  // that line
  int64_t calls = 0;
  Verdict worst = Verdict::kSkip;  // of the probed calls made there (kSkip: none probed)
  std::vector<size_t> replayed;    // indices into CallsAudit::calls
};

// What the replay's records say of each call, site and total (model/calls_replay.h's analyse_calls).
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

}  // namespace mps_audit
