// Tests of the inputs synthesized for out= variants (from their functional twins) and of the well-posed rules:
// unique indices for operators that write by index, positive definite and well-conditioned matrices.
#include <set>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linalg_cholesky_ex.h>
#include <ATen/ops/linalg_svdvals.h>
#include <ATen/ops/ones.h>
#include <gtest/gtest.h>

#include "common/ivalue_tensors.h"
#include "probe/inputs.h"

namespace mps_audit {
namespace {

const c10::OperatorHandle op(const char* name, const char* overload = "") {
  return *c10::Dispatcher::singleton().findOp({name, overload});
}

Spec empty_spec() {
  return parse_spec("", "s.yaml", {});
}

// The first synthesis variant whose inputs the CPU accepts, and the stack after the run; fails the test if none.
SampleInputs accepted_inputs(const c10::OperatorHandle& handle, c10::ScalarType dtype) {
  const Spec spec = empty_spec();
  std::string last_error;
  for (const Synthesis& how : synthesis_variants(handle.schema())) {
    SampleInputs in = make_inputs(handle.schema(), dtype, spec, nullptr, "k", &how);
    if (!in.unsupported.empty()) continue;
    torch::jit::Stack stack;  // copies: the run resizes out= tensors
    for (const auto& v : in.args) stack.push_back(v.isTensor() ? c10::IValue(v.toTensor().clone()) : v);
    try {
      handle.callBoxed(&stack);
      return in;
    } catch (const std::exception& e) {
      last_error = e.what();
    }
  }
  ADD_FAILURE() << handle.schema().name() << ": no variant accepted: " << last_error.substr(0, 200);
  return {};
}

std::vector<int64_t> values(const at::Tensor& t) {
  const at::Tensor flat = t.contiguous().view({-1});
  std::vector<int64_t> out;
  for (int64_t i = 0; i < flat.numel(); ++i) out.push_back(flat[i].item<int64_t>());
  return out;
}

bool unique(const at::Tensor& t) {
  const auto v = values(t);
  return std::set<int64_t>(v.begin(), v.end()).size() == v.size();
}

size_t position(const c10::FunctionSchema& s, const std::string& name) {
  for (size_t i = 0; i < s.arguments().size(); ++i) {
    if (s.arguments()[i].name() == name) return i;
  }
  throw std::runtime_error("no argument " + name);
}

TEST(OutVariants, FindTheirFunctionalTwin) {
  EXPECT_EQ(functional_twin(op("aten::add", "out").schema())->schema().overload_name(), "Tensor");
  EXPECT_EQ(functional_twin(op("aten::max", "dim_max").schema())->schema().overload_name(), "dim");
  EXPECT_EQ(functional_twin(op("aten::eq", "Tensor_out").schema())->schema().overload_name(), "Tensor");
  EXPECT_FALSE(functional_twin(op("aten::add", "Tensor").schema()));  // not an out= variant
  EXPECT_FALSE(functional_twin(op("aten::add_", "Tensor").schema()));
}

TEST(OutVariants, GetInputsTheCpuAcceptsWithOutTensorsOfTheTwinsDtypes) {
  const SampleInputs add = accepted_inputs(op("aten::add", "out"), at::kFloat);
  EXPECT_EQ(add.args.back().toTensor().scalar_type(), at::kFloat);
  const auto& max_schema = op("aten::max", "dim_max").schema();
  const SampleInputs max = accepted_inputs(op("aten::max", "dim_max"), at::kFloat);
  ASSERT_EQ(max.args.size(), max_schema.arguments().size());
  EXPECT_EQ(max.args[position(max_schema, "max")].toTensor().scalar_type(), at::kFloat);
  EXPECT_EQ(max.args[position(max_schema, "max_values")].toTensor().scalar_type(), at::kLong);  // the indices
  // eq writes booleans whatever its inputs' dtype.
  const SampleInputs eq = accepted_inputs(op("aten::eq", "Tensor_out"), at::kFloat);
  EXPECT_EQ(eq.args.back().toTensor().scalar_type(), at::kBool);
  EXPECT_EQ(eq.args.back().toTensor().sizes(), eq.args[0].toTensor().sizes());  // the return's shape
  // An out= variant that copies into its out tensor without resizing it.
  const SampleInputs expand = accepted_inputs(op("aten::expand_copy", "out"), at::kFloat);
  EXPECT_GT(expand.args.back().toTensor().numel(), 0);
}

TEST(OutVariants, TwinInputsAreReusableForGivenInputs) {
  const auto twin = functional_twin(op("aten::eq", "Tensor_out").schema());
  ASSERT_TRUE(twin);
  SampleInputs given;
  given.name = "recorded";
  given.args = {at::ones({2, 3}, at::kInt), at::ones({2, 3}, at::kInt)};
  const SampleInputs in = out_variant_inputs(op("aten::eq", "Tensor_out").schema(), *twin, given, at::kInt);
  ASSERT_TRUE(in.unsupported.empty()) << in.unsupported;
  EXPECT_EQ(in.name, "recorded");
  ASSERT_EQ(in.args.size(), 3u);
  EXPECT_EQ(in.args[2].toTensor().scalar_type(), at::kBool);
}

TEST(WellPosed, OperatorsThatWriteByIndexGetUniqueIndices) {
  const SampleInputs put = accepted_inputs(op("aten::put"), at::kFloat);
  EXPECT_TRUE(unique(put.args[position(op("aten::put").schema(), "index")].toTensor()));
  const SampleInputs add = accepted_inputs(op("aten::index_add"), at::kFloat);
  EXPECT_TRUE(unique(add.args[position(op("aten::index_add").schema(), "index")].toTensor()));
  const SampleInputs copy = accepted_inputs(op("aten::index_copy"), at::kFloat);
  EXPECT_TRUE(unique(copy.args[position(op("aten::index_copy").schema(), "index")].toTensor()));
  const SampleInputs impl = accepted_inputs(op("aten::_index_put_impl_"), at::kFloat);
  const auto indices = impl.args[position(op("aten::_index_put_impl_").schema(), "indices")].toList();
  EXPECT_TRUE(unique(indices.get(0).toTensor()));
  // scatter: distinct positions along dim within each slice.
  const auto& scatter = op("aten::scatter", "src").schema();
  const SampleInputs s = accepted_inputs(op("aten::scatter", "src"), at::kFloat);
  const at::Tensor index = s.args[position(scatter, "index")].toTensor();
  const int64_t dim = s.args[position(scatter, "dim")].toInt();
  const at::Tensor slices = index.movedim(dim, -1).reshape({-1, index.size(dim)});
  for (int64_t i = 0; i < slices.size(0); ++i) EXPECT_TRUE(unique(slices[i])) << slices[i];
}

TEST(WellPosed, MaxUnpoolIndicesAreUniqueWithinEachPlane) {
  const auto& unpool = op("aten::max_unpool2d").schema();
  const SampleInputs in = accepted_inputs(op("aten::max_unpool2d"), at::kFloat);
  const at::Tensor indices = in.args[position(unpool, "indices")].toTensor();
  ASSERT_EQ(indices.dim(), 4);
  const at::Tensor planes = indices.reshape({indices.size(0) * indices.size(1), -1});
  for (int64_t i = 0; i < planes.size(0); ++i) EXPECT_TRUE(unique(planes[i]));
}

TEST(WellPosed, AsStridedScatterGetsAStrideThatDoesNotOverlap) {
  const auto& s = op("aten::as_strided_scatter").schema();
  const SampleInputs in = accepted_inputs(op("aten::as_strided_scatter"), at::kFloat);
  const auto size = in.args[position(s, "size")].toIntVector();
  const auto stride = in.args[position(s, "stride")].toIntVector();
  ASSERT_EQ(size.size(), stride.size());
  int64_t expected = 1;
  for (size_t d = size.size(); d-- > 0;) {
    EXPECT_EQ(stride[d], expected) << d;
    expected *= size[d];
  }
}

TEST(WellPosed, SetStaysWithinTheSourcesStorage) {
  const Spec spec = empty_spec();
  for (const auto& [name, overload] :
       std::vector<std::pair<const char*, const char*>>{{"aten::set_", "source_Tensor_storage_offset"},
                                                        {"aten::set_", "source_Storage_storage_offset"},
                                                        {"aten::set", "source_Storage_storage_offset"}}) {
    const auto& s = op(name, overload).schema();
    for (const Synthesis& how : synthesis_variants(s)) {
      const SampleInputs in = make_inputs(s, at::kFloat, spec, nullptr, "k", &how);
      EXPECT_EQ(in.args[position(s, "storage_offset")].toInt(), 0) << name << "." << overload << " " << how.name;
    }
  }
}

// A Storage argument is the storage of a default tensor, and it moves between devices (and through any other
// function on tensors) as a tensor of its bytes.
TEST(Synthesis, StorageArgumentsAreMadeAndMapped) {
  const auto& handle = op("aten::set_", "source_Storage");
  const SampleInputs in = make_inputs(handle.schema(), at::kFloat, empty_spec(), nullptr, "k");
  ASSERT_TRUE(in.unsupported.empty()) << in.unsupported;
  ASSERT_TRUE(in.args.at(1).isStorage());
  const c10::Storage source = in.args[1].toStorage();
  EXPECT_EQ(source.nbytes(), in.args[0].toTensor().numel() * sizeof(float));
  torch::jit::Stack stack = in.args;
  handle.callBoxed(&stack);
  EXPECT_TRUE(stack.at(0).toTensor().is_alias_of(at::empty({0}).set_(source)));

  std::vector<int64_t> seen;
  const c10::IValue doubled = map_tensors(in.args[1], [&](const at::Tensor& bytes) {
    seen.push_back(bytes.numel());
    EXPECT_EQ(bytes.scalar_type(), at::kByte);
    return bytes.repeat({2});
  });
  EXPECT_EQ(seen, std::vector<int64_t>{static_cast<int64_t>(source.nbytes())});
  ASSERT_TRUE(doubled.isStorage());
  EXPECT_EQ(doubled.toStorage().nbytes(), 2 * source.nbytes());
}

TEST(WellPosed, PositiveDefiniteMatricesAreSymmetricAndFactorize) {
  at::Generator gen = at::detail::createCPUGenerator(7);
  for (const auto type : {at::kFloat, at::kDouble, at::kComplexFloat}) {
    const at::Tensor a = spd_matrix({3, 5, 5}, type, gen);
    EXPECT_EQ(a.scalar_type(), type);
    EXPECT_TRUE(at::allclose(a, a.transpose(-2, -1).conj()));
    EXPECT_EQ(std::get<1>(at::linalg_cholesky_ex(a)).abs().sum().item<int64_t>(), 0) << a;
  }
  // The rule reaches the operators: linalg_cholesky's synthesized input factorizes.
  const SampleInputs in = accepted_inputs(op("aten::linalg_cholesky"), at::kFloat);
  const at::Tensor m = in.args[0].toTensor();
  ASSERT_GE(m.dim(), 2);
  EXPECT_EQ(std::get<1>(at::linalg_cholesky_ex(m)).abs().sum().item<int64_t>(), 0);
}

TEST(WellPosed, SolverInputsHaveABoundedConditionNumber) {
  at::Generator gen = at::detail::createCPUGenerator(7);
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{6, 6}, {2, 3, 5}, {5, 3}}) {
    const at::Tensor s = at::linalg_svdvals(well_conditioned_matrix(shape, at::kDouble, gen));
    const double smallest = s.min().item<double>(), largest = s.max().item<double>();
    EXPECT_GE(smallest, 1.0 - 1e-9);  // Varah: at least the dominance margin
    EXPECT_LT(largest / smallest, 100.0);
  }
  const SampleInputs in = accepted_inputs(op("aten::linalg_inv"), at::kFloat);
  const at::Tensor s = at::linalg_svdvals(in.args[0].toTensor().to(at::kDouble));
  EXPECT_LT(s.max().item<double>() / s.min().item<double>(), 100.0);
}

