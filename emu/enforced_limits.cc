#include "emu/enforced_limits.h"

#include <mutex>
#include <utility>

#include <ATen/core/Tensor.h>

#include "common/diagnostics.h"
#include "common/ivalue_tensors.h"
#include "common/limit_errors.h"

namespace mps_audit::emu {
namespace {

// What the limits of MPS look at in a call: its tensor arguments' shapes and element sizes, its `dim` and its other
// arguments' values.
LimitedCall limited_call(const c10::FunctionSchema& schema, const torch::jit::Stack& stack) {
  LimitedCall call;
  const size_t num_args = schema.arguments().size();
  for (size_t i = 0; i < num_args; ++i) {
    const c10::IValue& v = stack[stack.size() - num_args + i];
    const std::string& name = schema.arguments()[i].name();
    if (name == "dim" && v.isInt()) call.dim = v.toInt();
    if (auto text = argument_text(v)) call.args.emplace(name, std::move(*text));
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

std::mutex g_abort_mutex;
std::string g_last_abort;

void end_call(const MpsLimit& limit, const std::string& by) {
  const std::string message = limit_message(limit, by);
  if (limit.outcome == "crash") {
    {
      std::lock_guard<std::mutex> lock(g_abort_mutex);
      g_last_abort = message;
    }
    throw DeviceAbort(message);
  }
  const c10::SourceLocation here{__func__, __FILE__, static_cast<uint32_t>(__LINE__)};
  if (limit.outcome == "refusal") throw LimitRefusal(here, message);
  throw LimitError(here, message);
}

}  // namespace

std::string take_limit_abort() {
  std::lock_guard<std::mutex> lock(g_abort_mutex);
  return std::exchange(g_last_abort, "");
}

LimitCheck::LimitCheck(const MpsLimits* limits, const c10::OperatorHandle& op, const std::string& name,
                       const torch::jit::Stack& stack, const std::string& release, MacosVersion macos) {
  if (!limits) return;
  const auto met = limits->of(name, release, macos);
  if (met.empty()) return;
  op_ = &op;
  call_ = limited_call(op.schema(), stack);
  for (const MpsLimit* limit : met) {
    if (limit->on_results()) {
      on_results_.push_back(limit);
      continue;
    }
    if (const std::string by = limit->met_by(call_); !by.empty()) end_call(*limit, by);
  }
}

void LimitCheck::after(const torch::jit::Stack& stack) {
  if (on_results_.empty()) return;
  const size_t num_returns = op_->schema().returns().size();
  for (size_t i = stack.size() - num_returns; i < stack.size(); ++i) {
    map_tensors(stack[i], [&](const at::Tensor& t) {
      if (t.defined()) call_.results.push_back(t.sizes().vec());
      return t;
    });
  }
  for (const MpsLimit* limit : on_results_) {
    if (const std::string by = limit->met_by(call_); !by.empty()) end_call(*limit, by);
  }
}

}  // namespace mps_audit::emu
