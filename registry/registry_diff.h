// What changed for one dispatch key between two registries (two releases, or a release and a live libtorch).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "registry/registry.h"

namespace mps_audit {

struct StatusChange {
  std::string name;
  std::optional<OpStatus> before;  // nullopt: the operator does not exist in the old registry
  std::optional<OpStatus> after;   // nullopt: the operator does not exist in the new registry
};

struct RegistryDiff {
  std::string key;
  std::string old_label, new_label;  // Registry::describe() of each side
  size_t old_total = 0, new_total = 0;
  std::vector<StatusChange> gained;  // native now, not before (or did not exist)
  std::vector<StatusChange> lost;    // native before, not now (or removed)
  std::vector<StatusChange> other;   // every other change: added or removed operators, other status moves
};

// Both registries must be classified for the same key; the changes come sorted by name.
RegistryDiff diff_registries(const Registry& before, const Registry& after);

}  // namespace mps_audit
