// Tests of the operator tiers (Note [Operator tiers]).
#include "registry/op_tier.h"

#include <cstdlib>
#include <memory>

#include <gtest/gtest.h>

#include "common/paths.h"
#include "test_support.h"

namespace mps_audit {
namespace {

const char* const kYaml = R"(
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  tags: [core, pointwise]

- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  tags: pointwise

- func: sin(Tensor self) -> Tensor
  tags: [core, pointwise]

- func: _softmax(Tensor self, int dim, bool half_to_float) -> Tensor
  tags: core
)";

TEST(OpTier, CoreIsWhatTheYamlTagsCore) {
  const CoreOps core = core_ops_of(parse_native_functions(kYaml, "nf.yaml"), "9.0.0");
  EXPECT_EQ(core.release, "9.0.0");
  EXPECT_EQ(core.ops, (std::set<std::string>{"aten::add.Tensor", "aten::sin", "aten::_softmax"}));
  EXPECT_EQ(op_tier("aten::add.Tensor", core), OpTier::kCore);
  EXPECT_EQ(op_tier("aten::sin", core), OpTier::kCore);
  // Tagged core though its name starts with `_`: core wins.
  EXPECT_EQ(op_tier("aten::_softmax", core), OpTier::kCore);
  // Another overload of a core operator is not core.
  EXPECT_EQ(op_tier("aten::add.out", core), OpTier::kPublic);
  EXPECT_EQ(op_tier("aten::sin.out", core), OpTier::kPublic);
  EXPECT_TRUE(
      core_ops_of(parse_native_functions("- func: cos(Tensor self) -> Tensor\n", "f"), "1.0.0").release.empty());
}

TEST(OpTier, NamesDecideTheOtherTiers) {
  const CoreOps none;
  EXPECT_EQ(op_tier("aten::add.Tensor", none), OpTier::kPublic);
  EXPECT_EQ(op_tier("aten::__and__.Tensor", none), OpTier::kPublic);
  EXPECT_EQ(op_tier("aten::__ilshift__.Scalar", none), OpTier::kPublic);
  EXPECT_EQ(op_tier("prims::sin", none), OpTier::kPublic);
  EXPECT_EQ(op_tier("aten::_compute_linear_combination", none), OpTier::kInternal);
  EXPECT_EQ(op_tier("aten::_foreach_add_.List", none), OpTier::kInternal);
  EXPECT_EQ(op_tier("aten::_fake_quantize_learnable_per_tensor_affine", none), OpTier::kInternal);
  EXPECT_EQ(op_tier("aten::_nested_get_jagged_dummy", none), OpTier::kInternal);
  EXPECT_EQ(op_tier("aten::_foobar", none), OpTier::kTest);
  EXPECT_EQ(op_tier("aten::_foobar.out", none), OpTier::kTest);
  EXPECT_EQ(op_tier("aten::_test_optional_filled_intlist", none), OpTier::kTest);
  EXPECT_EQ(op_tier("aten::_test_autograd_multiple_dispatch.fullcoverage", none), OpTier::kTest);
  // Only the `_test_` prefix: an operator that merely has "test" in its name is not a test operator.
  EXPECT_EQ(op_tier("aten::_testing_only_not", none), OpTier::kInternal);
  for (OpTier t : kAllOpTiers) EXPECT_FALSE(tier_title(t).empty());
}

// The newest shipped release that tags any operator decides; one that tags none (as releases before 2.0) is passed
// over.
TEST(OpTier, ShippedCoreOpsAreTheNewestTaggingReleases) {
  testing::TempDir data;
  make_directories(data.path() + "/pytorch-99.0.0");
  data.write("pytorch-99.0.0/native_functions.yaml", kYaml);
  struct DataDir {  // $MPS_AUDIT_DATA_DIR for as long as it lives
    explicit DataDir(const std::string& dir) { ::setenv("MPS_AUDIT_DATA_DIR", dir.c_str(), 1); }
    ~DataDir() { ::unsetenv("MPS_AUDIT_DATA_DIR"); }
  };
  auto data_dir = std::make_unique<DataDir>(data.path());
  const CoreOps newest = shipped_core_ops();
  EXPECT_EQ(newest.release, "99.0.0");
  EXPECT_EQ(newest.ops.size(), 3u);
  EXPECT_EQ(op_tier("aten::sin", newest), OpTier::kCore);

  data.write("pytorch-99.0.0/native_functions.yaml", "- func: sin(Tensor self) -> Tensor\n");
  make_directories(data.path() + "/pytorch-98.0.0");
  data.write("pytorch-98.0.0/native_functions.yaml", kYaml);
  const CoreOps tagged = shipped_core_ops();
  EXPECT_EQ(tagged.release, "98.0.0");

  data_dir.reset();
  // The shipped releases of the source tree: the newest of them that tags any, with operators of its own.
  const CoreOps shipped = shipped_core_ops();
  EXPECT_NE(shipped.release, "99.0.0");
  EXPECT_FALSE(shipped.release.empty());
  EXPECT_GT(shipped.ops.size(), 100u);
  EXPECT_EQ(op_tier(*shipped.ops.begin(), shipped), OpTier::kCore);
}

}  // namespace
}  // namespace mps_audit
