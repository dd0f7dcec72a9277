// Tests of the registry diff.
#include "registry/registry_diff.h"

#include <gtest/gtest.h>

namespace mps_audit {
namespace {

Registry make(std::vector<std::pair<std::string, OpStatus>> ops) {
  Registry reg;
  reg.key = "MPS";
  reg.origin = "native_functions";
  for (auto& [name, status] : ops) reg.ops.push_back({name, status, "", "", "", ""});
  sort_entries(reg.ops);
  return reg;
}

std::vector<std::string> names(const std::vector<StatusChange>& changes) {
  std::vector<std::string> out;
  for (const auto& c : changes) out.push_back(c.name);
  return out;
}

TEST(RegistryDiff, SortsChangesIntoGainedLostAndOther) {
  const Registry before = make({{"aten::a", OpStatus::kNone},
                                {"aten::b", OpStatus::kNative},
                                {"aten::c", OpStatus::kCpuFallback},
                                {"aten::d", OpStatus::kNative},
                                {"aten::e", OpStatus::kCompositeImplicit},
                                {"aten::gone", OpStatus::kNative},
                                {"aten::same", OpStatus::kNative}});
  const Registry after = make({{"aten::a", OpStatus::kNative},
                               {"aten::b", OpStatus::kCpuFallback},
                               {"aten::c", OpStatus::kNative},
                               {"aten::d", OpStatus::kNone},
                               {"aten::e", OpStatus::kCompositeExplicit},
                               {"aten::new", OpStatus::kNative},
                               {"aten::new_none", OpStatus::kNone},
                               {"aten::same", OpStatus::kNative}});
  const RegistryDiff d = diff_registries(before, after);
  EXPECT_EQ(names(d.gained), std::vector<std::string>({"aten::a", "aten::c", "aten::new"}));
  EXPECT_EQ(names(d.lost), std::vector<std::string>({"aten::b", "aten::d", "aten::gone"}));
  EXPECT_EQ(names(d.other), std::vector<std::string>({"aten::e", "aten::new_none"}));
  EXPECT_FALSE(d.gained[2].before.has_value());
  EXPECT_FALSE(d.lost[2].after.has_value());
  EXPECT_EQ(d.old_total, 7u);
  EXPECT_EQ(d.new_total, 8u);
}

TEST(RegistryDiff, IdenticalRegistriesHaveNoChanges) {
  const Registry r = make({{"aten::a", OpStatus::kNative}, {"aten::b", OpStatus::kNone}});
  const RegistryDiff d = diff_registries(r, r);
  EXPECT_TRUE(d.gained.empty() && d.lost.empty() && d.other.empty());
}

}  // namespace
}  // namespace mps_audit
