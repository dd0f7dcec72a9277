// Diffing two runs record by record; see Note [What counts as a regression].
#include "results/diff.h"

#include "results/analysis.h"

#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

namespace mps_audit {
namespace {

bool fails(Verdict v) {
  return v == Verdict::kMismatch || v == Verdict::kError || v == Verdict::kCrash || v == Verdict::kTimeout;
}

int rank(Verdict v) {
  switch (v) {
    case Verdict::kPass:
    case Verdict::kXpass: return 0;
    case Verdict::kFallback: return 1;
    case Verdict::kUnsupported:
    case Verdict::kXfail:
    case Verdict::kKnownFailure: return 2;
    default: return 3;
  }
}

}  // namespace

std::vector<std::string> environment_differences(const RunEnvironment& a, const RunEnvironment& b) {
  std::vector<std::string> out;
  const auto field = [&](const char* name, const std::string& x, const std::string& y) {
    if (x != y) out.push_back(fmt::format("{}: {} -> {}", name, x.empty() ? "(none)" : x, y.empty() ? "(none)" : y));
  };
  field("torch_version", a.torch_version, b.torch_version);
  field("target", a.target, b.target);
  field("emulator", a.emulator, b.emulator);
  field("fallback_mode", a.fallback_mode, b.fallback_mode);
  field("spec", a.spec, b.spec);
  field("spec_hash", a.spec_hash, b.spec_hash);
  return out;
}

namespace {

// A conditional failure's identity within its record: the condition sample and the known bug behind it.
std::string conditional_key(const ConditionalFailure& f) {
  return f.sample + "|" + f.bug + "|" + f.condition;
}

std::string conditional_message(const ConditionalFailure& f) {
  return fmt::format("{} under {}{}{}", f.failure, f.condition, evidence_words(f),
                     f.bug.empty() ? "" : fmt::format(", {} {}", f.bug, f.link));
}

// The conditional failures `now` has that `base` had not, record by record.
std::vector<RecordChange> new_conditional_failures(const Results& base, const Results& now) {
  std::set<std::string> had;
  for (const auto& f : conditional_failures(base.records)) had.insert(f.op + "|" + f.dtype + "|" + conditional_key(f));
  std::vector<RecordChange> out;
  std::map<std::pair<std::string, std::string>, Verdict> was;
  for (const auto& r : base.records) was[{r.op, r.dtype}] = r.verdict;
  for (const auto& f : conditional_failures(now.records)) {
    if (had.count(f.op + "|" + f.dtype + "|" + conditional_key(f))) continue;
    const auto it = was.find({f.op, f.dtype});
    out.push_back({f.op, f.dtype, it == was.end() ? Verdict::kSkip : it->second, f.verdict, it != was.end(), true,
                   conditional_message(f)});
  }
  return out;
}

}  // namespace

RunDiff diff_runs(const Results& base, const Results& now, bool conditional_gate) {
  RunDiff d;
  d.gate_conditional = conditional_gate;
  d.conditional = new_conditional_failures(base, now);
  d.base_env = base.environment;
  d.new_env = now.environment;
  d.base_run = base.run;
  d.new_run = now.run;
  d.environment_differences = environment_differences(base.environment, now.environment);

  std::map<std::pair<std::string, std::string>, const ProbeResult*> before;
  for (const auto& r : base.records) before[{r.op, r.dtype}] = &r;
  for (const auto& r : now.records) {
    auto it = before.find({r.op, r.dtype});
    if (it == before.end()) {
      d.added.push_back({r.op, r.dtype, Verdict::kSkip, r.verdict, false, true, r.message});
      continue;
    }
    const Verdict was = it->second->verdict, is = r.verdict;
    before.erase(it);
    const RecordChange c{r.op, r.dtype, was, is, true, true, r.message};
    if (was == is) {
      ++d.unchanged;
    } else if (fails(is) && !fails(was)) {
      d.regressions.push_back(c);
    } else if (was == Verdict::kSkip) {
      d.newly_probed.push_back(c);
    } else if (is == Verdict::kSkip) {
      d.no_longer_probed.push_back(c);
    } else if (rank(is) > rank(was)) {
      d.regressions.push_back(c);
    } else if (rank(is) < rank(was)) {
      d.improvements.push_back(c);
    } else {
      d.changed.push_back(c);
    }
  }
  // What is left of the base disappeared; report it in the base's order.
  for (const auto& r : base.records) {
    if (!before.count({r.op, r.dtype})) continue;
    const RecordChange c{r.op, r.dtype, r.verdict, Verdict::kSkip, true, false, r.message};
    (r.verdict == Verdict::kSkip ? d.removed : d.regressions).push_back(c);
  }
  return d;
}

}  // namespace mps_audit
