// A model's target trace as per-operator calls: see trace_summary.h.
#include "model/trace_summary.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mps_audit {
namespace {

std::string dtype_of(const TraceEvent& e) {
  if (e.inputs.empty()) return "none";
  return e.inputs.front().substr(0, e.inputs.front().find('['));
}

// What at::native::cpu_fallback calls, directly inside the operator that fell back, to bring results back to the
// device: _copy_from_and_resize for the arguments it wrote, .to(device) (to.dtype_layout or to.device) for the
// others. to.dtype, which it calls too, converts on the CPU and copies nothing between devices.
bool copies_back(const std::string& name) {
  return name == "aten::_copy_from_and_resize" || name == "aten::to.dtype_layout" || name == "aten::to.device" ||
         name == "aten::_to_copy";
}

}  // namespace

std::vector<ModelOpCall> summarize_trace(const std::vector<TraceEvent>& events,
                                         const std::vector<std::pair<std::string, size_t>>& phase_ends,
                                         long failed_event, const std::string& failure, bool failure_unsupported,
                                         const CallMismatch& mismatch) {
  const size_t n = events.size();
  // The calls: operators at the top level, or directly inside autograd's per-node wrapper events
  // ("autograd::engine::evaluate_function: LinearBackward0"), which are not operators themselves.
  auto wrapper = [&](long i) { return i >= 0 && events[static_cast<size_t>(i)].name.rfind("autograd::", 0) == 0; };
  std::vector<size_t> root(n);
  std::vector<bool> is_call(n, false);
  for (size_t i = 0; i < n; ++i) {
    const long p = events[i].parent;
    is_call[i] = !wrapper(static_cast<long>(i)) && (p < 0 || static_cast<size_t>(p) >= i || wrapper(p));
    root[i] = (is_call[i] || p < 0 || static_cast<size_t>(p) >= i) ? i : root[static_cast<size_t>(p)];
  }
  // The leaves that fell back (Note [Operators that fell back] in probe/dispatch_trace.cc), by the call they are in,
  // and what their fallbacks copied: the arguments to the CPU (aten::_to_cpu's inputs), the results back.
  std::set<size_t> leaves;
  std::map<size_t, std::set<std::string>> fallback_ops;
  for (size_t leaf : fallback_events(events)) {
    leaves.insert(leaf);
    fallback_ops[root[leaf]].insert(events[leaf].name);
  }
  std::map<size_t, int64_t> to_cpu, from_cpu;
  for (size_t i = 0; i < n; ++i) {
    const TraceEvent& e = events[i];
    if (e.parent < 0 || !leaves.count(static_cast<size_t>(e.parent))) continue;
    const size_t r = root[i];
    if (e.name == "aten::_to_cpu") {
      for (int64_t b : e.input_bytes) to_cpu[r] += b;
    } else if (copies_back(e.name) && !e.input_bytes.empty()) {
      from_cpu[r] += e.input_bytes.front();  // the CPU result (the destination is the second input, if any)
    }
  }
  auto phase_of = [&](size_t i) {
    for (const auto& [phase, end] : phase_ends) {
      if (i < end) return phase;
    }
    // After the last phase: the audit's own calls (reading the gradients back), unless the pass failed.
    return phase_ends.empty() ? std::string("forward") : std::string();
  };

  const long failed_call =
      failed_event >= 0 && static_cast<size_t>(failed_event) < n ? static_cast<long>(root[failed_event]) : -1;
  std::map<std::pair<std::string, std::string>, ModelOpCall> by_op;
  std::vector<std::pair<std::string, std::string>> order;
  for (size_t i = 0; i < n; ++i) {
    const TraceEvent& e = events[i];
    if (!is_call[i]) continue;
    const std::string phase = phase_of(i);
    if (phase.empty()) continue;
    auto key = std::make_pair(e.name, phase);
    auto [it, fresh] = by_op.try_emplace(key);
    ModelOpCall& c = it->second;
    if (fresh) {
      order.push_back(key);
      c.op = e.name;
      c.phase = phase;
      c.dtype = dtype_of(e);
      c.status = CallStatus::kNative;
    }
    ++c.calls;
    c.seconds += e.seconds;
    const std::string signature = fmt::format("{}", fmt::join(e.inputs, ", "));
    if (c.input_signatures.size() < 8 &&
        std::find(c.input_signatures.begin(), c.input_signatures.end(), signature) == c.input_signatures.end()) {
      c.input_signatures.push_back(signature);
    }
    if (auto f = fallback_ops.find(i); f != fallback_ops.end()) {
      if (c.status == CallStatus::kNative) c.status = CallStatus::kFallback;
      for (const auto& op : f->second) {
        if (std::find(c.fallback_ops.begin(), c.fallback_ops.end(), op) == c.fallback_ops.end()) {
          c.fallback_ops.push_back(op);
        }
      }
      c.bytes_to_cpu += to_cpu[i];
      c.bytes_from_cpu += from_cpu[i];
    }
    if (static_cast<long>(i) == mismatch.event) {
      c.mismatch = true;
      c.mismatch_message = mismatch.comparison.message;
      c.max_abs_error = mismatch.comparison.max_abs_error;
      c.max_rel_error = mismatch.comparison.max_rel_error;
    }
    if (static_cast<long>(i) == failed_call) {
      c.status = CallStatus::kFailed;
      c.message = failure;
      c.unsupported = failure_unsupported;
    }
  }
  std::vector<ModelOpCall> out;
  for (const auto& key : order) out.push_back(std::move(by_op[key]));
  auto rank = [](const ModelOpCall& c) {
    return c.status == CallStatus::kFallback ? 0 : c.status == CallStatus::kFailed ? 1 : c.mismatch ? 2 : 3;
  };
  std::stable_sort(out.begin(), out.end(), [&](const ModelOpCall& a, const ModelOpCall& b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return a.seconds > b.seconds;
  });
  return out;
}

}  // namespace mps_audit
