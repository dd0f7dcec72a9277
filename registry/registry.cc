// Queries on the registry result model.
#include "registry/registry.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/diagnostics.h"

namespace mps_audit {

std::array<size_t, kAllOpStatuses.size()> Registry::counts() const {
  std::array<size_t, kAllOpStatuses.size()> n{};
  for (const auto& op : ops) ++n[static_cast<size_t>(op.status)];
  return n;
}

std::string Registry::describe() const {
  if (origin == "live") return fmt::format("the live dispatcher of libtorch {}", torch_version);
  if (!torch_version.empty()) return fmt::format("native_functions.yaml of PyTorch {}", torch_version);
  return fmt::format("{}", path);
}

const RegistryEntry* Registry::find(const std::string& name) const {
  auto it = std::lower_bound(ops.begin(), ops.end(), name,
                             [](const RegistryEntry& e, const std::string& n) { return e.name < n; });
  return it != ops.end() && it->name == name ? &*it : nullptr;
}

void sort_entries(std::vector<RegistryEntry>& ops) {
  std::sort(ops.begin(), ops.end(), [](const RegistryEntry& a, const RegistryEntry& b) { return a.name < b.name; });
  for (size_t i = 1; i < ops.size(); ++i) {
    MPS_AUDIT_ASSERT(ops[i - 1].name != ops[i].name, "duplicate operator " + ops[i].name);
  }
}

std::string qualified_op_name(const std::string& ns, const std::string& name, const std::string& overload) {
  return overload.empty() ? fmt::format("{}::{}", ns, name) : fmt::format("{}::{}.{}", ns, name, overload);
}

}  // namespace mps_audit
