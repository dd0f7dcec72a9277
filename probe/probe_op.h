// Runs one operator in one dtype on the CPU (the reference) and on the target, in this process, and decides the
// verdict: the worst sample decides. Crashes and hangs are the caller's business (probe/runner.cc runs this in a
// worker process).
#pragma once

#include <functional>
#include <string>

#include <c10/core/Device.h>

#include "probe/result.h"
#include "probe/spec.h"

namespace mps_audit {

struct ProbeTarget {
  std::string name;  // "mps-emu", "mps", "cuda", "cpu", "meta"
  c10::Device device = c10::Device(c10::kCPU);
  int macos_major = 0;        // of the (real or emulated) MPS device; 0 for other targets
  std::string torch_version;  // of the linked libtorch, for the spec's conditions
};

// `before_target` is called after the CPU reference, just before each run on the target, so that a worker can
// tell its parent which side a crash or hang happened on.
ProbeResult probe_op(const ProbeTarget& target, const Spec& spec, const std::string& op, const std::string& dtype,
                     const std::function<void()>& before_target = {});

}  // namespace mps_audit
