// A model audit's calls as results.json's records: see model_records.h.
#include "model/model_records.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "emu/expected_verdicts.h"

namespace mps_audit {

std::vector<ProbeResult> model_records(const ModelAudit& audit) {
  const std::string& mode = audit.environment.expectations_mode;
  const emu::ExpectationMode expecting = mode == "predict" ? emu::ExpectationMode::kPredict
                                         : mode == "check" ? emu::ExpectationMode::kCheck
                                                           : emu::ExpectationMode::kOff;
  std::map<std::pair<std::string, std::string>, std::optional<ExpectationNote>> notes;  // each record's first call's
  std::map<std::pair<std::string, std::string>, ProbeResult> by_key;
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& c : audit.ops) {
    const auto key = std::make_pair(c.op, c.dtype);
    auto [it, fresh] = by_key.try_emplace(key);
    ProbeResult& r = it->second;
    if (fresh) {
      order.push_back(key);
      r.op = c.op;
      r.dtype = c.dtype;
      r.verdict = Verdict::kPass;
    }
    Verdict v = Verdict::kPass;
    if (c.status == CallStatus::kFallback) v = Verdict::kFallback;
    if (c.status == CallStatus::kFailed) v = c.unsupported ? Verdict::kUnsupported : Verdict::kError;
    if (c.status == CallStatus::kCrash) v = Verdict::kCrash;
    if (c.status == CallStatus::kTimeout) v = Verdict::kTimeout;
    if (c.mismatch) {
      v = worse(v, Verdict::kMismatch);
      r.message = "the first call whose outputs differ from the CPU's: " + c.mismatch_message;
      r.max_abs_error = c.max_abs_error;
      r.max_rel_error = c.max_rel_error;
    }
    r.verdict = worse(r.verdict, v);
    for (const auto& f : c.fallback_ops) {
      if (std::find(r.fallback_ops.begin(), r.fallback_ops.end(), f) == r.fallback_ops.end()) {
        r.fallback_ops.push_back(f);
      }
    }
    if (c.failed()) r.message = c.message;
    r.sample = r.sample.empty() ? c.phase : r.sample + "," + c.phase;  // where the model called it
    if (!notes[key] && c.expectation) notes[key] = c.expectation;
    r.samples += static_cast<int>(c.calls);
    r.seconds += c.seconds;
  }
  std::vector<ProbeResult> out;
  for (const auto& key : order) {
    ProbeResult r = std::move(by_key[key]);
    if (r.verdict == Verdict::kFallback) r.message = fmt::format("ran on the CPU: {}", fmt::join(r.fallback_ops, ", "));
    r.basis = audit.environment.emulator.empty() ? kBasisKernel : kBasisRegistry;
    if (const auto& note = notes[key]) emu::apply_expectation(r, *note, expecting);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace mps_audit
