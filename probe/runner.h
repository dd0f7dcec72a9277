// `mps-audit run`: plans op x dtype probes, runs them in worker processes (a crash or a hang costs one probe,
// never the run), journals results as they arrive so that an interrupted run can be resumed, and writes the reports.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "results/result.h"
#include "results/results_file.h"

namespace mps_audit {

struct Spec;

struct RunOptions {
  std::string target = "auto";      // auto, mps, mps-emu, cuda, cpu, meta
  std::string spec;                 // empty: the default spec (Note [Data homes] in common/data_home.cc)
  std::string ops;                  // regex on "aten::name.overload"; empty: all
  std::vector<std::string> dtypes;  // empty: the spec's defaults
  std::string out_dir = "out";
  std::vector<std::string> formats = {"json", "md", "html"};
  std::string fallback = "on";  // on, off: PYTORCH_ENABLE_MPS_FALLBACK for the workers
  std::string emu_release;  // mps-emu: a release folder or a shipped release's version; empty: the linked libtorch's
  int emu_macos = 14;
  std::string expectations = "auto";  // PyTorch's MPS expectations: auto, predict, check, off (emu/expected_verdicts.h)
  double timeout_s = 60;              // per probe; must be positive and finite
  std::optional<int> jobs;            // worker processes, 1 or more; unset: one per core
  std::vector<std::string> fail_on;   // verdicts that fail the run (exit 1)
  std::string baseline;               // results.json to gate on (exit 1 on a regression); empty: none
  bool strict = false;                // JUnit: unsupported and fallback fail too
  bool resume = false;                // continue the run recorded in out_dir's journal.jsonl
  std::string shard;                  // "K/N": run only the K-th of N slices of the plan; empty: all of it
  std::string samples;                // recorded samples to replay: a file, "none"; empty: the linked release's
  // Only these op x dtype pairs ("aten::cumsum", "float32"), within --ops; empty: --ops x the dtypes. A program's
  // replay (model/calls_replay.h) probes what it called, not every dtype of every operator it called.
  std::vector<std::pair<std::string, std::string>> pairs;
  std::string self;  // this executable, to start workers with
  bool progress = true;
};

// The worker side: hidden subcommand `mps-audit __worker`. See Note [Worker protocol] in runner.cc.
struct WorkerOptions {
  std::string target, spec, emu_release;
  std::string samples = "none";  // the recorded samples file the run chose, or "none"
  int emu_macos = 14;
  long parent = 0;    // the pid of the run that started it: the worker exits when that process is gone
  int lifeline = -1;  // a descriptor that reaches end of file when the parent is gone; -1: none
  int state = -1;     // a file whose first 8 bytes it shares with the parent: the probe on the target; -1: none
  const Spec* run_spec = nullptr;  // a forked worker's: the run's, parsed already; else the worker reads `spec`
};

int run_audit(const RunOptions& options, std::ostream& out, std::ostream& err);
int run_worker(const WorkerOptions& options, std::ostream& out);

// --- pieces of a run, exposed for tests -----------------------------------------------------------------------

struct Shard {
  size_t index = 0, count = 0;    // 1-based index of `count` shards; count 0: the whole plan
  std::string to_string() const;  // "2/3", or "" for the whole plan
};
// "K/N" with 1 <= K <= N; throws UserError otherwise.
Shard parse_shard(const std::string& text);

// The plan indices of a shard, in plan order. `plan_ops` is the operator of each probe in plan order (all dtypes of
// an operator next to each other). Every operator goes whole to one shard; operators are dealt out largest first to
// the shard with the fewest probes so far (ties: plan order, lower shard), so shards are balanced by probe count and
// the slicing depends only on the plan.
std::vector<size_t> shard_slice(const std::vector<std::string>& plan_ops, const Shard& shard);

// The variables a run sets in its workers' environment, name and value, given the target, --fallback and the run's
// own environment (a null-terminated array, as `environ`). See Note [Worker environment] in runner.cc.
std::vector<std::pair<std::string, std::string>> worker_variables(const std::string& target,
                                                                  const std::string& fallback,
                                                                  const char* const* environment);

// What a run's journal records as its plan's identity: the first line of journal.jsonl. Two runs with equal
// identities make the same plan, so a journal's records can complete the run that `--resume` asks for.
nlohmann::json plan_identity_line(const nlohmann::json& identity);

// journal.jsonl, read back: its identity, the last environment a worker reported, and its records. A last line that
// is cut short (the run was killed while writing it) is left out, and `valid_bytes` says where the complete lines
// end. Throws UserError naming the file and line for anything else that is not a journal line.
struct Journal {
  nlohmann::json identity;
  std::optional<RunEnvironment> environment;
  std::vector<ProbeResult> records;
  size_t valid_bytes = 0;
  bool torn = false;  // the last line was cut short
};
Journal parse_journal(const std::string& text, const std::string& path);

// How many of `jobs` workers a run starts at once on `device`; the others start once one of them is ready (Note [Half
// the workers first] in probe/runner.cc).
size_t workers_started_first(const c10::Device& device, size_t jobs);

// How many workers to start now, at most `room`, once starts have been seen to take `seconds_per_start` each: those
// for which `pending_seconds` of work not handed out, shared among the `able` workers that can take it and those
// started, is more than a start takes, and any that keep two able to take work (Note [Starts that pay] in
// probe/runner.cc).
size_t starts_that_pay(double pending_seconds, size_t able, double seconds_per_start, size_t room);

// Which of an overload's probes, sent to a worker together with these figures (expected seconds), join the turn of
// the probe before them (Note [Probes in one turn] in probe/probe_op.cc): all but the first, except a probe expected
// to take long and the probe after it (Note [Slow probes alone] in probe/runner.cc).
std::vector<bool> joins_turn(const std::vector<double>& expected);

// After a failed probe, a worker checks its device (Note [Unusable device] in probe/runner.cc). device_unusable()
// runs a tiny operation there and says why it failed, if it did; the CPU and meta devices are always usable.
// known_usable() says, without running anything, that the device is usable: on CUDA, when its current stream has
// run everything queued on it without an error (a fault is sticky, so asking reports it too); false when that is not
// known, and on every other device.
std::optional<std::string> device_unusable(const c10::Device& device);
bool known_usable(const c10::Device& device);

}  // namespace mps_audit
