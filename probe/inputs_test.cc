// Tests of input synthesis and of one probe in this process (on the CPU target, which needs no worker).
#include "probe/inputs.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/equal.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/frontend/function_schema_parser.h>

#include "common/torch_compat.h"
#include "probe/probe_op.h"
#include "probe/recorded_samples.h"

namespace mps_audit {
namespace {

const c10::FunctionSchema& schema(const char* name, const char* overload = "") {
  return c10::Dispatcher::singleton().findOp({name, overload})->schema();
}

Spec spec_with(const std::string& text) {
  return parse_spec(text, "s.yaml", {"aten::sin", "aten::einsum", "aten::index_select", "aten::add.Tensor"});
}

const Synthesis& variant(const c10::FunctionSchema& s, const std::string& name) {
  static std::vector<Synthesis> kept;
  for (const auto& v : synthesis_variants(s)) {
    if (v.name == name) {
      kept.push_back(v);
      return kept.back();
    }
  }
  throw std::runtime_error("no variant " + name);
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
  // out=: zeros shaped like the functional twin's return (sin.out -> sin)
  EXPECT_EQ(out.args[1].toTensor().sizes(), out.args[0].toTensor().sizes());
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
  const SampleInputs in = make_inputs(schema("aten::from_file"), at::kFloat, spec_with(""), nullptr, "k");
  EXPECT_NE(in.unsupported.find("'filename'"), std::string::npos) << in.unsupported;
}

TEST(Inputs, NdOperatorsGetImagesAndSizeListsOfTheirRank) {
  const auto& pool = schema("aten::max_pool3d");
  const SampleInputs in = make_inputs(pool, at::kFloat, spec_with(""), nullptr, "k", &variant(pool, "3-d"));
  ASSERT_TRUE(in.unsupported.empty()) << in.unsupported;
  EXPECT_EQ(in.args[0].toTensor().dim(), 5);       // batch, channels, depth, height, width
  EXPECT_EQ(in.args[1].toIntVector().size(), 3u);  // kernel_size
  const auto& pad = schema("aten::reflection_pad1d");
  const SampleInputs p = make_inputs(pad, at::kFloat, spec_with(""), nullptr, "k", &variant(pad, "1-d"));
  EXPECT_EQ(p.args[1].toIntVector(), (std::vector<int64_t>{1, 1}));  // two entries per spatial dimension
  // Operators without an N-d name get no such variant.
  for (const auto& v : synthesis_variants(schema("aten::sin"))) EXPECT_FALSE(v.spatial) << v.name;
}

TEST(Inputs, BackwardOperatorsTakeTheirArgumentsFromARunOfTheForward) {
  const auto& backward = schema("aten::upsample_nearest2d_backward");
  const SampleInputs in =
      make_inputs(backward, at::kFloat, spec_with(""), nullptr, "k", &variant(backward, "from-forward:2x3x4x4"));
  ASSERT_TRUE(in.unsupported.empty()) << in.unsupported;
  // (grad_output, output_size, input_size, scales_h, scales_w): the gradient has the forward output's shape.
  EXPECT_EQ(in.args[1].toIntVector(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(in.args[0].toTensor().sizes(), c10::IntArrayRef({2, 3, 2, 2}));
  EXPECT_EQ(in.args[2].toIntVector(), (std::vector<int64_t>{2, 3, 4, 4}));
  const ProbeTarget cpu{"cpu", c10::Device(c10::kCPU)};
  set_recordings_choice("none");  // synthesis, not the recorded OpInfo calls
  const ProbeResult r = probe_op(cpu, spec_with(""), "aten::max_pool2d_with_indices_backward", "float32");
  set_recordings_choice("");
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(r.sample.rfind("from-forward:", 0), 0u) << r.sample;
}

TEST(Inputs, StringsListsOfScalarsAndIndexLists) {
  const ProbeTarget cpu{"cpu", c10::Device(c10::kCPU)};
  const Spec spec = spec_with("");
  for (const char* op :
       {"aten::einsum", "aten::scatter_reduce.two", "aten::_foreach_add.ScalarList", "aten::index_put"}) {
    const ProbeResult r = probe_op(cpu, spec, op, "float32");
    EXPECT_EQ(r.verdict, Verdict::kPass) << op << ": " << r.message;
  }
}

// A Dimname overload gets named dimensions where the linked libtorch has named tensors, and is not probed, saying
// why, where it has none (2.14 on).
TEST(Inputs, DimensionNamesOrASkipThatSaysWhyWithoutNamedTensors) {
  const c10::FunctionSchema probe = torch::jit::parseSchema("aten::cumsum.dimname(Tensor self, str dim) -> Tensor");
  const SampleInputs in = make_inputs(probe, at::kFloat, spec_with(""), nullptr, "k");
  if (compat::kNamedTensors) {
    EXPECT_TRUE(in.unsupported.empty()) << in.unsupported;
    EXPECT_EQ(compat::dimension_names(in.args[0].toTensor()).size(), static_cast<size_t>(in.args[0].toTensor().dim()));
  } else {
    EXPECT_EQ(in.unsupported, compat::kNoNamedTensors);
  }
}

TEST(Inputs, DimensionNamesOfNamedOverloads) {
  if (!compat::kNamedTensors) GTEST_SKIP() << compat::kNoNamedTensors;
  const ProbeTarget cpu{"cpu", c10::Device(c10::kCPU)};
  const Spec spec = spec_with("");
  for (const char* op : {"aten::sum.dim_DimnameList", "aten::transpose.Dimname", "aten::cumsum_.dimname"}) {
    const ProbeResult r = probe_op(cpu, spec, op, "float32");
    EXPECT_EQ(r.verdict, Verdict::kPass) << op << ": " << r.message;
  }
  const SampleInputs named = make_inputs(schema("aten::sum", "dim_DimnameList"), at::kFloat, spec, nullptr, "k");
  EXPECT_TRUE(compat::has_names(named.args[0].toTensor()));
  // An in-place operator's self gets the names too.
  EXPECT_TRUE(compat::has_names(
      make_inputs(schema("aten::cumsum_", "dimname"), at::kFloat, spec, nullptr, "k").args[0].toTensor()));
}

TEST(ProbeOp, NamedViewsAndZeroTensorsAreComparedAndOutputsThatCannotBeSaySo) {
  const Spec spec = spec_with("");
  const ProbeTarget cpu{"cpu", c10::Device(c10::kCPU)};
  std::vector<const char*> ops{"aten::_efficientzerotensor"};
  if (compat::kNamedTensors) ops.push_back("aten::squeeze.dimname");
  for (const char* op : ops) {
    const ProbeResult r = probe_op(cpu, spec, op, "float32");
    EXPECT_EQ(r.verdict, Verdict::kPass) << op << ": " << r.message;
  }
  // functorch's batched tensors have no memory to read: the comparison's failure, not the target's: not judged.
  const ProbeResult batched = probe_op(cpu, spec, "aten::_add_batch_dim", "float32");
  EXPECT_EQ(batched.verdict, Verdict::kSkip);
  EXPECT_EQ(batched.message.rfind("not judged: the outputs could not be compared: ", 0), 0u) << batched.message;
}

TEST(ProbeOp, CpuSelfCheckPassesAndSkipsSayWhy) {
  const Spec spec = spec_with("ops:\n  aten::sin: {xfail: [{reason: demo, targets: [cpu]}]}\n");
  const ProbeTarget cpu{"cpu", c10::Device(c10::kCPU)};
  set_recordings_choice("none");  // synthesized inputs: one sample, and the five derived from it to meet conditions
  const ProbeResult add = probe_op(cpu, spec, "aten::add.Tensor", "float32");
  set_recordings_choice("");
  EXPECT_EQ(add.verdict, Verdict::kPass) << add.message;
  EXPECT_EQ(add.samples, 6);
  const ProbeResult sin = probe_op(cpu, spec, "aten::sin", "float32");
  EXPECT_EQ(sin.verdict, Verdict::kXpass);  // passes, though the spec expects it to fail on cpu
  const ProbeResult from_file = probe_op(cpu, spec, "aten::from_file", "float32");
  EXPECT_EQ(from_file.verdict, Verdict::kSkip);
  EXPECT_EQ(skip_reason(from_file), "no_inputs") << from_file.message;
  EXPECT_EQ(probe_op(cpu, spec, "aten::no_such_op", "float32").message, "no such operator in this libtorch");
}

// Note [Rejected in one dtype]: inputs the CPU took in float32 and rejects in int64 make an int64 skip the dtype's.
TEST(ProbeOp, InputsTheCpuTookInAnotherDtypeMakeTheSkipTheDtypes) {
  const ProbeTarget cpu{"cpu", c10::Device(c10::kCPU)};
  const Spec spec = spec_with("");
  set_recordings_choice("none");
  const ProbeResult f32 = probe_op(cpu, spec, "aten::linalg_cholesky", "float32");
  const ProbeResult i64 = probe_op(cpu, spec, "aten::linalg_cholesky", "int64");
  set_recordings_choice("");
  EXPECT_EQ(f32.verdict, Verdict::kPass) << f32.message;
  EXPECT_EQ(i64.verdict, Verdict::kSkip);
  EXPECT_EQ(skip_reason(i64), "cpu_dtype") << i64.message;
  EXPECT_NE(i64.message.find("inputs in float32 but not in int64"), std::string::npos) << i64.message;
}

// A sparse compressed result has no size-0 tensor to stand for its out= argument: the out tensor is shaped like it.
TEST(ProbeOp, OutVariantsOfSparseCompressedResultsGetAVerdict) {
  const ProbeTarget cpu{"cpu", c10::Device(c10::kCPU)};
  const Spec spec = spec_with("");
  set_recordings_choice("none");
  // libtorch 2.x calls the out= variant _to_sparse_csr.out.
  const bool old_name = c10::Dispatcher::singleton().findOp({"aten::to_sparse_csr", "out"}).has_value();
  const ProbeResult r =
      probe_op(cpu, spec, old_name ? "aten::to_sparse_csr.out" : "aten::_to_sparse_csr.out", "float32");
  set_recordings_choice("");
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
}

// Spec values convert to the schema's type: a list of numbers to Scalar[], a dtype name to a ScalarType.
TEST(Inputs, SpecListsOfNumbersAndDtypeNamesConvert) {
  const Spec spec = parse_spec(R"(
ops:
  aten::gradient.scalarrayarray:
    samples: [{args: {self: {shape: [3, 4]}, spacing: [0.5, 2.0], dim: [0, 1], edge_order: 1}}]
  aten::_empty_affine_quantized:
    samples: [{args: {size: [3, 4], dtype: quint8, scale: 0.1, zero_point: 2}}]
)",
                               "s.yaml", {"aten::gradient.scalarrayarray", "aten::_empty_affine_quantized"});
  for (const auto& [name, overload] : std::vector<std::pair<const char*, const char*>>{
           {"aten::gradient", "scalarrayarray"}, {"aten::_empty_affine_quantized", ""}}) {
    const auto handle = c10::Dispatcher::singleton().findOp({name, overload});
    ASSERT_TRUE(handle.has_value()) << name;
    const std::string key = std::string(name) + (*overload ? std::string(".") + overload : "");
    const SampleInputs in = make_inputs(handle->schema(), at::kFloat, spec, &spec.find(key)->samples[0], "k");
    torch::jit::Stack stack = in.args;
    EXPECT_NO_THROW(handle->callBoxed(&stack)) << key;
  }
}

// A half-precision result compared with a reference computed in float32 gets at least atol = rtol = 1e-2; a looser
// spec tolerance stays; with a reference in the dtype itself the spec's or each output's default holds.
TEST(ProbeOp, AFloat32ReferenceForHalfPrecisionIsComparedAsPyTorchsMpsTestsDo) {
  EXPECT_FALSE(comparison_tolerance(nullptr, at::kHalf, false));
  const auto widened = comparison_tolerance(nullptr, at::kHalf, true);
  ASSERT_TRUE(widened);
  EXPECT_EQ(widened->atol, 1e-2);
  EXPECT_EQ(widened->rtol, 1e-2);
  const Tolerance loose{0.05, 0.1};
  const auto kept = comparison_tolerance(&loose, at::kBFloat16, true);
  EXPECT_EQ(kept->atol, 0.05);
  EXPECT_EQ(kept->rtol, 0.1);
  const Tolerance tight{1e-6, 1e-6};
  EXPECT_EQ(comparison_tolerance(&tight, at::kHalf, false)->atol, 1e-6);
  EXPECT_EQ(comparison_tolerance(&tight, at::kHalf, true)->rtol, 1e-2);
}

// bool[N] output masks get N entries: a backward's schema fixes how many gradients it can compute.
TEST(Inputs, OutputMasksHaveTheSchemasLength) {
  const Spec spec = spec_with("");
  const auto mask_of = [&](const char* name, const char* overload) {
    const c10::FunctionSchema& s = schema(name, overload);
    const SampleInputs in = make_inputs(s, at::kFloat, spec, nullptr, "k");
    for (size_t i = 0; i < s.arguments().size(); ++i) {
      if (s.arguments()[i].real_type()->str() == "bool[]") return in.args.at(i).toBoolList().size();
    }
    return size_t{0};
  };
  EXPECT_EQ(mask_of("aten::grid_sampler_3d_backward", ""), 2u);
  EXPECT_EQ(mask_of("aten::native_layer_norm_backward", ""), 3u);
}

TEST(ProbeOp, AReferenceThatDiffersFromItselfIsNoReference) {
  // randn compared by value: every CPU run draws other numbers, so a mismatch says nothing about the target.
  const Spec spec = parse_spec("ops:\n  aten::randn: {compare: values}\n", "s.yaml", {"aten::randn"});
  const ProbeTarget cpu{"cpu", c10::Device(c10::kCPU)};
  set_recordings_choice("none");  // the synthesized size, not a recorded one
  const ProbeResult r = probe_op(cpu, spec, "aten::randn", "float32");
  set_recordings_choice("");
  EXPECT_EQ(r.verdict, Verdict::kSkip);
  EXPECT_EQ(skip_reason(r), "cpu_unstable") << r.message;
}

}  // namespace
}  // namespace mps_audit
