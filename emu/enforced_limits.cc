#include "emu/enforced_limits.h"

#include <ATen/core/Tensor.h>

#include "common/diagnostics.h"
#include "common/ivalue_tensors.h"

namespace mps_audit::emu {
namespace {

// What the limits of MPS look at in a call: its tensor arguments' shapes and element sizes, and its `dim`.
LimitedCall limited_call(const c10::FunctionSchema& schema, const torch::jit::Stack& stack) {
  LimitedCall call;
  const size_t num_args = schema.arguments().size();
  for (size_t i = 0; i < num_args; ++i) {
    const c10::IValue& v = stack[stack.size() - num_args + i];
    if (schema.arguments()[i].name() == "dim" && v.isInt()) call.dim = v.toInt();
    map_tensors(v, [&](const at::Tensor& t) {
      if (t.defined()) {
        call.shapes.push_back(t.sizes().vec());
        call.itemsizes.push_back(static_cast<int64_t>(t.dtype().itemsize()));
      }
      return t;
    });
  }
  return call;
}

}  // namespace

void enforce_mps_limits(const MpsLimits& limits, const c10::OperatorHandle& op, const std::string& name,
                        const torch::jit::Stack& stack, const std::string& release, int macos_major) {
  const auto met = limits.of(name, release, static_cast<MacosVersion>(macos_major * 100));
  if (met.empty()) return;
  const LimitedCall call = limited_call(op.schema(), stack);
  for (const MpsLimit* limit : met) {
    const std::string by = limit->met_by(call);
    if (by.empty()) continue;
    if (limit->outcome == "crash") throw DeviceAbort(limit_message(*limit, by));
    TORCH_CHECK(false, limit_message(*limit, by));
  }
}

}  // namespace mps_audit::emu