// A spec sample asks for the matrices synthesis makes for linear algebra: a Cholesky factor that is not the
// synthesized default's random 3x4 matrix (which the CPU kernel takes without checking it is square).
TEST(SpecSamples, PositiveDefiniteAndWellConditionedMatrices) {
  const Spec spec = parse_spec(R"(
ops:
  aten::_cholesky_solve_helper:
    samples: [{args: {self: {shape: [4, 2]}, A: {shape: [2, 4, 4], domain: well_conditioned, noncontiguous: true}, upper: false}}]
  aten::linalg_cholesky:
    samples: [{args: {self: {shape: [5, 5], domain: spd}}}]
)",
                               "s.yaml", {"aten::_cholesky_solve_helper", "aten::linalg_cholesky"});
  const auto inputs = [&](const char* name, c10::ScalarType type) {
    return make_inputs(op(name).schema(), type, spec, &spec.find(name)->samples[0], "k");
  };
  for (const auto type : {at::kFloat, at::kComplexFloat}) {
    const at::Tensor a = inputs("aten::_cholesky_solve_helper", type).args[1].toTensor();
    EXPECT_EQ(a.sizes(), (c10::IntArrayRef{2, 4, 4}));
    EXPECT_EQ(a.scalar_type(), type);
    EXPECT_FALSE(a.is_contiguous());
    const at::Tensor s = at::linalg_svdvals(a.to(type == at::kFloat ? at::kDouble : at::kComplexDouble));
    EXPECT_GE(s.min().item<double>(), 1.0 - 1e-5);
    EXPECT_LT(s.max().item<double>() / s.min().item<double>(), 100.0);
    const at::Tensor m = inputs("aten::linalg_cholesky", type).args[0].toTensor();
    EXPECT_TRUE(at::allclose(m, m.transpose(-2, -1).conj()));
    EXPECT_EQ(std::get<1>(at::linalg_cholesky_ex(m)).abs().sum().item<int64_t>(), 0);
  }
}

