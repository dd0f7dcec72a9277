// Applying a function to every tensor an operator argument or result holds: a Tensor, a Tensor[], a Tensor?[],
// a Storage (as a tensor of its bytes), or a tuple of those. Used wherever arguments move between devices (the
// prober, the emulator).
#pragma once

#include <functional>

#include <ATen/core/ivalue.h>

namespace mps_audit {

using TensorFn = std::function<at::Tensor(const at::Tensor&)>;

// A copy of `v` with each tensor replaced by f(tensor); other values are kept.
c10::IValue map_tensors(const c10::IValue& v, const TensorFn& f);

}  // namespace mps_audit
