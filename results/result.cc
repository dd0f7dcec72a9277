// Verdict names and ordering; what samples were like.
#include "results/result.h"

#include <algorithm>
#include <tuple>

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
    return std::tie(t.max_rank, t.max_numel, t.max_size, t.non_contiguous, t.storage_offset, t.duplicate_indices,
                    t.out_of_range_indices, t.cpu_scalar, t.empty, t.channels_last, t.kwargs);
  };
  return tie(*this) == tie(o);
}

void SampleTraits::merge(const SampleTraits& o) {
  max_rank = std::max(max_rank, o.max_rank);
  max_numel = std::max(max_numel, o.max_numel);
  max_size = std::max(max_size, o.max_size);
  non_contiguous |= o.non_contiguous;
  storage_offset |= o.storage_offset;
  duplicate_indices |= o.duplicate_indices;
  out_of_range_indices |= o.out_of_range_indices;
  cpu_scalar |= o.cpu_scalar;
  empty |= o.empty;
  channels_last |= o.channels_last;
  for (const auto& k : o.kwargs) {
    auto at = std::lower_bound(kwargs.begin(), kwargs.end(), k);
    if (at == kwargs.end() || *at != k) kwargs.insert(at, k);
  }
}

}  // namespace mps_audit
