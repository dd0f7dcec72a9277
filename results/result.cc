// Verdict names and ordering; what samples were like.
#include "results/result.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mps_audit {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kFallback: return "fallback";
    case Verdict::kMismatch: return "mismatch";
    case Verdict::kUnsupported: return "unsupported";
    case Verdict::kError: return "error";
    case Verdict::kCrash: return "crash";
    case Verdict::kTimeout: return "timeout";
    case Verdict::kSkip: return "skip";
    case Verdict::kXfail: return "xfail";
    case Verdict::kXpass: return "xpass";
    case Verdict::kKnownFailure: return "known_failure";
  }
  return "error";
}

std::optional<Verdict> parse_verdict(std::string_view name) {
  for (Verdict v : kAllVerdicts) {
    if (to_string(v) == name) return v;
  }
  return std::nullopt;
}

size_t verdict_index(Verdict v) {
  for (size_t i = 0; i < kAllVerdicts.size(); ++i) {
    if (kAllVerdicts[i] == v) return i;
  }
  return 0;
}

Verdict worse(Verdict a, Verdict b) {
  return static_cast<int>(a) >= static_cast<int>(b) ? a : b;
}

std::string_view skip_reason(const ProbeResult& r) {
  if (r.verdict != Verdict::kSkip) return "";
  const std::string& m = r.message;
  const auto has = [&](const char* text) { return m.find(text) != std::string::npos; };
  if (m.rfind("spec: ", 0) == 0) return "spec";
  // The tool's own limit: it cannot hold or compare what the target gave (NotJudged in common/diagnostics.h).
  if (m.rfind("not judged: ", 0) == 0) return "not_judged";
  // What the linked libtorch cannot show of an emulated release (Note [Kernels the linked libtorch lacks]), or an
  // input it cannot make (named tensors, gone in 2.14).
  if (m.rfind("not probed: the recording's CPU chose", 0) == 0) return "recording_device";
  if (m.rfind("not probed: ", 0) == 0 || has("named tensors do not exist in this libtorch")) return "linked_libtorch";
  if (m.rfind("cannot synthesize", 0) == 0) return "no_inputs";
  if (has("CPU run killed") || has("CPU run did not finish")) return "cpu_crash";
  if (has("CPU gives different results from run to run")) return "cpu_unstable";
  if (has("the CPU takes this operator's inputs in ")) return "cpu_dtype";  // Note [Rejected in one dtype]
  // No kernel, or a stub that raises whatever it is given (an overload named tensors do not support yet, a hook for
  // out-of-tree backends, an overload removed in favour of another), or a CPU path that needs a backend this
  // libtorch lacks (pin_memory needs CUDA).
  if ((has("Could not run '") && has("' backend")) || has("not built with") || has("not compiled with") ||
      has("without ATen_cuda") || has("in place of a dimension index but it does not yet support this behavior") ||
      has("is not yet supported with named tensors") || has("is no longer supported") ||
      has("You are likely triggering this with tensor backend other than")) {
    return "no_cpu_kernel";
  }
  for (const char* dtype_words :
       {"not implemented for '", "can't be cast to the desired output type", "scalar type", "floating point",
        "floating-point", "complex", "integral", "Integer division", "the operation's result requires dtype"}) {
    if (has(dtype_words)) return "cpu_dtype";
  }
  return "cpu_rejects_inputs";
}

bool SampleTraits::operator==(const SampleTraits& o) const {
  auto tie = [](const SampleTraits& t) {
    return std::tie(t.max_rank, t.max_numel, t.max_size, t.max_bytes, t.non_contiguous, t.storage_offset,
                    t.duplicate_indices, t.out_of_range_indices, t.cpu_scalar, t.empty, t.channels_last, t.nan, t.inf,
                    t.values_unknown, t.kwargs, t.args);
  };
  return tie(*this) == tie(o);
}

namespace {

// Adds `v` to the sorted `set`, once.
void add_sorted(std::vector<std::string>& set, const std::string& v) {
  auto at = std::lower_bound(set.begin(), set.end(), v);
  if (at == set.end() || *at != v) set.insert(at, v);
}

}  // namespace