TEST(SpecSamples, UniqueIndicesQuantizedAndSparseTensorsTheCpuAccepts) {
  const Spec spec = parse_spec(R"(
ops:
  aten::index_add:
    samples:
      - args: {self: {shape: [5, 4]}, dim: 0, index: {shape: [4], domain: index, high: 5, unique: true}, source: {shape: [4, 4]}}
  aten::int_repr:
    samples:
      - args: {self: {shape: [3, 4], quantized: {dtype: quint8, scale: 0.25, zero_point: 3}}}
  aten::_values:
    samples:
      - args: {self: {shape: [3, 4], layout: sparse_coo}}
  aten::to_dense:
    samples:
      - args: {self: {shape: [3, 4], layout: sparse_csr}}
)",
                               "s.yaml", {"aten::index_add", "aten::int_repr", "aten::_values", "aten::to_dense"});
  const auto run = [&](const char* name) {
    const SampleInputs in = make_inputs(op(name).schema(), at::kFloat, spec, &spec.find(name)->samples[0], "k");
    torch::jit::Stack stack = in.args;
    op(name).callBoxed(&stack);
    return std::make_pair(in, stack.at(0).toTensor());
  };
  EXPECT_TRUE(unique(run("aten::index_add").first.args[2].toTensor()));
  const auto [q, repr] = run("aten::int_repr");
  EXPECT_TRUE(q.args[0].toTensor().is_quantized());
  EXPECT_EQ(q.args[0].toTensor().q_zero_point(), 3);
  EXPECT_EQ(repr.scalar_type(), at::kByte);
  const auto [coo, values] = run("aten::_values");
  EXPECT_EQ(coo.args[0].toTensor().layout(), at::kSparse);
  EXPECT_LT(values.numel(), 12);  // some elements are zero, so not stored
  const auto [csr, dense] = run("aten::to_dense");
  EXPECT_EQ(csr.args[0].toTensor().layout(), at::kSparseCsr);
  EXPECT_EQ(dense.layout(), at::kStrided);
}

}  // namespace
}  // namespace mps_audit
