// A run's conditional failures: records that pass for their ordinary samples and fail under a condition (Note
// [Conditional failures] in emu/known_bugs.cc), as the reports list them apart from the failures.
#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "results/analysis.h"

namespace mps_audit {

std::string condition_words(const std::string& condition) {
  if (condition == "view") return "a non-contiguous view at a storage offset";
  if (condition == "rank5") return "rank 5";
  if (condition == "size1025") return "a dimension of 1,025";
  if (condition == "size32769") return "a dimension of 32,769";
  if (condition == "duplicate-indices") return "repeated indices";
  if (condition == "cpu-scalar") return "a CPU scalar operand";
  if (condition == "repro") return "the thread's own call";
  if (condition.empty()) return "its own samples";
  return condition;
}

namespace {

const KnownBugNote* bug_named(const ProbeResult& r, const std::string& id) {
  const auto it =
      std::find_if(r.known_bugs.begin(), r.known_bugs.end(), [&](const KnownBugNote& b) { return b.id == id; });
  return it == r.known_bugs.end() ? nullptr : &*it;
}

void describe_bug(ConditionalFailure& f, const KnownBugNote& b) {
  f.bug = b.id;
  f.link = b.source;
  f.seen_in = b.seen_in;
  f.fixed_in = b.fixed_in;
  f.fix_candidate = b.fix_candidate;
  f.summary = b.summary;
  if (f.failure.empty()) f.failure = bug_kind_words(b.kind);
}

}  // namespace

std::vector<ConditionalFailure> conditional_failures(const ProbeResult& r) {
  std::vector<ConditionalFailure> out;
  if (!has_conditional_failure(r)) return out;
  for (const ConditionOutcome& c : r.conditions) {
    if (!conditional_failure(c)) continue;
    // One row for each known bug the condition met, or one for what the target gave there itself.
    const std::vector<std::string> ids = c.known_bugs.empty() ? std::vector<std::string>{""} : c.known_bugs;
    for (const std::string& id : ids) {
      ConditionalFailure f;
      f.op = r.op;
      f.dtype = r.dtype;
      f.verdict = r.verdict;
      f.sample = c.sample;
      f.condition = condition_words(c.condition);
      // What the target gave, where it failed there itself; else what the known bug predicts.
      f.limit = c.basis == kBasisLimits;
      f.observed = (c.basis.empty() || f.limit) && c.verdict != Verdict::kXfail;
      if (f.observed) {
        f.failure = std::string(to_string(c.verdict));
        f.message = c.message;
      }
      if (const KnownBugNote* b = id.empty() ? nullptr : bug_named(r, id)) {
        describe_bug(f, *b);
        // A bug's own call stands for its condition: say what that is.
        if (c.condition == "repro" && b->when != "other") {
          f.condition = fmt::format("its thread's call ({})", when_words(b->when));
        }
      }
      out.push_back(std::move(f));
    }
  }
  for (const KnownBugNote& b : r.known_bugs) {
    if (!b.applies || !b.condition.empty()) continue;
    ConditionalFailure f;
    f.op = r.op;
    f.dtype = r.dtype;
    f.verdict = r.verdict;
    f.condition = b.met_by;
    describe_bug(f, b);
    out.push_back(std::move(f));
  }
  return out;
}

std::string evidence_words(const ConditionalFailure& f) {
  if (!f.observed) return "";
  return f.limit ? " (an MPS limit, emulated)" : " (observed)";
}

std::vector<ConditionalFailure> conditional_failures(const std::vector<ProbeResult>& records) {
  std::vector<ConditionalFailure> out;
  for (const ProbeResult& r : records) {
    for (auto& f : conditional_failures(r)) out.push_back(std::move(f));
  }
  return out;
}

}  // namespace mps_audit
