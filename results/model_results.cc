// The sums and words of the model audit's results: see model_results.h.
#include "results/model_results.h"

#include <algorithm>

namespace mps_audit {

std::string_view to_string(CallStatus status) {
  switch (status) {
    case CallStatus::kNative: return "native";
    case CallStatus::kFallback: return "fallback";
    case CallStatus::kFailed: return "failed";
    case CallStatus::kCrash: return "crash";
    case CallStatus::kTimeout: return "timeout";
  }
  return "native";
}

bool ModelOpCall::failed() const {
  return status == CallStatus::kFailed || status == CallStatus::kCrash || status == CallStatus::kTimeout;
}

namespace {

// The sum of `field` over the operator calls, of those that fell back only when `fallbacks_only`.
template <typename T>
T sum_over(const std::vector<ModelOpCall>& ops, T ModelOpCall::*field, bool fallbacks_only = false) {
  T total{};
  for (const auto& c : ops) {
    if (!fallbacks_only || c.status == CallStatus::kFallback) total += c.*field;
  }
  return total;
}

}  // namespace

int64_t ModelAudit::calls() const {
  return sum_over(ops, &ModelOpCall::calls);
}
int64_t ModelAudit::fallback_calls() const {
  return sum_over(ops, &ModelOpCall::calls, true);
}
double ModelAudit::op_seconds() const {
  return sum_over(ops, &ModelOpCall::seconds);
}
double ModelAudit::fallback_seconds() const {
  return sum_over(ops, &ModelOpCall::seconds, true);
}
int64_t ModelAudit::bytes_to_cpu() const {
  return sum_over(ops, &ModelOpCall::bytes_to_cpu);
}
int64_t ModelAudit::bytes_from_cpu() const {
  return sum_over(ops, &ModelOpCall::bytes_from_cpu);
}
bool ModelAudit::gradients_match() const {
  return !gradients.empty() && mismatching(gradients) == 0;
}
bool ModelAudit::updated_match() const {
  return !updated.empty() && mismatching(updated) == 0;
}

size_t mismatching(const std::vector<NamedMatch>& matches) {
  return static_cast<size_t>(
      std::count_if(matches.begin(), matches.end(), [](const NamedMatch& m) { return !m.match.match; }));
}

int64_t RecordedCall::calls_at(const std::string& site) const {
  int64_t n = 0;
  if (const auto it = sites.find(site); it != sites.end()) {
    for (const auto& [phase, count] : it->second) n += count;
  }
  return n;
}

}  // namespace mps_audit
