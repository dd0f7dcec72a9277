// Verdict names and ordering.
#include "probe/result.h"

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
  }
  return "error";
}

std::optional<Verdict> parse_verdict(std::string_view name) {
  for (Verdict v : kAllVerdicts) {
    if (to_string(v) == name) return v;
  }
  return std::nullopt;
}

Verdict worse(Verdict a, Verdict b) {
  return static_cast<int>(a) >= static_cast<int>(b) ? a : b;
}

}  // namespace mps_audit
