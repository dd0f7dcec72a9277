// `mps-audit model MODEL.pt`: runs a TorchScript model (forward, or one training step) on the CPU and on a target,
// compares the results, and says which operators ran natively, fell back to the CPU (and what that cost), or failed.
// What it finds is a ModelAudit (results/model_results.h), which report/model_reports.h renders.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "results/model_results.h"
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

// Runs the audit in a child process and watches it (Note [Model audit in a child process] in audit_process.cc): a model
// that crashes or hangs the target process gives reports that say so. Throws UserError for bad input.
int run_model_audit(const ModelOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mps_audit
