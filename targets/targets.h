// The targets a run or a model audit probes: what a --target value means here, and its device.
#pragma once

#include <string>
#include <vector>

#include <c10/core/Device.h>

namespace mps_audit {

// The targets a run can probe, as the spec's conditions and `run --target` name them ("auto" aside).
const std::vector<std::string>& probe_target_names();

// The target a request means (auto, mps, mps-emu, cuda, cpu, meta); `why` says how `auto` chose, for the log.
// Throws UserError for an unknown name, with a suggestion, and for a target this libtorch lacks.
std::string resolve_target(const std::string& requested, std::string& why);

// The device a target's probes run on: mps:0 for mps and mps-emu, cuda:0, meta, cpu.
c10::Device device_for(const std::string& target);

// The running macOS's major version (a real MPS target's); 0 elsewhere.
int macos_major_version();

}  // namespace mps_audit
