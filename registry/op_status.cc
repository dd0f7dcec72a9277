// Names of the operator statuses, as written in every output format.
#include "registry/op_status.h"

namespace mps_audit {

std::string_view to_string(OpStatus status) {
  switch (status) {
    case OpStatus::kNative: return "native";
    case OpStatus::kCpuFallback: return "cpu_fallback";
    case OpStatus::kCompositeExplicit: return "composite_explicit";
    case OpStatus::kCompositeImplicit: return "composite_implicit";
    case OpStatus::kNone: return "none";
  }
  return "none";
}

std::optional<OpStatus> parse_op_status(std::string_view name) {
  for (OpStatus s : kAllOpStatuses) {
    if (to_string(s) == name) return s;
  }
  return std::nullopt;
}

}  // namespace mps_audit
