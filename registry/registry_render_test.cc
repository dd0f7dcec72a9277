// Golden-file tests of every registry output format (tests/data/golden/); MPS_AUDIT_UPDATE_GOLDEN=1 rewrites them.
#include "registry/registry_render.h"

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace mps_audit {
namespace {

Registry sample_registry() {
  Registry reg;
  reg.key = "MPS";
  reg.origin = "native_functions";
  reg.path = "data/pytorch-9.9.9/native_functions.yaml";
  reg.extra_path = "data/pytorch-9.9.9/mps_extra_registrations.tsv";
  reg.torch_version = "9.9.9";
  reg.ops = {
      {"aten::add.Tensor", OpStatus::kNative, "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
       "add_out_mps", "native_functions.yaml:10", "kernel of its structured delegate add.out"},
      {"aten::linear", OpStatus::kCompositeImplicit, "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
       "", "native_functions.yaml:20", "no dispatch section: CompositeImplicitAutograd"},
      {"aten::nonzero", OpStatus::kCpuFallback, "nonzero(Tensor self) -> Tensor", "", "mps_extra_registrations.tsv:5:1",
       "registered by hand; always runs the CPU fallback"},
      {"aten::or|pipe", OpStatus::kNone, "", "", "native_functions.yaml:30", ""},
      {"aten::zeros_like", OpStatus::kCompositeExplicit, "zeros_like(Tensor self) -> Tensor", "zeros_like",
       "native_functions.yaml:40", ""},
  };
  return reg;
}

RegistryDiff sample_diff() {
  RegistryDiff d;
  d.key = "MPS";
  d.old_label = "native_functions.yaml of PyTorch 1.0.0";
  d.new_label = "native_functions.yaml of PyTorch 2.0.0";
  d.old_total = 3;
  d.new_total = 4;
  d.gained = {{"aten::sin", OpStatus::kNone, OpStatus::kNative}, {"aten::new_op", std::nullopt, OpStatus::kNative}};
  d.lost = {{"aten::cos", OpStatus::kNative, OpStatus::kCpuFallback}};
  d.other = {{"aten::old_op", OpStatus::kNone, std::nullopt}};
  return d;
}

TEST(RegistryRenderGolden, Text) {
  testing::expect_golden("registry.txt", render_registry(sample_registry(), RegistryFormat::kText));
}

TEST(RegistryRenderGolden, TextListingChosenStatuses) {
  RegistryRenderOptions options;
  options.statuses = {OpStatus::kNone, OpStatus::kCpuFallback};
  testing::expect_golden("registry-none-cpu_fallback.txt",
                         render_registry(sample_registry(), RegistryFormat::kText, options));
}

TEST(RegistryRenderGolden, Json) {
  testing::expect_golden("registry.json", render_registry(sample_registry(), RegistryFormat::kJson));
}

TEST(RegistryRenderGolden, Markdown) {
  testing::expect_golden("registry.md", render_registry(sample_registry(), RegistryFormat::kMarkdown));
}

TEST(RegistryRenderGolden, DiffInEveryFormat) {
  testing::expect_golden("registry-diff.txt", render_registry_diff(sample_diff(), RegistryFormat::kText));
  testing::expect_golden("registry-diff.json", render_registry_diff(sample_diff(), RegistryFormat::kJson));
  testing::expect_golden("registry-diff.md", render_registry_diff(sample_diff(), RegistryFormat::kMarkdown));
}

// The JSON contract other tools rely on (ARCHITECTURE.md), checked field by field rather than by text.
TEST(RegistryRender, JsonKeepsTheContract) {
  RegistryRenderOptions only_native;
  only_native.statuses = {OpStatus::kNative};
  const auto doc = nlohmann::json::parse(render_registry(sample_registry(), RegistryFormat::kJson, only_native));
  ASSERT_TRUE(doc["ops"].is_array());
  ASSERT_EQ(doc["ops"].size(), 1u);
  EXPECT_EQ(doc["ops"][0]["name"], "aten::add.Tensor");
  EXPECT_EQ(doc["ops"][0]["status"], "native");
  EXPECT_EQ(doc["summary"]["total"], 5);  // the summary always covers every operator
  EXPECT_EQ(doc["summary"]["cpu_fallback"], 1);
  EXPECT_EQ(doc["key"], "MPS");
  EXPECT_EQ(doc["schema_version"], 1);
}

TEST(RegistryRender, ParsesFormatNames) {
  EXPECT_EQ(parse_registry_format("md"), RegistryFormat::kMarkdown);
  EXPECT_EQ(parse_registry_format("json"), RegistryFormat::kJson);
  EXPECT_FALSE(parse_registry_format("html").has_value());
}

}  // namespace
}  // namespace mps_audit
