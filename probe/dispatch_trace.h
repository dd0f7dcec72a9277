// A trace of the operators the dispatcher ran, from RecordFunction callbacks: what really ran, including the
// aten::_to_cpu that marks a CPU fallback and the leaf operators a composite decomposed into.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include <cstdint>

namespace mps_audit {

struct TraceEvent {
  std::string name;  // "aten::add.Tensor"; the overload omitted when empty
  int depth = 0;     // 0 for operators called from outside any traced operator
};

// Records every operator that starts on any thread while the object lives. One at a time per process.
class DispatchTrace {
 public:
  DispatchTrace();
  ~DispatchTrace();
  DispatchTrace(const DispatchTrace&) = delete;
  DispatchTrace& operator=(const DispatchTrace&) = delete;

  std::vector<TraceEvent> events() const;
  bool ran(const std::string& name) const;
  // Names of the operators that had `child` directly inside them (e.g. which ops ran aten::_to_cpu).
  std::vector<std::string> parents_of(const std::string& child) const;

 private:
  uint64_t handle_ = 0;
};

}  // namespace mps_audit
