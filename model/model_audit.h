// `mps-audit model MODEL.pt`: runs a TorchScript model (forward, or one training step) on the CPU and on a target,
// compares the results, and says which operators ran natively, fell back to the CPU (and what that cost), or failed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "results/results_file.h"
#include "targets/targets.h"

namespace mps_audit {

struct ModelOptions {
  std::string model;                // path of the TorchScript file
  std::vector<std::string> inputs;  // "4x3x32x32", "4x3x32x32:float32", "2x16:int64"; one per forward argument
  int64_t input_high = 100;         // integer inputs are drawn from [0, input_high); bool inputs from {0, 1}
  TargetRequest target;             // --target (auto, mps, mps-emu, cuda, cpu) and the --emu-* flags
  std::string fallback = "on";      // PYTORCH_ENABLE_MPS_FALLBACK for the target: on or off
  std::string out_dir = "out";
  std::vector<std::string> formats = {"json", "md"};  // json, md, html
  bool train = false;                                 // one training step instead of a forward pass
  int64_t target_classes = 0;                         // --train: cross-entropy against random labels; 0: sum
  std::string optimizer = "sgd";                      // --train: sgd, adam, adamw (model/optimizer_step.h)
  std::optional<double> lr;                           // --train: learning rate; unset: the optimizer's default
  uint64_t seed = 0;                                  // of the random inputs and labels
  double timeout_s = 600;  // the audit process may stay this long in one stage (loading, CPU, target) before it hangs
  std::string self;        // this executable, to run the audit process (macOS, MPS_AUDIT_WORKERS=exec)
  std::vector<std::string> command_line;  // argv, likewise
};

// One operator as the model (or autograd, or the optimizer) called it on the target: the top-level dispatcher
// calls, aggregated per operator and phase.
struct ModelOpCall {
  std::string op;     // "aten::conv2d"
  std::string phase;  // forward, loss, backward, optimizer
  std::string dtype;  // of its first tensor input
  int64_t calls = 0;
  std::vector<std::string> input_signatures;  // distinct "float32[4, 3, 32, 32], float32[8, 3, 3, 3]"
  std::string status;                         // native, fallback, failed, crashed, timeout
  std::vector<std::string> fallback_ops;      // the leaf operators that ran on the CPU (aten::_to_cpu inside them)
  std::string message;                        // failed, crashed, timeout: the target's error, signal or timeout
  bool unsupported = false;                   // failed with NotImplementedError or a dtype TypeError
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

// One record per distinct op x dtype called on the target, in results.json's record format: pass, fallback,
// mismatch (the first call whose outputs differ from the CPU's), unsupported or error.
std::vector<ProbeResult> model_records(const ModelAudit& audit);

// model.json: results.json's schema (environment, run, summary, results) so that load_results() and `compare` read
// it, plus the model's own fields (ops, output_match, training, totals).
std::string render_model_json(const ModelAudit& audit);
std::string render_model_markdown(const ModelAudit& audit);
std::string render_model_html(const ModelAudit& audit);
// The head of a model report's page, its style included: a model's (model.html) and a program's replay.
std::string model_page_head(std::string_view title);
// Writes model.<format> for each of `formats` (json, md, html) into `dir`, made if missing, each atomically with the
// text `render(format)` gives; returns the paths written. A model's reports and a program's replay's.
std::vector<std::string> write_model_files(const std::vector<std::string>& formats, const std::string& dir,
                                           const std::function<std::string(const std::string&)>& render);
std::string render_model_summary(const ModelAudit& audit);  // the terminal lines

// Runs the audit in a child process and watches it (Note [Model audit in a child process] in audit_process.cc): a model
// that crashes or hangs the target process gives reports that say so. Throws UserError for bad input.
int run_model_audit(const ModelOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mps_audit
