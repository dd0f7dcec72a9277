// Operator tiers: see op_tier.h.
#include "registry/op_tier.h"

#include <map>
#include <mutex>

#include "registry/release_data.h"

namespace mps_audit {

// Note [Operator tiers]
// A reader wants the operators a model is made of before PyTorch's plumbing, so lists of operators (reports'
// fallback and worst-offender tables, the HTML matrix, the coverage page) come in four tiers, each shown apart:
//  1. core: the Core ATen opset, the operators native_functions.yaml tags `core` (the set that export and every
//     backend target), read from the newest shipped release that tags any, so a new release brings its own;
//  2. public: every other operator whose name does not start with `_`, and Python's operator methods (`__and__`,
//     `__lshift__`, `__rshift__`: a dunder name is the public `&`, `<<`, `>>`);
//  3. internal: a name starting with `_` (`_softmax`, `_foreach_add`, `_fused_adam_`): called by other operators
//     or by libraries, not by users;
//  4. test: operators that exist only for PyTorch's own tests. In native_functions.yaml those are the `_test_*`
//     family ("this function is only for testing": `_test_optional_intlist`, `_test_check_tensor`,
//     `_test_autograd_multiple_dispatch`, ...) and `_foobar` (test_python_dispatch.py's aux function), with their
//     out= variants. `_fake_quantize_*` is not one of them (fake quantization is a training feature),
//     nor `_nested_get_jagged_dummy` (nested tensors use it).
// The tier depends on the name and the core set only, so a results.json of any age orders the same way.

namespace {

// "aten::_test_optional_intlist.out" -> "_test_optional_intlist"
std::string_view base_name(std::string_view op) {
  if (const size_t colons = op.find("::"); colons != std::string_view::npos) op.remove_prefix(colons + 2);
  return op.substr(0, op.find('.'));
}

bool is_test_only(std::string_view name) {
  return name.rfind("_test_", 0) == 0 || name == "_foobar";
}

}  // namespace

std::string_view to_string(OpTier tier) {
  switch (tier) {
    case OpTier::kCore: return "core";
    case OpTier::kPublic: return "public";
    case OpTier::kInternal: return "internal";
    case OpTier::kTest: return "test";
  }
  return "?";
}

std::string_view tier_title(OpTier tier) {
  switch (tier) {
    case OpTier::kCore: return "Core ATen operators";
    case OpTier::kPublic: return "Other public operators";
    case OpTier::kInternal: return "Internal operators";
    case OpTier::kTest: return "Test operators";
  }
  return "?";
}

CoreOps core_ops_of(const std::vector<NativeFunctionDecl>& decls, const std::string& release) {
  CoreOps core;
  for (const auto& d : decls) {
    if (d.has_tag("core")) core.ops.insert(d.qualified_name());
  }
  if (!core.ops.empty()) core.release = release;
  return core;
}

const CoreOps& shipped_core_ops() {
  static std::mutex mutex;
  static std::map<std::string, CoreOps> by_releases;  // by the shipped release folders, newest first
  const std::vector<ShippedRelease> shipped = shipped_releases();
  std::string key;
  for (auto it = shipped.rbegin(); it != shipped.rend(); ++it) key += it->dir + "\n";
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = by_releases.find(key); it != by_releases.end()) return it->second;
  CoreOps core;
  for (auto it = shipped.rbegin(); it != shipped.rend() && core.ops.empty(); ++it) {
    core = core_ops_of(read_native_functions(resolve_release(it->dir, "MPS").native_functions), it->version);
  }
  return by_releases.emplace(key, std::move(core)).first->second;
}

OpTier op_tier(std::string_view op, const CoreOps& core) {
  if (core.ops.count(std::string(op))) return OpTier::kCore;
  const std::string_view name = base_name(op);
  if (is_test_only(name)) return OpTier::kTest;
  if (name.rfind("__", 0) == 0 || name.empty() || name[0] != '_') return OpTier::kPublic;
  return OpTier::kInternal;
}

}  // namespace mps_audit
