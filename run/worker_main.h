// The worker side of a run: hidden subcommand `mps-audit __worker`, or a forked worker (Note [Worker protocol] in
// run/worker_protocol.cc). It sets up its target, reads work lines, probes, and answers with results.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <c10/core/Device.h>

#include "common/target.h"

namespace mps_audit {

class Recordings;
struct Spec;

struct WorkerOptions {
  Target target;                 // the run's, whole (an emulated one with its release)
  int emu_macos = 1400;          // an emulated target's macOS (15.1 as 1501), as the run resolved it
  std::string spec;              // the run's spec file
  std::string samples = "none";  // the recorded samples file the run chose, or "none"
  long parent = 0;               // the pid of the run that started it: the worker exits when that process is gone
  int lifeline = -1;             // a descriptor that reaches end of file when the parent is gone; -1: none
  int state = -1;  // a file whose first 8 bytes it shares with the parent: the probe on the target; -1: none
  const Spec* run_spec = nullptr;  // a forked worker's: the run's, parsed already; else the worker reads `spec`
  // A forked worker's: the run's recorded samples, loaded already; else (null) the worker reads `samples`.
  const Recordings* run_recordings = nullptr;
};

int run_worker(const WorkerOptions& options, std::ostream& out);

// After a failed probe, a worker checks its device (Note [Unusable device] in run/worker_main.cc). device_unusable()
// runs a tiny operation there and says why it failed, if it did; the CPU and meta devices are always usable.
// known_usable() says, without running anything, that the device is usable: on CUDA, when its current stream has
// run everything queued on it without an error (a fault is sticky, so asking reports it too); false when that is not
// known, and on every other device.
std::optional<std::string> device_unusable(const c10::Device& device);
bool known_usable(const c10::Device& device);

}  // namespace mps_audit
