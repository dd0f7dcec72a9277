// Tests of input synthesis and of one probe in this process (on the CPU target, which needs no worker).
#include "probe/inputs.h"

#include <ATen/core/Tensor.h>
#include <ATen/ops/equal.h>
#include <gtest/gtest.h>

#include "probe/probe_op.h"

namespace mps_audit {
namespace {

const c10::FunctionSchema& schema(const char* name, const char* overload = "") {
  return c10::Dispatcher::singleton().findOp({name, overload})->schema();
}

Spec spec_with(const std::string& text) {
  return parse_spec(text, "s.yaml", {"aten::sin", "aten::einsum", "aten::index_select", "aten::add.Tensor"});
}

TEST(Inputs, SynthesizesFromTheSchemaAndItsDefaults) {
  const Spec spec = spec_with("");
  const SampleInputs in = make_inputs(schema("aten::add", "Tensor"), at::kHalf, spec, nullptr, "k");
  ASSERT_TRUE(in.unsupported.empty()) << in.unsupported;
  ASSERT_EQ(in.args.size(), 3u);
  EXPECT_EQ(in.args[0].toTensor().sizes(), c10::IntArrayRef({3, 4}));
  EXPECT_EQ(in.args[0].toTensor().scalar_type(), at::kHalf);
  EXPECT_EQ(in.args[2].toScalar().toLong(), 1);  // alpha's default
  const SampleInputs out = make_inputs(schema("aten::sin", "out"), at::kFloat, spec, nullptr, "k");
  EXPECT_EQ(out.args[1].toTensor().numel(), 0);  // out=: empty, the operator resizes it
}

TEST(Inputs, AreDeterministicPerKey) {
  const Spec spec = spec_with("");
  const auto a = make_inputs(schema("aten::sin"), at::kFloat, spec, nullptr, "aten::sin/float32");
  const auto b = make_inputs(schema("aten::sin"), at::kFloat, spec, nullptr, "aten::sin/float32");
  const auto c = make_inputs(schema("aten::sin"), at::kFloat, spec, nullptr, "aten::sin/float16");
  EXPECT_TRUE(at::equal(a.args[0].toTensor(), b.args[0].toTensor()));
  EXPECT_FALSE(at::equal(a.args[0].toTensor(), c.args[0].toTensor()));
}

TEST(Inputs, IntegerAndBooleanDtypesGetValuesOfTheirKind) {
  const Spec spec = spec_with("");
  const at::Tensor u8 = make_inputs(schema("aten::sin"), at::kByte, spec, nullptr, "k").args[0].toTensor();
  EXPECT_GE(u8.min().item<int64_t>(), 0);
  const at::Tensor b = make_inputs(schema("aten::sin"), at::kBool, spec, nullptr, "k").args[0].toTensor();
  EXPECT_EQ(b.scalar_type(), at::kBool);
}

TEST(Inputs, SpecSamplesOverrideAndIndicesStayInRange) {
  const Spec spec = spec_with(R"(
ops:
  aten::index_select:
    samples:
      - name: rows
        args: {self: {shape: [5, 4]}, dim: 0, index: {shape: [7], domain: index, high: 5}}
)");
  const OpSpec* entry = spec.find("aten::index_select");
  const SampleInputs in = make_inputs(schema("aten::index_select"), at::kFloat, spec, &entry->samples[0], "k");
  EXPECT_EQ(in.name, "rows");
  const at::Tensor index = in.args[2].toTensor();
  EXPECT_EQ(index.scalar_type(), at::kLong);
  EXPECT_GE(index.min().item<int64_t>(), 0);
  EXPECT_LT(index.max().item<int64_t>(), 5);
}

TEST(Inputs, SaysWhatItCannotSynthesize) {
  const SampleInputs in = make_inputs(schema("aten::einsum"), at::kFloat, spec_with(""), nullptr, "k");
  EXPECT_NE(in.unsupported.find("'equation'"), std::string::npos) << in.unsupported;
}

TEST(ProbeOp, CpuSelfCheckPassesAndSkipsSayWhy) {
  const Spec spec = spec_with("ops:\n  aten::sin: {xfail: [{reason: demo, targets: [cpu]}]}\n");
  const ProbeTarget cpu{"cpu", c10::Device(c10::kCPU)};
  const ProbeResult add = probe_op(cpu, spec, "aten::add.Tensor", "float32");
  EXPECT_EQ(add.verdict, Verdict::kPass) << add.message;
  EXPECT_EQ(add.samples, 1);
  const ProbeResult sin = probe_op(cpu, spec, "aten::sin", "float32");
  EXPECT_EQ(sin.verdict, Verdict::kXpass);  // passes, though the spec expects it to fail on cpu
  const ProbeResult einsum = probe_op(cpu, spec, "aten::einsum", "float32");
  EXPECT_EQ(einsum.verdict, Verdict::kSkip);
  EXPECT_NE(einsum.message.find("cannot synthesize"), std::string::npos);
  EXPECT_EQ(probe_op(cpu, spec, "aten::no_such_op", "float32").message, "no such operator in this libtorch");
}

}  // namespace
}  // namespace mps_audit
