// Live classification from c10::Dispatcher, in the order of OperatorEntry::computeDispatchTableEntryWithDebug.
#include "registry/live_registry.h"

#include <sstream>
#include <unordered_map>

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DispatchKey.h>
#include <c10/core/DispatchKeySet.h>
#include <fmt/format.h>

#include "common/text.h"
#include "common/torch_compat.h"
#include "registry/dispatch_keys.h"

namespace mps_audit {
namespace {

c10::DispatchKey parse_key(const std::string& name) {
  if (!is_known_dispatch_key(name)) {
    throw UserError(fmt::format("unknown dispatch key '{}'{}", name, did_you_mean(name, known_dispatch_keys())));
  }
  return c10::parseDispatchKey(name);
}

OpStatus classify(const c10::OperatorHandle& op, c10::DispatchKey key) {
  if (op.hasKernelForDispatchKey(key)) return OpStatus::kNative;
  using K = c10::DispatchKey;
  const std::pair<K, OpStatus> aliases[] = {
      {K::CompositeExplicitAutogradNonFunctional, OpStatus::kCompositeExplicit},
      {K::CompositeExplicitAutograd, OpStatus::kCompositeExplicit},
      {K::CompositeImplicitAutogradNestedTensor, OpStatus::kCompositeImplicit},
      {K::CompositeImplicitAutograd, OpStatus::kCompositeImplicit},
  };
  for (const auto& [alias, status] : aliases) {
    if (c10::isIncludedInAlias(key, alias) && op.hasKernelForDispatchKey(alias)) return status;
  }
  return OpStatus::kNone;
}

}  // namespace

Registry scan_live_dispatcher(const std::string& key_name, const std::vector<ExtraRegistration>& extra) {
  const c10::DispatchKey key = parse_key(key_name);
  std::unordered_map<std::string, const ExtraRegistration*> hand;
  for (const auto& e : extra) hand.emplace(e.op, &e);

  Registry reg;
  reg.key = key_name;
  reg.origin = "live";
  reg.torch_version = compat::kTorchVersion;
  auto& dispatcher = c10::Dispatcher::singleton();
  for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
    auto op = dispatcher.findOp(name);
    if (!op) continue;
    RegistryEntry e;
    e.name = c10::toString(name);
    e.status = classify(*op, key);
    e.source = "dispatcher";
    if (op->hasSchema()) {
      std::ostringstream schema;
      schema << op->schema();
      e.schema = schema.str();
    }
    if (auto it = hand.find(e.name); it != hand.end() && e.status == OpStatus::kNative) {
      e.source = it->second->where.to_string();
      if (it->second->kind == ExtraKind::kCpuFallback) {
        e.status = OpStatus::kCpuFallback;
        e.note = "registered by hand; always runs the CPU fallback";
      } else if (it->second->kind == ExtraKind::kStub) {
        e.note = "registered by hand as a stub that raises";
      }
    }
    reg.ops.push_back(std::move(e));
  }
  sort_entries(reg.ops);
  return reg;
}

}  // namespace mps_audit
