// Applying a function to every tensor an operator argument or result holds: a Tensor, a Tensor[], a Tensor?[],
// a Storage (as a tensor of its bytes), or a tuple of those. Used wherever arguments move between devices (the
// prober, the emulator).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <ATen/core/ivalue.h>

namespace mps_audit {

using TensorFn = std::function<at::Tensor(const at::Tensor&)>;

// A copy of `v` with each tensor replaced by f(tensor); other values are kept.
c10::IValue map_tensors(const c10::IValue& v, const TensorFn& f);

// An argument's value as conditions on it read it ("3", "0.5", "true", "none", "floor", "[1, 2]"); nullopt for a
// tensor and what no condition names (a dtype, a device, a generator).
std::optional<std::string> argument_text(const c10::IValue& v);

}  // namespace mps_audit
