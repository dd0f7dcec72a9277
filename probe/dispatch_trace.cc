// RecordFunction-based operator trace, and which of its operators fell back to the CPU.
//
// Note [Operators that fell back]
// at::native::cpu_fallback, which MPS's backend fallback and its always-CPU kernels run (and so do the emulator's),
// copies the operator's tensor arguments to the CPU with aten::_to_cpu, called directly inside the operator that fell
// back, then runs the CPU kernel and copies the results back, inside it too. So the operator that fell back is the one
// that ran aten::_to_cpu directly inside it: a leaf of what ran ("aten::cumsum.out", reached through the composite
// aten::cumsum), which is what a report names, and never the composite or the call above it. An aten::_to_cpu at the
// top level is an operator called for itself (a probe of aten::_to_cpu), not a fallback. Parents are on the event's
// own thread (TraceEvent::parent), so a fallback in autograd's backward thread is found as one in the caller's.
// `run` and `model` both decide by this rule: probe/sample_probe.cc per probe, model/model_audit.cc per model call.
#include "probe/dispatch_trace.h"

#include <algorithm>
#include <chrono>

#include <ATen/record_function.h>

#include "common/diagnostics.h"
#include "common/ivalue_tensors.h"
#include "probe/dtypes.h"

namespace mps_audit {
namespace {

struct TraceState {
  std::mutex mutex;
  std::vector<TraceEvent> events;
  bool active = false;
  bool details = false;
  bool keep_call_outputs = false;
};

TraceState& state() {
  static TraceState s;
  return s;
}

thread_local std::vector<long> t_index_stack;  // the indices of the thread's open events, innermost last

// Carries an event's index and start time from its start callback to its end callback (TraceOptions::details).
struct TimedContext : at::ObserverContext {
  size_t index = 0;
  std::chrono::steady_clock::time_point start;
};

bool is_call(const TraceEvent& e) {
  if (e.parent < 0) return true;
  const std::string& parent = state().events[static_cast<size_t>(e.parent)].name;
  return parent.rfind("autograd::", 0) == 0;
}

// CPU copies, so that later in-place operators on the device cannot change them.
std::vector<c10::IValue> copy_outputs(const at::RecordFunction& fn) {
  at::RecordFunctionGuard not_traced(false);  // the copies are the trace's own, not the traced program's
  std::vector<c10::IValue> out;
  for (const c10::IValue& v : fn.outputs()) {
    out.push_back(map_tensors(v, [](const at::Tensor& t) {
      return t.defined() ? t.detach().to(c10::kCPU, /*non_blocking=*/false, /*copy=*/true) : t;
    }));
  }
  return out;
}

void describe_tensor(const at::Tensor& t, TraceEvent& e) {
  if (!t.defined()) return;
  std::string shape;
  for (int64_t d : t.sizes()) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  e.inputs.push_back(dtype_name(t.scalar_type()) + "[" + shape + "]");
  e.input_bytes.push_back(static_cast<int64_t>(t.numel() * t.element_size()));
}

void describe_inputs(const at::RecordFunction& fn, TraceEvent& e) {
  for (const c10::IValue& v : fn.inputs()) {
    if (v.isTensor()) {
      describe_tensor(v.toTensor(), e);
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorVector()) describe_tensor(t, e);
    } else if (v.isList()) {  // Tensor?[]
      for (const c10::IValue& x : v.toListRef()) {
        if (x.isTensor()) describe_tensor(x.toTensor(), e);
      }
    }
  }
}

// "aten::cumsum.out": RecordFunction's name() omits the overload, its operator_name() has it.
std::string full_name(const at::RecordFunction& fn) {
  if (auto op = fn.operator_name()) {
    return op->overload_name.empty() ? op->name : op->name + "." + op->overload_name;
  }
  return fn.name();
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  TraceState& s = state();
  TraceEvent event;
  event.name = full_name(fn);
  event.depth = static_cast<int>(t_index_stack.size());
  event.parent = t_index_stack.empty() ? -1 : t_index_stack.back();
  if (s.details) describe_inputs(fn, event);
  size_t index = 0;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    index = s.events.size();
    s.events.push_back(std::move(event));
  }
  t_index_stack.push_back(static_cast<long>(index));
  if (!s.details && !s.keep_call_outputs) return nullptr;
  auto context = std::make_unique<TimedContext>();
  context->index = index;
  context->start = std::chrono::steady_clock::now();
  return context;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext* context) {
  if (!t_index_stack.empty()) t_index_stack.pop_back();
  if (auto* timed = dynamic_cast<TimedContext*>(context)) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - timed->start).count();
    TraceState& s = state();
    bool keep = false;
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      if (timed->index >= s.events.size()) return;
      s.events[timed->index].seconds = seconds;
      keep = s.keep_call_outputs && is_call(s.events[timed->index]);
    }
    if (!keep) return;
    std::vector<c10::IValue> outputs = copy_outputs(fn);
    std::lock_guard<std::mutex> lock(s.mutex);
    s.events[timed->index].outputs = std::move(outputs);
  }
}

}  // namespace

DispatchTrace::DispatchTrace() : DispatchTrace(TraceOptions{}) {}

// Global callbacks, not thread-local ones: autograd runs a device's backward operators on its own thread.
DispatchTrace::DispatchTrace(TraceOptions options) {
  TraceState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  MPS_AUDIT_ASSERT(!s.active, "one DispatchTrace at a time");
  s.active = true;
  s.details = options.details;
  s.keep_call_outputs = options.keep_call_outputs;
  s.events.clear();
  t_index_stack.clear();
  handle_ = at::addGlobalCallback(at::RecordFunctionCallback(&on_start, &on_end)
                                      .needsInputs(options.details)
                                      .needsOutputs(options.keep_call_outputs)
                                      .scopes({at::RecordScope::FUNCTION}));
}

DispatchTrace::~DispatchTrace() {
  at::removeCallback(handle_);
  std::lock_guard<std::mutex> lock(state().mutex);
  state().active = false;
}

std::vector<TraceEvent> DispatchTrace::events() const {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().events;
}

bool DispatchTrace::ran(const std::string& name) const {
  for (const auto& e : events()) {
    if (e.name == name) return true;
  }
  return false;
}

std::vector<size_t> fallback_events(const std::vector<TraceEvent>& events) {
  std::vector<size_t> out;
  for (size_t i = 0; i < events.size(); ++i) {
    // A parent started before its child: any other index is not one of this trace's events.
    if (events[i].name != "aten::_to_cpu" || events[i].parent < 0 || static_cast<size_t>(events[i].parent) >= i) {
      continue;
    }
    const auto leaf = static_cast<size_t>(events[i].parent);
    if (std::find(out.begin(), out.end(), leaf) == out.end()) out.push_back(leaf);
  }
  return out;
}

std::vector<std::string> fallback_ops(const std::vector<TraceEvent>& events) {
  std::vector<std::string> out;
  for (size_t leaf : fallback_events(events)) {
    const std::string& name = events[leaf].name;
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

}  // namespace mps_audit
