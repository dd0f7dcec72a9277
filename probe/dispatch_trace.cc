// RecordFunction-based operator trace.
#include "probe/dispatch_trace.h"

#include <ATen/record_function.h>

#include "common/diagnostics.h"

namespace mps_audit {
namespace {

struct TraceState {
  std::mutex mutex;
  std::vector<TraceEvent> events;
  std::vector<std::string> parents;  // event index -> name of the enclosing op ("" at top level)
  bool active = false;
};

TraceState& state() {
  static TraceState s;
  return s;
}

thread_local std::vector<std::string> t_stack;

// "aten::cumsum.out": RecordFunction's name() omits the overload, its operator_name() has it.
std::string full_name(const at::RecordFunction& fn) {
  if (auto op = fn.operator_name()) {
    return op->overload_name.empty() ? op->name : op->name + "." + op->overload_name;
  }
  return fn.name();
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  const std::string name = full_name(fn);
  TraceState& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.events.push_back({name, static_cast<int>(t_stack.size())});
    s.parents.push_back(t_stack.empty() ? std::string() : t_stack.back());
  }
  t_stack.push_back(name);
  return nullptr;
}

void on_end(const at::RecordFunction&, at::ObserverContext*) {
  if (!t_stack.empty()) t_stack.pop_back();
}

}  // namespace

DispatchTrace::DispatchTrace() {
  TraceState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  MPS_AUDIT_ASSERT(!s.active, "one DispatchTrace at a time");
  s.active = true;
  s.events.clear();
  s.parents.clear();
  t_stack.clear();
  handle_ = at::addGlobalCallback(at::RecordFunctionCallback(&on_start, &on_end).scopes({at::RecordScope::FUNCTION}));
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

std::vector<std::string> DispatchTrace::parents_of(const std::string& child) const {
  std::lock_guard<std::mutex> lock(state().mutex);
  std::vector<std::string> out;
  for (size_t i = 0; i < state().events.size(); ++i) {
    if (state().events[i].name == child) out.push_back(state().parents[i]);
  }
  return out;
}

}  // namespace mps_audit
