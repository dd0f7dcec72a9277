// What a run is asked to do: the flags as given (RunOptions), and the same checked once into a typed request
// (RunRequest) that the run's steps take. Nothing after check_run_options() checks a flag again.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "common/target.h"
#include "emu/expectations.h"
#include "results/shard.h"
#include "targets/targets.h"

namespace mps_audit {

struct RunOptions {
  TargetRequest target;             // --target and the --emu-* flags
  std::string spec;                 // empty: the default spec (Note [Data homes] in common/data_home.cc)
  std::string ops;                  // regex on "aten::name.overload"; empty: all
  std::vector<std::string> dtypes;  // empty: the spec's defaults
  std::string out_dir = "out";
  std::vector<std::string> formats = {"json", "md", "html"};  // the reports the command writes
  std::string fallback = "on";                                // on, off: PYTORCH_ENABLE_MPS_FALLBACK for the workers
  std::string expectations = "auto";  // PyTorch's MPS expectations: auto, predict, check, off (emu/expected_verdicts.h)
  double timeout_s = 60;              // per probe; must be positive and finite
  std::optional<int> jobs;            // worker processes, 1 or more; unset: one per core
  std::vector<std::string> fail_on;   // verdicts that fail the run (exit 1): commands/run.h
  std::string baseline;               // results.json to gate on (exit 1 on a regression); empty: none
  bool fail_on_conditional = false;   // the baseline gate: a new conditional failure is a regression too
  bool strict = false;                // JUnit: unsupported and fallback fail too (commands/run.h)
  bool resume = false;                // continue the run recorded in out_dir's journal.jsonl
  std::string shard;                  // "K/N": run only the K-th of N slices of the plan; empty: all of it
  std::string samples;                // recorded samples to replay: a file, "none"; empty: the linked release's
  // Only these op x dtype pairs ("aten::cumsum", "float32"), within --ops; empty: --ops x the dtypes. A program's
  // replay (model/calls_replay.h) probes what it called, not every dtype of every operator it called.
  std::vector<std::pair<std::string, std::string>> pairs;
  // Operators recorded as not probed, with the record's message (a replay's calls that the recording's device chose
  // for itself, Note [The recording device's own choices]); planned whatever the CPU says.
  std::map<std::string, std::string> not_probed;
  std::string self;  // this executable, to start workers with
  bool progress = true;
};

struct RunRequest {
  Target target;
  std::string requested_target;  // as --target named it ("auto"): the results' environment says both
  std::string target_choice;     // how auto chose, a line for the log; empty when a target was named
  std::string spec;              // the spec's path (the default one when none was named)
  std::string ops;               // --ops as given, for the plan's identity and messages
  std::regex filter;             // the same, compiled
  std::vector<std::string> dtypes;
  std::string out_dir;
  std::string fallback = "on";  // on, off
  emu::ExpectationMode expectations = emu::ExpectationMode::kOff;
  double timeout_s = 60;
  size_t jobs = 1;  // worker processes: as asked, or one per core
  Shard shard;
  std::string samples;  // a recording's path, or "none"
  bool resume = false;
  std::vector<std::pair<std::string, std::string>> pairs;
  std::map<std::string, std::string> not_probed;
  std::string self;
  bool progress = true;
  // The HTML report is asked for: the results say which release first had a native MPS kernel of each operator
  // (Note [Native since, when asked] in emu/timeline.cc).
  bool native_since = false;
};

// Checks every flag of a run (UserError with the flag's name, exit 2) and makes the typed request: the target and
// its emulated release, the default spec and samples, the regular expression, the shard.
RunRequest check_run_options(const RunOptions& options);

}  // namespace mps_audit
