// A run: plans op x dtype probes, runs them in worker processes (a crash or a hang costs one probe, never the run),
// and journals results as they arrive so that an interrupted run can be resumed. commands/run.h writes its reports.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "results/results_file.h"

namespace mps_audit {

struct RunOptions {
  std::string target = "auto";      // auto, mps, mps-emu, cuda, cpu, meta
  std::string spec;                 // empty: the default spec (Note [Data homes] in common/data_home.cc)
  std::string ops;                  // regex on "aten::name.overload"; empty: all
  std::vector<std::string> dtypes;  // empty: the spec's defaults
  std::string out_dir = "out";
  std::vector<std::string> formats = {"json", "md", "html"};
  std::string fallback = "on";  // on, off: PYTORCH_ENABLE_MPS_FALLBACK for the workers
  std::string emu_release;  // mps-emu: a release folder or a shipped release's version; empty: the linked libtorch's
  std::string emu_macos;    // mps-emu: "13.3"; empty: the newest the release's data names (Note [The emulated Mac])
  std::string emu_chip = "any";       // mps-emu: m1 ... m5, or any
  std::string expectations = "auto";  // PyTorch's MPS expectations: auto, predict, check, off (emu/expected_verdicts.h)
  double timeout_s = 60;              // per probe; must be positive and finite
  std::optional<int> jobs;            // worker processes, 1 or more; unset: one per core
  std::vector<std::string> fail_on;   // verdicts that fail the run (exit 1): commands/run.h
  std::string baseline;               // results.json to gate on (exit 1 on a regression); empty: none
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

struct AuditedRun {
  Results results;     // every record, in plan order; marked incomplete when a signal stopped the run
  int stopped_by = 0;  // the signal that stopped it (SIGINT, SIGTERM), or 0
  // The output folder's lock and the workers still ending, held until this goes: after the reports.
  std::shared_ptr<void> held;
};

// Runs the plan the options make (checked already: commands/run.h), journalling into options.out_dir, and writes the
// probe figures for the next run there; no reports. `baseline`, when given, lends its figures to order the work.
// Throws UserError for bad input found before anything is written (a spec, a release, a journal to resume).
AuditedRun audit_run(const RunOptions& options, const Results* baseline, std::ostream& err);

}  // namespace mps_audit
