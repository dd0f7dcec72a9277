// A trace of the operators the dispatcher ran, from RecordFunction callbacks: what really ran, including the
// aten::_to_cpu that marks a CPU fallback and the leaf operators a composite decomposed into; and from it, which
// operators fell back.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include <cstddef>
#include <cstdint>

#include <ATen/core/ivalue.h>

namespace mps_audit {

struct TraceEvent {
  std::string name;  // "aten::add.Tensor"; the overload omitted when empty
  int depth = 0;     // 0 for operators called from outside any traced operator
  long parent = -1;  // index of the enclosing event (on the same thread), -1 at the top level
  // Filled only with TraceOptions::details:
  std::vector<std::string> inputs;   // each tensor input (also inside lists): "float32[4, 3]"
  std::vector<int64_t> input_bytes;  // the bytes of each of those tensors
  double seconds = 0;                // from start to end, including the operators inside
  // Filled only with TraceOptions::keep_call_outputs, for calls: a CPU copy of what the call returned.
  std::vector<c10::IValue> outputs;
};

struct TraceOptions {
  // Input shapes, dtypes and sizes, and each operator's time: costlier, so off for the prober's many probes.
  bool details = false;
  // Copies to the CPU what each call returned, to compare two runs call by call. A call is an operator with no
  // traced operator around it, or directly inside one of autograd's node events ("autograd::engine::...").
  bool keep_call_outputs = false;
};

// Records every operator that starts on any thread while the object lives. One at a time per process.
class DispatchTrace {
 public:
  DispatchTrace();
  explicit DispatchTrace(TraceOptions options);
  ~DispatchTrace();
  DispatchTrace(const DispatchTrace&) = delete;
  DispatchTrace& operator=(const DispatchTrace&) = delete;

  std::vector<TraceEvent> events() const;
  bool ran(const std::string& name) const;

 private:
  uint64_t handle_ = 0;
};

// The events whose operators fell back to the CPU, by Note [Operators that fell back] in dispatch_trace.cc: each
// operator that ran aten::_to_cpu directly inside it, once, in the order the fallbacks began.
std::vector<size_t> fallback_events(const std::vector<TraceEvent>& events);

// Their operators' names ("aten::cumsum.out"), each once, in the same order.
std::vector<std::string> fallback_ops(const std::vector<TraceEvent>& events);

}  // namespace mps_audit
