// What this machine and the linked libtorch offer: MPS, CUDA, the fallback variable, the targets that work here.
// `mps-audit env` prints it, and `run` and `model` record the same block in every result file.
#pragma once

#include <ostream>
#include <string>

#include "results/results_file.h"

namespace mps_audit {

// "Linux 6.1.0 (x86_64)": the running system, its release and machine.
std::string os_description();
// "14.5" on macOS; empty elsewhere.
std::string macos_version();
// The Mac's chip as macOS names it ("Apple M3 Max"); empty off macOS.
std::string mac_chip();

// Fills the host fields of `env` (torch version, OS, mps, cuda, PYTORCH_ENABLE_MPS_FALLBACK, targets); leaves the
// run's own fields (target, device, emulator, fallback mode, spec) as they are. Call it before the MPS emulator is
// activated or after: an emulated MPS is never reported as a built one.
void describe_host(RunEnvironment& env);

// "text" for the environment block, as `env` prints it and the model report quotes it.
std::string render_environment_text(const RunEnvironment& env);

}  // namespace mps_audit
