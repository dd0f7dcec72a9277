// Tests of the samples derived from a sample the CPU took to meet the conditions known MPS bugs depend on (Note
// [Condition samples]), of their views on a device (Note [Views on the target]) and of the records they make.
#include "probe/condition_samples.h"

#include <algorithm>
#include <stdexcept>

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>
#include <gtest/gtest.h>

#include "probe/probe_op.h"
#include "probe/recorded_samples.h"
#include "probe/sample_traits.h"

namespace mps_audit {
namespace {

c10::OperatorHandle op(const char* name, const char* overload = "") {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

SampleInputs sample(std::vector<c10::IValue> args) {
  SampleInputs s;
  s.name = "base";
  s.args = std::move(args);
  return s;
}

at::Tensor longs(std::vector<int64_t> v) {
  return at::tensor(v, at::TensorOptions().dtype(c10::kLong));
}

// The samples made, by condition name.
struct Made {
  std::vector<ConditionSample> all;
  size_t size() const { return all.size(); }
  size_t count(const std::string& name) const {
    return std::count_if(all.begin(), all.end(), [&](const auto& c) { return condition_name(c.condition) == name; });
  }
  const ConditionSample* at(const std::string& name) const {
    for (const auto& c : all) {
      if (condition_name(c.condition) == name) return &c;
    }
    throw std::out_of_range(name);
  }
};
Made by_name(std::vector<ConditionSample> made) {
  return Made{std::move(made)};
}

TEST(ConditionSamples, AnElementwiseOperatorGetsEveryConditionItTakes) {
  const c10::OperatorHandle add = op("aten::add", "Tensor");
  const at::Tensor x = at::randn({3, 4}), y = at::randn({3, 4});
  ConditionMemory memory;
  const auto made = by_name(condition_samples(add, c10::kFloat, sample({x, y, 1}), memory));
  ASSERT_EQ(made.size(), 5u);
  for (const char* name : {"view", "rank5", "size1025", "size32769", "cpu-scalar"}) {
    ASSERT_TRUE(made.count(name)) << name;
    EXPECT_EQ(made.at(name)->inputs.name, std::string("base+") + name);
  }
  // The view: the same values, non-contiguous and at a storage offset, kept as a view on its way to the target.
  const SampleInputs& view = made.at("view")->inputs;
  EXPECT_TRUE(view.keep_views);
  EXPECT_TRUE(at::equal(view.args[0].toTensor(), x));
  EXPECT_TRUE(at::equal(view.args[1].toTensor(), y));
  const SampleTraits v = sample_traits(add.schema(), view.args);
  EXPECT_TRUE(v.non_contiguous);
  EXPECT_TRUE(v.storage_offset);
  EXPECT_EQ(sample_traits(add.schema(), made.at("rank5")->inputs.args).max_rank, 5);
  EXPECT_EQ(made.at("rank5")->inputs.args[0].toTensor().sizes(), c10::IntArrayRef({2, 1, 1, 3, 4}));
  EXPECT_EQ(sample_traits(add.schema(), made.at("size1025")->inputs.args).max_size, kSmallerSize);
  EXPECT_EQ(made.at("size32769")->inputs.args[0].toTensor().sizes(), c10::IntArrayRef({1, kLargerSize}));
  // The size samples repeat the values in order.
  const at::Tensor big = made.at("size1025")->inputs.args[0].toTensor().reshape({-1});
  EXPECT_TRUE(at::equal(big.narrow(0, 0, 12), x.reshape({-1})));
  EXPECT_TRUE(at::equal(big.narrow(0, 12, 12), x.reshape({-1})));
  // The CPU scalar: other, as a 0-d tensor of its first value, stays on the CPU.
  const SampleInputs& scalar = made.at("cpu-scalar")->inputs;
  EXPECT_EQ(scalar.on_cpu, std::vector<size_t>{1});
  EXPECT_EQ(scalar.args[1].toTensor().dim(), 0);
  EXPECT_EQ(scalar.args[1].toTensor().item<float>(), y[0][0].item<float>());
  EXPECT_EQ(memory.refused, 0u);
}

// Note [Condition samples], "Cost": each condition in the dtypes the known bugs of its condition name.
TEST(ConditionSamples, EachConditionInTheDtypesItsKnownBugsName) {
  const c10::OperatorHandle neg = op("aten::neg");
  ConditionMemory memory;
  const auto in = [](c10::ScalarType t) { return sample({at::randn({3, 4}).to(t)}); };
  const auto names = [&](c10::ScalarType t) {
    std::vector<std::string> n;
    for (const auto& c : condition_samples(neg, t, in(t), memory)) n.emplace_back(condition_name(c.condition));
    return n;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(c10::kFloat), (V{"view", "rank5", "size1025", "size32769"}));
  EXPECT_EQ(names(c10::kLong), (V{"view", "size1025"}));
  EXPECT_EQ(names(c10::kInt), (V{"view", "rank5"}));
  EXPECT_EQ(names(c10::kBool), (V{"view", "rank5"}));
  for (const auto t : {c10::kHalf, c10::kBFloat16, c10::kShort, c10::kChar, c10::kByte, c10::kComplexFloat}) {
    EXPECT_TRUE(names(t).empty()) << t;
  }
}

TEST(ConditionSamples, NoneForOutVariantsOrOperatorsThatReadStorage) {
  ConditionMemory memory;
  const at::Tensor x = at::randn({3, 4});
  EXPECT_TRUE(
      condition_samples(op("aten::add", "out"), c10::kFloat, sample({x, x, 1, at::randn({3, 4})}), memory).empty());
  EXPECT_TRUE(condition_samples(op("aten::as_strided"), c10::kFloat,
                                sample({x, std::vector<int64_t>{2, 2}, std::vector<int64_t>{1, 2}, c10::IValue()}),
                                memory)
                  .empty());
}

TEST(ConditionSamples, ShapesOnlyWhereEveryTensorHasTheSameShape) {
  ConditionMemory memory;
  // mm(self, mat2): a matrix product's operands differ in shape; the view it gets.
  const auto mm =
      by_name(condition_samples(op("aten::mm"), c10::kFloat, sample({at::randn({3, 4}), at::randn({4, 2})}), memory));
  EXPECT_EQ(mm.size(), 1u);
  EXPECT_TRUE(mm.count("view"));
  // A backward operator's kernel may trust its caller for its arguments' shapes.
  const at::Tensor g = at::randn({3, 4});
  EXPECT_EQ(by_name(condition_samples(op("aten::tanh_backward"), c10::kFloat, sample({g, g}), memory)).size(), 1u);
}

TEST(ConditionSamples, ResultsThatGrowFasterThanTheirInputsGetNoSize) {
  // outer(self, vec2) of two 1,025-element vectors would make a million elements: checked on the meta device.
  ConditionMemory memory;
  const auto outer =
      by_name(condition_samples(op("aten::outer"), c10::kFloat, sample({at::randn({3}), at::randn({3})}), memory));
  EXPECT_FALSE(outer.count("size1025"));
  EXPECT_FALSE(outer.count("size32769"));
  EXPECT_NE(memory.refused & condition_bit(Condition::kSize1025), 0u);
  // What the operator refused is not tried again.
  EXPECT_FALSE(
      by_name(condition_samples(op("aten::outer"), c10::kLong, sample({longs({1, 2, 3}), longs({1, 2, 3})}), memory))
          .count("size1025"));
}

TEST(ConditionSamples, RepeatedIndicesWriteEqualValues) {
  ConditionMemory memory;
  // index_select reads: only the index changes.
  const at::Tensor self = at::randn({5, 3});
  const auto select = by_name(
      condition_samples(op("aten::index_select"), c10::kFloat, sample({self, int64_t{0}, longs({4, 0, 2})}), memory));
  ASSERT_TRUE(select.count("duplicate-indices"));
  const auto& dup = select.at("duplicate-indices")->inputs.args;
  EXPECT_TRUE(at::equal(dup[2].toTensor(), longs({4, 4, 2})));
  EXPECT_TRUE(sample_traits(op("aten::index_select").schema(), dup).duplicate_indices);
  // index_copy(self, dim, index, source): the last write wins, so the rows written through the repeated index match.
  const at::Tensor source = at::randn({3, 3});
  const auto copy = by_name(condition_samples(op("aten::index_copy"), c10::kFloat,
                                              sample({self, int64_t{0}, longs({4, 0, 2}), source}), memory));
  ASSERT_TRUE(copy.count("duplicate-indices"));
  const auto& written = copy.at("duplicate-indices")->inputs.args;
  EXPECT_TRUE(at::equal(written[2].toTensor(), longs({4, 4, 2})));
  EXPECT_TRUE(at::equal(written[3].toTensor()[0], written[3].toTensor()[1]));
  EXPECT_TRUE(at::equal(written[3].toTensor()[2], source[2]));
  // scatter(self, dim, index, src): positions repeated along dim, and the values sent there.
  const at::Tensor index = longs({0, 1, 2, 2, 0, 1}).view({2, 3});
  const at::Tensor src = at::randn({2, 3});
  const auto scatter = by_name(condition_samples(op("aten::scatter", "src"), c10::kFloat,
                                                 sample({at::randn({2, 3}), int64_t{1}, index, src}), memory));
  ASSERT_TRUE(scatter.count("duplicate-indices"));
  const auto& scattered = scatter.at("duplicate-indices")->inputs.args;
  const at::Tensor i = scattered[2].toTensor(), s = scattered[3].toTensor();
  EXPECT_TRUE(at::equal(i.select(1, 0), i.select(1, 1)));
  EXPECT_TRUE(at::equal(s.select(1, 0), s.select(1, 1)));
  // Indices already repeated meet the condition: no sample.
  EXPECT_FALSE(by_name(condition_samples(op("aten::index_select"), c10::kFloat,
                                         sample({self, int64_t{0}, longs({1, 1})}), memory))
                   .count("duplicate-indices"));
}

// The traits of the condition samples a record keeps apart from its own (Note [Conditional failures] in
// emu/known_bugs.cc): on the CPU target (the sample's own tensors), on the meta device (views rebuilt there, the CPU
// scalar left on the CPU), and alike one by one and in turns.
TEST(ConditionSamples, RecordsSayWhatTheSamplesWereLike) {
  set_recordings_choice("none");
  forget_operators();
  const Spec spec = parse_spec("", "s.yaml", {});
  ProbeTarget cpu;
  cpu.name = "cpu";
  const auto of = [](const ProbeResult& r, const char* condition) {
    for (const auto& c : r.conditions) {
      if (c.condition == condition) return c.traits;
    }
    ADD_FAILURE() << r.op << " has no " << condition << " sample";
    return SampleTraits();
  };
  const ProbeResult add = probe_op(cpu, spec, "aten::add.Tensor", "float32");
  EXPECT_EQ(to_string(add.verdict), "pass") << add.message;
  EXPECT_EQ(add.samples, 6);  // the synthesized one and five condition samples
  ASSERT_EQ(add.conditions.size(), 5u);
  for (const auto& c : add.conditions) EXPECT_EQ(to_string(c.verdict), "pass") << c.sample << ": " << c.message;
  // The record's own traits are its ordinary sample's.
  EXPECT_EQ(add.traits.max_rank, 2);
  EXPECT_FALSE(add.traits.non_contiguous);
  EXPECT_TRUE(of(add, "view").non_contiguous);
  EXPECT_TRUE(of(add, "view").storage_offset);
  EXPECT_EQ(of(add, "rank5").max_rank, 5);
  EXPECT_EQ(of(add, "size32769").max_size, kLargerSize);
  EXPECT_FALSE(of(add, "cpu-scalar").cpu_scalar);  // everything on the CPU
  ProbeTarget meta;
  meta.name = "meta";
  meta.device = c10::Device(c10::kMeta);
  const ProbeResult on_meta = probe_op(meta, spec, "aten::add.Tensor", "float32");
  EXPECT_TRUE(of(on_meta, "view").non_contiguous);
  EXPECT_TRUE(of(on_meta, "view").storage_offset);
  EXPECT_TRUE(of(on_meta, "cpu-scalar").cpu_scalar);
  // float16 has no condition sample of its own but those few operators take: the traits are its samples'.
  const ProbeResult half = probe_op(cpu, spec, "aten::neg", "float16");
  EXPECT_EQ(half.samples, 1);
  EXPECT_EQ(half.traits.max_rank, 2);
  set_recordings_choice("");
}

}  // namespace
}  // namespace mps_audit
