// The limits of MPS (emu/mps_limits.h) as the emulated kernels enforce them (Note [MPS limits] in mps_limits.cc).
#pragma once

#include <string>

#include <ATen/core/dispatch/Dispatcher.h>

#include "emu/mps_limits.h"

namespace mps_audit::emu {

// Ends a call of `op` (the arguments at the top of `stack`) that meets a limit of `limits` in `release` on macOS
// `macos_major` as a Mac's kernel would: a DeviceAbort for an abort, a c10::Error for an error, each with
// limit_message().
void enforce_mps_limits(const MpsLimits& limits, const c10::OperatorHandle& op, const std::string& name,
                        const torch::jit::Stack& stack, const std::string& release, int macos_major);

}  // namespace mps_audit::emu
