// Tests of what a sample's arguments are like (Note [Traits of a sample]) and of which failures an operand of another
// dtype explains, on crafted samples.
#include "probe/sample_traits.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <gtest/gtest.h>

namespace mps_audit {
namespace {

const c10::FunctionSchema& schema(const char* name, const char* overload = "") {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).schema();
}

at::Tensor longs(std::vector<int64_t> v) {
  return at::tensor(v, at::TensorOptions().dtype(c10::kLong));
}

TEST(SampleTraits, SizesAndRanksOfEveryTensorArgumentListsIncluded) {
  // cat(Tensor[] tensors, int dim=0)
  const c10::List<at::Tensor> list({at::ones({2, 3}), at::ones({4, 1, 7})});
  const SampleTraits t = sample_traits(schema("aten::cat"), {list, int64_t{0}});
  EXPECT_EQ(t.max_rank, 3);
  EXPECT_EQ(t.max_numel, 28);
  EXPECT_EQ(t.max_size, 7);
  EXPECT_FALSE(t.non_contiguous);
  EXPECT_FALSE(t.storage_offset);
  EXPECT_FALSE(t.empty);
}

TEST(SampleTraits, ViewsAreNonContiguousOrAtAnOffset) {
  const at::Tensor base = at::randn({4, 6});
  const auto& add = schema("aten::add", "Tensor");
  const SampleTraits transposed = sample_traits(add, {base.t(), base.t(), 1});
  EXPECT_TRUE(transposed.non_contiguous);
  EXPECT_FALSE(transposed.storage_offset);
  const SampleTraits narrowed = sample_traits(add, {base.narrow(0, 1, 3), base.narrow(0, 1, 3), 1});
  EXPECT_TRUE(narrowed.storage_offset);
  EXPECT_FALSE(narrowed.non_contiguous);  // whole rows: contiguous, one row in
  const SampleTraits gaps = sample_traits(add, {base.slice(1, 0, 6, 2), base.slice(1, 0, 6, 2), 1});
  EXPECT_TRUE(gaps.non_contiguous);
}

TEST(SampleTraits, ChannelsLastIsNotNonContiguous) {
  const at::Tensor nhwc = at::randn({2, 3, 4, 5}).contiguous(c10::MemoryFormat::ChannelsLast);
  const SampleTraits t = sample_traits(schema("aten::relu"), {nhwc});
  EXPECT_TRUE(t.channels_last);
  EXPECT_FALSE(t.non_contiguous);
  // A tensor contiguous both ways (one channel) is plainly contiguous.
  EXPECT_FALSE(sample_traits(schema("aten::relu"), {at::randn({2, 1, 4, 5})}).channels_last);
  const at::Tensor ndhwc = at::randn({2, 3, 2, 4, 5}).contiguous(c10::MemoryFormat::ChannelsLast3d);
  EXPECT_TRUE(sample_traits(schema("aten::relu"), {ndhwc}).channels_last);
}

TEST(SampleTraits, AnEmptyInputCountsAnEmptyOutTensorDoesNot) {
  // sin.out(Tensor self, *, Tensor(a!) out): the out tensor is resized before the kernel writes it.
  const auto& sin_out = schema("aten::sin", "out");
  EXPECT_FALSE(sample_traits(sin_out, {at::randn({3}), at::empty({0})}).empty);
  EXPECT_TRUE(sample_traits(sin_out, {at::empty({0, 3}), at::empty({0})}).empty);
}

TEST(SampleTraits, ACpuScalarBesideDeviceTensors) {
  const auto& add = schema("aten::add", "Tensor");
  const at::Tensor on_meta = at::empty({3, 4}, at::TensorOptions().device(c10::kMeta));
  const at::Tensor scalar = at::scalar_tensor(2.0);
  EXPECT_TRUE(sample_traits(add, {on_meta, scalar, 1}).cpu_scalar);
  // All on the CPU, or the 0-d tensor on the device too: no CPU scalar.
  EXPECT_FALSE(sample_traits(add, {at::randn({3, 4}), scalar, 1}).cpu_scalar);
  EXPECT_FALSE(sample_traits(add, {on_meta, scalar.to(c10::kMeta), 1}).cpu_scalar);
}

TEST(SampleTraits, KeywordOnlyArgumentsGivenAValueOtherThanTheirDefault) {
  // div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode)
  const auto& div = schema("aten::div", "Tensor_mode");
  const at::Tensor x = at::randn({3});
  EXPECT_EQ(sample_traits(div, {x, x, std::string("trunc")}).kwargs, std::vector<std::string>{"rounding_mode"});
  EXPECT_TRUE(sample_traits(div, {x, x, c10::IValue()}).kwargs.empty());
  // add.Tensor's alpha is keyword-only with default 1: set only when it is not 1.
  const auto& add = schema("aten::add", "Tensor");
  EXPECT_TRUE(sample_traits(add, {x, x, 1}).kwargs.empty());
  EXPECT_EQ(sample_traits(add, {x, x, 2}).kwargs, std::vector<std::string>{"alpha"});
  // A positional argument with a value is not a keyword-only one; out= is neither.
  const auto& sum = schema("aten::sum", "dim_IntList");
  EXPECT_EQ(sample_traits(sum, {x, std::vector<int64_t>{0}, true, c10::ScalarType::Double}).kwargs,
            std::vector<std::string>{"dtype"});
  EXPECT_TRUE(sample_traits(schema("aten::sin", "out"), {x, at::empty({0})}).kwargs.empty());
}

TEST(SampleTraits, ADtypeArgumentIsNamedAsTheLedgerNamesIt) {
  // cumsum(Tensor self, int dim, *, ScalarType? dtype=None): the dtype is an int in the call, a name in the traits.
  const auto& cumsum = schema("aten::cumsum");
  const at::Tensor x = longs({1, 1, 1});
  EXPECT_EQ(sample_traits(cumsum, {x, 0, c10::ScalarType::Int}).args.at("dtype"), std::vector<std::string>{"int32"});
  EXPECT_EQ(sample_traits(cumsum, {x, 0, c10::IValue()}).args.at("dtype"), std::vector<std::string>{"none"});
  EXPECT_EQ(sample_traits(cumsum, {x, 0}).args.at("dtype"), std::vector<std::string>{"none"});  // its default
  EXPECT_EQ(sample_traits(cumsum, {x, 0}).args.at("dim"), std::vector<std::string>{"0"});       // an int stays one
  // A loss's reduction (an int in the call) by Python's name; an optional tensor given or not.
  const auto& bce = schema("aten::binary_cross_entropy");
  const at::Tensor p = at::rand({2});
  const SampleTraits weighted = sample_traits(bce, {p, p, p, int64_t{1}});
  EXPECT_EQ(weighted.args.at("reduction"), std::vector<std::string>{"mean"});
  EXPECT_EQ(weighted.args.at("weight"), std::vector<std::string>{"tensor"});
  const SampleTraits plain = sample_traits(bce, {p, p, c10::IValue(), int64_t{0}});
  EXPECT_EQ(plain.args.at("reduction"), std::vector<std::string>{"none"});
  EXPECT_EQ(plain.args.at("weight"), std::vector<std::string>{"none"});
}

TEST(SampleTraits, AFactoryHasTheSizesOfWhatItMakes) {
  // randn(SymInt[] size, *, ScalarType? dtype=None, ...): no tensor argument; its sizes are the result's.
  const SampleTraits t = sample_traits(schema("aten::randn"), {std::vector<int64_t>{2, 1, 3, 4, 5}, c10::IValue(),
                                                               c10::IValue(), c10::IValue(), c10::IValue()});
  EXPECT_EQ(t.max_rank, 5);
  EXPECT_EQ(t.max_size, 5);
  EXPECT_EQ(t.max_numel, 120);
  EXPECT_EQ(t.max_bytes, 480);  // float32, the default dtype
  // An operator with a tensor argument keeps that tensor's: view's size is not a tensor's.
  EXPECT_EQ(sample_traits(schema("aten::view"), {at::ones({6}), std::vector<int64_t>{1, 2, 3}}).max_rank, 1);
}

TEST(SampleTraits, RepeatedAndOutOfRangeIndicesOfIndexArguments) {
  // index_select(Tensor self, int dim, Tensor index): the index's values are rows of self along dim.
  const auto& select = schema("aten::index_select");
  const at::Tensor self = at::randn({5, 3});
  const SampleTraits plain = sample_traits(select, {self, int64_t{0}, longs({0, 4, 2})});
  EXPECT_FALSE(plain.duplicate_indices);
  EXPECT_FALSE(plain.out_of_range_indices);
  EXPECT_TRUE(sample_traits(select, {self, int64_t{0}, longs({1, 3, 1})}).duplicate_indices);
  EXPECT_TRUE(sample_traits(select, {self, int64_t{0}, longs({0, 5})}).out_of_range_indices);
  EXPECT_TRUE(sample_traits(select, {self, int64_t{1}, longs({0, 3})}).out_of_range_indices);  // 3 columns
  // A negative index: index_select refuses it ("index out of range in self"); index_fill and take count it from the
  // end, as far back as the dimension's size.
  EXPECT_TRUE(sample_traits(select, {self, int64_t{1}, longs({-1, 2})}).out_of_range_indices);
  const auto& fill = schema("aten::index_fill", "int_Scalar");
  EXPECT_FALSE(sample_traits(fill, {self, int64_t{1}, longs({-3, 2}), 1.0}).out_of_range_indices);
  EXPECT_TRUE(sample_traits(fill, {self, int64_t{1}, longs({-4, 2}), 1.0}).out_of_range_indices);
  EXPECT_FALSE(sample_traits(schema("aten::take"), {self, longs({-15})}).out_of_range_indices);
  // A loss's class targets: [0, classes) but its ignore_index.
  const auto& nll = schema("aten::nll_loss_forward");
  const c10::IValue none;
  EXPECT_FALSE(
      sample_traits(nll, {self, longs({0, 2, 1, 2, 0}), none, int64_t{1}, int64_t{-100}}).out_of_range_indices);
  EXPECT_TRUE(sample_traits(nll, {self, longs({0, 3, 1, 2, 0}), none, int64_t{1}, int64_t{-100}}).out_of_range_indices);
  EXPECT_FALSE(sample_traits(nll, {self, longs({0, -1, 1, 2, 0}), none, int64_t{1}, int64_t{-1}}).out_of_range_indices);
  EXPECT_TRUE(
      sample_traits(nll, {self, longs({0, -1, 1, 2, 0}), none, int64_t{1}, int64_t{-100}}).out_of_range_indices);
  // index.Tensor(Tensor self, Tensor?[] indices): each entry indexes the dimension after the ones before it took.
  c10::List<c10::optional<at::Tensor>> indices;
  indices.push_back(c10::nullopt);
  indices.push_back(longs({2, 2}));
  const SampleTraits listed = sample_traits(schema("aten::index", "Tensor"), {self, indices});
  EXPECT_TRUE(listed.duplicate_indices);
  EXPECT_FALSE(listed.out_of_range_indices);  // 2 < 3 columns
  // embedding(Tensor weight, Tensor indices, ...): rows of the weight.
  const auto& embedding = schema("aten::embedding");
  EXPECT_TRUE(sample_traits(embedding, {self, longs({7}), int64_t{-1}, false, false}).out_of_range_indices);
  // Values are read from the CPU copy where the target's tensors have none (the meta device).
  const at::Tensor index = longs({1, 1});
  EXPECT_FALSE(sample_traits(select, {self, int64_t{0}, index.to(c10::kMeta)}).duplicate_indices);
  const std::vector<c10::IValue> cpu = {self, int64_t{0}, index};
  EXPECT_TRUE(sample_traits(select, {self, int64_t{0}, index.to(c10::kMeta)}, &cpu).duplicate_indices);
  // gather's and scatter's index: repeats within a slice along dim address one row twice; across slices they do not.
  const auto& gather = schema("aten::gather");
  const at::Tensor rows = longs({0, 1, 2, 0, 2, 1}).view({2, 3});
  EXPECT_FALSE(sample_traits(gather, {self, int64_t{1}, rows, false}).duplicate_indices);  // rows: 0 1 2, 0 2 1
  EXPECT_TRUE(sample_traits(gather, {self, int64_t{0}, rows, false}).duplicate_indices);   // the first column: 0 0
  // Written indices (sort's out=) are not index arguments.
  EXPECT_TRUE(index_arguments(schema("aten::sort", "values"),
                              {self, int64_t{0}, false, at::empty({0}), at::empty({0}, c10::kLong)})
                  .empty());
}

TEST(SampleTraits, AFailureAnOperandOfAnotherDtypeExplains) {
  const auto& mul = schema("aten::mul", "Tensor");
  const at::Tensor x = at::randn({3});
  const at::Tensor z = at::randn({3}, at::TensorOptions().dtype(c10::kComplexFloat));
  const std::string refusal = "MPS complex types are only supported on MacOS 14.0 or newer.";
  EXPECT_EQ(wide_operand(mul, {x, z}, c10::kFloat), c10::kComplexFloat);
  EXPECT_TRUE(failed_for_other_dtype(mul, {x, z}, c10::kFloat, Verdict::kUnsupported, refusal));
  EXPECT_TRUE(failed_for_other_dtype(mul, {x, z}, c10::kFloat, Verdict::kError, "anything"));
  // A wrong result is not a refusal; a complex record's complex operands are its own; float32 operands are the
  // record's own.
  EXPECT_FALSE(failed_for_other_dtype(mul, {x, z}, c10::kFloat, Verdict::kMismatch, refusal));
  EXPECT_FALSE(failed_for_other_dtype(mul, {z, z}, c10::kComplexFloat, Verdict::kUnsupported, refusal));
  EXPECT_FALSE(failed_for_other_dtype(mul, {x, x}, c10::kFloat, Verdict::kUnsupported, refusal));
  // An operand of another dtype that is not a wide one explains the failure only where the message names it.
  const auto& select = schema("aten::index_select");
  const std::vector<c10::IValue> args = {x, int64_t{0}, longs({0, 1})};
  EXPECT_FALSE(wide_operand(select, args, c10::kFloat).has_value());
  EXPECT_TRUE(failed_for_other_dtype(select, args, c10::kFloat, Verdict::kError, "int64 indices are not supported"));
  EXPECT_TRUE(failed_for_other_dtype(select, args, c10::kFloat, Verdict::kError, "expected Int but got Long"));
  EXPECT_FALSE(failed_for_other_dtype(select, args, c10::kFloat, Verdict::kError, "index out of range"));
}

}  // namespace
}  // namespace mps_audit
