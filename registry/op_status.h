// How an operator is served for one dispatch key: the registry's classification of each operator.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace mps_audit {

// In the dispatcher's resolution order (OperatorEntry::computeDispatchTableEntryWithDebug): a kernel
// registered for the key wins, then the composite alias keys, then the backend fallback.
enum class OpStatus {
  kNative,             // a kernel is registered for the key
  kCpuFallback,        // registered for the key, but that kernel is known to run the CPU fallback
  kCompositeExplicit,  // CompositeExplicitAutograd(NonFunctional): one kernel for all backends, via other ops
  kCompositeImplicit,  // CompositeImplicitAutograd: decomposes into other ops, each dispatched again
  kNone,               // nothing: reaches the key's backend fallback (or fails)
};

inline constexpr std::array<OpStatus, 5> kAllOpStatuses = {OpStatus::kNative, OpStatus::kCpuFallback,
                                                           OpStatus::kCompositeExplicit, OpStatus::kCompositeImplicit,
                                                           OpStatus::kNone};

// "native", "cpu_fallback", "composite_explicit", "composite_implicit", "none" (the JSON contract's names).
std::string_view to_string(OpStatus status);
std::optional<OpStatus> parse_op_status(std::string_view name);

}  // namespace mps_audit