void SampleTraits::merge(const SampleTraits& o) {
  max_rank = std::max(max_rank, o.max_rank);
  max_numel = std::max(max_numel, o.max_numel);
  max_size = std::max(max_size, o.max_size);
  max_bytes = std::max(max_bytes, o.max_bytes);
  non_contiguous |= o.non_contiguous;
  storage_offset |= o.storage_offset;
  duplicate_indices |= o.duplicate_indices;
  out_of_range_indices |= o.out_of_range_indices;
  cpu_scalar |= o.cpu_scalar;
  empty |= o.empty;
  channels_last |= o.channels_last;
  nan |= o.nan;
  inf |= o.inf;
  values_unknown |= o.values_unknown;
  for (const auto& k : o.kwargs) add_sorted(kwargs, k);
  for (const auto& [name, values] : o.args) {
    for (const auto& v : values) add_sorted(args[name], v);
  }
}

std::string bug_kind_words(const std::string& kind) {
  if (kind == "wrong_result") return "wrong results";
  if (kind == "crash") return "a crash";
  if (kind == "hang") return "a hang";
  if (kind == "error") return "an error";
  return kind;
}

std::string when_words(const std::string& when) {
  static const std::pair<const char*, const char*> kWords[] = {{"non_contiguous", "non-contiguous"},
                                                               {"storage_offset", "at a storage offset"},
                                                               {"channels_last", "channels-last"},
                                                               {"duplicate_indices", "repeated indices"},
                                                               {"out_of_range_indices", "out-of-range indices"},
                                                               {"cpu_scalar", "a CPU scalar operand"},
                                                               {"empty", "empty"},
                                                               {"nan", "NaN values"},
                                                               {"inf", "infinite values"},
                                                               {"other", "as its thread says"}};
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= when.size()) {
    const size_t end = std::min(when.find(" and ", start), when.size());
    std::string atom = when.substr(start, end - start);
    for (const auto& [name, words] : kWords) {
      if (atom == name) atom = words;
    }
    if (atom.rfind("rank_ge:", 0) == 0) atom = "rank " + atom.substr(8) + " or more";
    if (atom.rfind("size_gt:", 0) == 0) atom = "a dimension over " + atom.substr(8);
    if (atom.rfind("numel_gt:", 0) == 0) atom = "over " + atom.substr(9) + " elements";
    if (atom.rfind("bytes_gt:", 0) == 0) atom = "over " + atom.substr(9) + " bytes";
    if (atom.rfind("arg:", 0) == 0) atom = atom.substr(4);
    out.push_back(atom);
    start = end + 5;
  }
  return fmt::format("{}", fmt::join(out, ", "));
}

std::string bug_condition_words(const KnownBugNote& b) {
  return b.when == "any" ? "for every input" : "under a condition: " + when_words(b.when);
}

std::string fixed_words(const std::string& fixed_in, const std::string& fix_candidate, const std::string& as_of) {
  if (fixed_in != "unknown") return "fixed in " + fixed_in;
  const std::string unknown = as_of.empty() ? "not known fixed" : "not known fixed as of " + as_of;
  if (fix_candidate.empty()) return unknown;
  return unknown + " (a fix proposed, its merge unseen: " + fix_candidate + ")";
}

std::string fixed_words(const KnownBugNote& b) {
  return fixed_words(b.fixed_in, b.fix_candidate);
}

std::string known_bug_brief(const KnownBugNote& b, const std::string& id) {
  return fmt::format("{} ({} {}; {})", id, bug_kind_words(b.kind), bug_condition_words(b), fixed_words(b));
}

bool conditional_failure(const ConditionOutcome& c) {
  switch (c.verdict) {
    case Verdict::kMismatch:
    case Verdict::kUnsupported:
    case Verdict::kError:
    case Verdict::kCrash:
    case Verdict::kTimeout:
    case Verdict::kKnownFailure:
    case Verdict::kXfail: return true;
    default: return false;
  }
}

bool has_conditional_failure(const ProbeResult& r) {
  if (r.verdict != Verdict::kPass && r.verdict != Verdict::kFallback && r.verdict != Verdict::kXpass) return false;
  return std::any_of(r.conditions.begin(), r.conditions.end(), conditional_failure) ||
         std::any_of(r.known_bugs.begin(), r.known_bugs.end(),
                     [](const KnownBugNote& b) { return b.applies && b.condition.empty(); });
}

}  // namespace mps_audit
