// The targets a run or a model audit probes: what the --target and --emu-* flags mean here, made into one typed
// Target (common/target.h) that the run, its workers and the model audit take whole.
#pragma once

#include <string>

#include "common/target.h"
#include "results/results_file.h"

namespace mps_audit {

// What --target and the emulation flags ask for, as given.
struct TargetRequest {
  std::string target = "auto";   // auto, mps, mps-emu, cuda, cpu, meta
  std::string emu_release;       // mps-emu: a release folder or a shipped release's version; empty: the linked one's
  std::string emu_macos;         // mps-emu: "13.3"; empty: the newest the release's data names
  std::string emu_chip = "any";  // mps-emu: m1 ... m5, or any
};

// The target a run probes; `why` says how `auto` chose, for the log. Auto takes the first target libtorch was built
// with (MPS, CUDA, else emulated MPS): a run's parent, which forks its workers, may not ask libtorch about devices.
// Throws UserError for an unknown name (with a suggestion), a target this libtorch lacks, an emulated release that is
// not there, and a macOS or chip the emulated Mac does not know.
Target make_target(const TargetRequest& request, std::string& why);

// Checks what a request names (the target's name, the emulation flags) without making the target; UserError as
// make_target(). For a model audit's parent, which leaves the rest to its audit process.
void check_target_request(const TargetRequest& request);

// A target of a kind already chosen (the one an audit process reported), with the request's emulation settings.
Target make_target_of_kind(TargetKind kind, const TargetRequest& request);

// The model audit's target, made in its audit process once `host` is described: a run's names and checks, and three
// rules of the model's own. Meta is refused: the audit compares the model's results by value. The target must also
// work on this host (describe_host's list), not only be built into libtorch. And auto takes the first target that
// works here.
Target make_model_target(const TargetRequest& request, const RunEnvironment& host);

// The run's target, as a spawned worker's command line names it (`__worker --target NAME --emu-release DIR`).
Target worker_target(const std::string& name, const std::string& release_dir);

// The running macOS's major version (a real MPS target's); 0 elsewhere.
int macos_major_version();

}  // namespace mps_audit
