// `mps-audit model`: a TorchScript model's forward pass or training step (model/model_audit.h), or with --calls a
// program's recorded calls (model/calls_replay.h), on the CPU and a target.
#pragma once

#include <ostream>

#include "model/calls_replay.h"
#include "model/model_audit.h"

namespace mps_audit {

struct ModelCommandOptions {
  ModelOptions model;          // the flags; with --calls, those that apply to a replay are taken from here
  CallsOptions calls;          // --calls FILE and --jobs
  bool timeout_given = false;  // --timeout was given: a replay's probes take it (else the run's default)
};

// Throws UserError for a TorchScript file, --input or --train beside --calls, and for neither a file nor --calls.
int model_command(const ModelCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mps_audit
