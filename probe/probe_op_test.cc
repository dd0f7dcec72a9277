// Tests of how the prober finds the index outputs of an operator from its schema.
#include "probe/probe_op.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/ones.h>
#include <gtest/gtest.h>

#include "common/torch_compat.h"

namespace mps_audit {
namespace {

const c10::FunctionSchema& schema_of(const char* name, const char* overload) {
  const auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
  return op.schema();
}

TEST(IndexSource, ReturnsNamedIndicesAndTheArgumentsThatAliasThem) {
  const at::Tensor x = at::ones({2, 3});
  // max.dim_max(self, dim, keepdim, *, Tensor(a!) max, Tensor(b!) max_values) -> (values, indices)
  const IndexSource s =
      index_source(schema_of("aten::max", "dim_max"), {x, int64_t{1}, false, at::ones({0}), at::ones({0})});
  EXPECT_TRUE(s.input.is_same(x));
  EXPECT_EQ(s.dim, 1);
  EXPECT_EQ(s.index_outputs, (std::vector<size_t>{1, 3}));  // returns, then written arguments
}

TEST(IndexSource, EveryOutputOfAnArgOperator) {
  const IndexSource s = index_source(schema_of("aten::argmax", ""), {at::ones({2, 3}), c10::IValue(), false});
  EXPECT_FALSE(s.dim.has_value());
  EXPECT_EQ(s.index_outputs, (std::vector<size_t>{0}));
}

TEST(IndexSource, ADimensionNameMeansThatDimension) {
  if (!compat::kNamedTensors) GTEST_SKIP() << compat::kNoNamedTensors;
  const at::Tensor x = at::ones({2, 3});
  compat::set_dimension_names(x, {"dimname::a", "dimname::b"});
  const IndexSource s = index_source(schema_of("aten::median", "names_dim"), {x, std::string("dimname::b"), false});
  EXPECT_EQ(s.dim, 1);
}

TEST(IndexSource, NoIndicesInAReduction) {
  const IndexSource s = index_source(schema_of("aten::max", ""), {at::ones({2, 3})});
  EXPECT_TRUE(s.index_outputs.empty());
}

}  // namespace
}  // namespace mps_audit
