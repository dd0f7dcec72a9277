// Merge-walk of two sorted registries.
#include "registry/registry_diff.h"

#include "common/diagnostics.h"

namespace mps_audit {

RegistryDiff diff_registries(const Registry& before, const Registry& after) {
  MPS_AUDIT_ASSERT(before.key == after.key, "diffing registries of different keys");
  RegistryDiff diff;
  diff.key = after.key;
  diff.old_label = before.describe();
  diff.new_label = after.describe();
  diff.old_total = before.ops.size();
  diff.new_total = after.ops.size();

  auto record = [&](const std::string& name, std::optional<OpStatus> was, std::optional<OpStatus> now) {
    const bool native_before = was == OpStatus::kNative;
    const bool native_after = now == OpStatus::kNative;
    StatusChange change{name, was, now};
    if (native_after && !native_before) {
      diff.gained.push_back(std::move(change));
    } else if (native_before && !native_after) {
      diff.lost.push_back(std::move(change));
    } else if (was != now) {
      diff.other.push_back(std::move(change));
    }
  };
  size_t i = 0, j = 0;
  while (i < before.ops.size() || j < after.ops.size()) {
    if (j == after.ops.size() || (i < before.ops.size() && before.ops[i].name < after.ops[j].name)) {
      record(before.ops[i].name, before.ops[i].status, std::nullopt);
      ++i;
    } else if (i == before.ops.size() || after.ops[j].name < before.ops[i].name) {
      record(after.ops[j].name, std::nullopt, after.ops[j].status);
      ++j;
    } else {
      record(after.ops[j].name, before.ops[i].status, after.ops[j].status);
      ++i;
      ++j;
    }
  }
  return diff;
}

}  // namespace mps_audit
