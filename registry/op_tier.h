// Which operators matter most to people, for ordering every list of operators a reader sees: the Core ATen opset,
// then the other public operators, then internal ones, then those that exist only for PyTorch's own tests (Note
// [Operator tiers]).
#pragma once

#include <array>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "registry/native_functions.h"

namespace mps_audit {

enum class OpTier { kCore, kPublic, kInternal, kTest };  // in the order lists show them
inline constexpr std::array<OpTier, 4> kAllOpTiers = {OpTier::kCore, OpTier::kPublic, OpTier::kInternal, OpTier::kTest};

std::string_view to_string(OpTier tier);   // "core", "public", "internal", "test"
std::string_view tier_title(OpTier tier);  // "Core ATen operators", "Other public operators", ...

// The Core ATen opset: the operators a release's native_functions.yaml tags `core`.
struct CoreOps {
  std::string release;        // whose native_functions.yaml; empty when no shipped release tags any
  std::set<std::string> ops;  // "aten::add.Tensor"
};
CoreOps core_ops_of(const std::vector<NativeFunctionDecl>& decls, const std::string& release);
// Of the newest shipped release (registry/release_data.h) that tags any operator `core` (releases before 2.0 tag
// none); read once per process for a given set of shipped releases. Throws UserError for a malformed file.
const CoreOps& shipped_core_ops();

// The tier of "aten::name.overload" (or "ns::name.overload"); `core` is usually shipped_core_ops().
OpTier op_tier(std::string_view op, const CoreOps& core);

}  // namespace mps_audit
