// The limits of MPS (emu/mps_limits.h) as the emulated kernels enforce them (Note [MPS limits] in mps_limits.cc).
#pragma once

#include <string>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>

#include "emu/mps_limits.h"

namespace mps_audit::emu {

// The limits of `limits` (none where null) in `release` on `macos` for one call of `op` (the arguments at the top of
// `stack`). Made before the kernel computes, it ends a call meeting a limit on its arguments as a Mac's kernel would:
// a DeviceAbort for an abort, a LimitError or LimitRefusal (common/limit_errors.h) for an error or a refusal, each
// with limit_message(); after() does the same for the limits on results, once the kernel left them on `stack`.
class LimitCheck {
 public:
  LimitCheck(const MpsLimits* limits, const c10::OperatorHandle& op, const std::string& name,
             const torch::jit::Stack& stack, const std::string& release, MacosVersion macos);
  void after(const torch::jit::Stack& stack);

 private:
  const c10::OperatorHandle* op_ = nullptr;
  std::vector<const MpsLimit*> on_results_;
  LimitedCall call_;
};

// The message of the last abort a limit raised in this process since the last call (empty: none), and no longer
// after it. A DeviceAbort that crossed TorchScript's interpreter arrives as a plain RuntimeError: a caller that ran
// code through it (mps-audit model) asks here whether the process would have died on a Mac.
std::string take_limit_abort();

}  // namespace mps_audit::emu
