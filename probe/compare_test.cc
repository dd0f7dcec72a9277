// Tests of the output comparison.
#include "probe/compare.h"

#include <cmath>
#include <limits>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/_efficientzerotensor.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/quantize_per_tensor.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/ops/view_as_real.h>
#include <ATen/ops/zeros.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/torch_compat.h"

namespace mps_audit {
namespace {

at::Tensor floats(std::vector<float> v) {
  return at::tensor(v);
}

TEST(Compare, FloatsWithinTheDtypesToleranceAreEqual) {
  const at::Tensor e = floats({1.0f, 2.0f, 3.0f});
  EXPECT_TRUE(compare_outputs(e, floats({1.0f, 2.0f + 1e-6f, 3.0f}), CompareMode::kValues).equal);
  const Comparison c = compare_outputs(e, floats({1.0f, 2.1f, 3.0f}), CompareMode::kValues);
  EXPECT_FALSE(c.equal);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.first_mismatch, "[1]");
  EXPECT_NEAR(c.max_abs_error, 0.1, 1e-6);
  EXPECT_NEAR(c.max_rel_error, 0.05, 1e-6);
  const Tolerance loose{0.2, 0};
  EXPECT_TRUE(compare_outputs(e, floats({1.0f, 2.1f, 3.0f}), CompareMode::kValues, &loose).equal);
}

TEST(Compare, NanAndInfinityMustBeInTheSamePlaces) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(compare_outputs(floats({nan, inf, -inf}), floats({nan, inf, -inf}), CompareMode::kValues).equal);
  EXPECT_FALSE(compare_outputs(floats({nan, 1}), floats({1, 1}), CompareMode::kValues).equal);
  EXPECT_FALSE(compare_outputs(floats({1, 1}), floats({nan, 1}), CompareMode::kValues).equal);
  EXPECT_FALSE(compare_outputs(floats({inf}), floats({-inf}), CompareMode::kValues).equal);
}

TEST(Compare, IntegersAndBooleansExactly) {
  const at::Tensor e = at::arange(6).reshape({2, 3});
  at::Tensor a = e.clone();
  a.select(0, 1).select(0, 2).fill_(7);
  const Comparison c = compare_outputs(e, a, CompareMode::kValues);
  EXPECT_FALSE(c.equal);
  EXPECT_EQ(c.first_mismatch, "[1, 2]");
  EXPECT_TRUE(compare_outputs(e.gt(2), e.gt(2), CompareMode::kValues).equal);
  EXPECT_FALSE(compare_outputs(e.gt(2), e.gt(3), CompareMode::kValues).equal);
}

TEST(Compare, ComplexByParts) {
  const at::Tensor e = at::view_as_complex(floats({1, 2, 3, 4}).reshape({2, 2}));
  const at::Tensor a = at::view_as_complex(floats({1, 2, 3, 4.5f}).reshape({2, 2}));
  const Comparison c = compare_outputs(e, a, CompareMode::kValues);
  EXPECT_FALSE(c.equal);
  EXPECT_EQ(c.first_mismatch, "[1]");
  EXPECT_TRUE(compare_outputs(e, e.clone(), CompareMode::kValues).equal);
}

TEST(Compare, DtypeAndShapeComeFirst) {
  const at::Tensor e = floats({1, 2});
  EXPECT_EQ(compare_outputs(e, e.to(at::kDouble), CompareMode::kShape).message,
            "dtype float64 differs from the CPU's float32");
  EXPECT_EQ(compare_outputs(e, floats({1, 2, 3}), CompareMode::kShape).message, "shape 3 differs from the CPU's 2");
  EXPECT_TRUE(compare_outputs(e, floats({7, 9}), CompareMode::kShape).equal);  // shape mode ignores values
}

TEST(Compare, SparseResultsByTheirDenseValues) {
  const at::Tensor e = floats({0, 1, 0, 2}).reshape({2, 2});
  EXPECT_TRUE(compare_outputs(e.to_sparse(), e.to_sparse(), CompareMode::kValues).equal);
  EXPECT_FALSE(
      compare_outputs(e.to_sparse(), floats({0, 1, 0, 3}).reshape({2, 2}).to_sparse(), CompareMode::kValues).equal);
  EXPECT_FALSE(compare_outputs(e.to_sparse(), e, CompareMode::kValues).equal);  // layouts differ
}

TEST(Compare, SortedModeIgnoresOrder) {
  EXPECT_TRUE(compare_outputs(floats({3, 1, 2}), floats({1, 2, 3}), CompareMode::kSorted).equal);
  EXPECT_FALSE(compare_outputs(floats({3, 1, 2}), floats({1, 2, 3}), CompareMode::kValues).equal);
}

TEST(Compare, MultipleOutputsNameTheOneThatDiffers) {
  const c10::IValue e = c10::ivalue::Tuple::create({floats({1}), at::arange(3)});
  const c10::IValue a = c10::ivalue::Tuple::create({floats({1}), at::arange(1, 4)});
  const Comparison c = compare_outputs(e, a, CompareMode::kValues);
  EXPECT_FALSE(c.equal);
  EXPECT_EQ(c.message.rfind("output 1: ", 0), 0u) << c.message;
  const c10::IValue shorter = c10::ivalue::Tuple::create({floats({1})});
  EXPECT_EQ(compare_outputs(e, shorter, CompareMode::kValues).message, "1 outputs, the CPU gave 2");
}

TEST(Compare, QuantizedResultsByTheValuesTheyStandFor) {
  const auto q = [](std::vector<float> v) { return at::quantize_per_tensor(floats(v), 0.5, 2, at::kQUInt8); };
  EXPECT_TRUE(compare_outputs(q({1, 2, 3}), q({1, 2, 3}), CompareMode::kValues).equal);
  const Comparison c = compare_outputs(q({1, 2, 3}), q({1, 2, 4}), CompareMode::kValues);
  EXPECT_FALSE(c.equal);
  EXPECT_EQ(c.first_mismatch, "[2]");
}

TEST(Compare, NestedOutputsNameTheirPathOnce) {
  // The prober wraps an operator's returns in a tuple, so a Tensor[] return is a list inside it.
  const auto wrap = [](std::vector<at::Tensor> v) {
    return c10::ivalue::Tuple::create({c10::IValue(c10::List<at::Tensor>(v))});
  };
  const Comparison c =
      compare_outputs(wrap({floats({1}), floats({1, 2})}), wrap({floats({1}), floats({1, 3})}), CompareMode::kValues);
  EXPECT_FALSE(c.equal);
  EXPECT_EQ(c.message.rfind("output 0[1]: 1 of 2 elements differ", 0), 0u) << c.message;
  const Comparison shorter =
      compare_outputs(wrap({floats({1}), floats({2})}), wrap({floats({1})}), CompareMode::kValues);
  EXPECT_EQ(shorter.message, "output 0: 1 outputs, the CPU gave 2");
}

// Eigenvectors: each column right up to its sign, or its unit phase when complex; singular vectors of Vh by rows.
TEST(Compare, VectorsUpToPhaseAcceptsFlippedOrTurnedVectorsOnly) {
  const at::Tensor e = floats({0.6f, 0.8f, -0.8f, 0.6f}).reshape({2, 2});  // columns (0.6, -0.8) and (0.8, 0.6)
  const at::Tensor columns_flipped = floats({-0.6f, 0.8f, 0.8f, 0.6f}).reshape({2, 2});
  EXPECT_FALSE(compare_outputs(e, columns_flipped, CompareMode::kValues).equal);
  EXPECT_TRUE(compare_outputs(e, columns_flipped, CompareMode::kVectorsUpToPhase).equal);
  const at::Tensor rows_flipped = floats({0.6f, 0.8f, 0.8f, -0.6f}).reshape({2, 2});
  EXPECT_TRUE(compare_outputs(e, rows_flipped, CompareMode::kVectorsUpToPhase).equal);
  const at::Tensor other = floats({0.8f, 0.6f, -0.6f, 0.8f}).reshape({2, 2});
  const Comparison c = compare_outputs(e, other, CompareMode::kVectorsUpToPhase);
  EXPECT_FALSE(c.equal);
  EXPECT_EQ(c.mismatches, 4);

  // Complex: the second column times i.
  const at::Tensor ce = at::view_as_complex(floats({0.6f, 0, 0, 0.8f, 0.8f, 0, 0, -0.6f}).reshape({2, 2, 2}));
  const at::Tensor turned = at::view_as_complex(floats({0.6f, 0, -0.8f, 0, 0.8f, 0, 0.6f, 0}).reshape({2, 2, 2}));
  EXPECT_FALSE(compare_outputs(ce, turned, CompareMode::kValues).equal);
  EXPECT_TRUE(compare_outputs(ce, turned, CompareMode::kVectorsUpToPhase).equal);

  // Other outputs (eigenvalues, singular values) by value, in a tuple as the operators return them.
  const auto pair = [](const at::Tensor& values, const at::Tensor& vectors) {
    return c10::IValue(c10::ivalue::Tuple::create({values, vectors}));
  };
  EXPECT_TRUE(
      compare_outputs(pair(floats({1, 2}), e), pair(floats({1, 2}), columns_flipped), CompareMode::kVectorsUpToPhase)
          .equal);
  EXPECT_FALSE(
      compare_outputs(pair(floats({1, 2}), e), pair(floats({1, -2}), columns_flipped), CompareMode::kVectorsUpToPhase)
          .equal);
}

TEST(Compare, ScalarsAndNone) {
  EXPECT_TRUE(compare_outputs(c10::IValue(2.0), c10::IValue(2.0 + 1e-9), CompareMode::kValues).equal);
  EXPECT_FALSE(compare_outputs(c10::IValue(int64_t{2}), c10::IValue(int64_t{3}), CompareMode::kValues).equal);
  EXPECT_TRUE(compare_outputs(c10::IValue(), c10::IValue(), CompareMode::kValues).equal);
  EXPECT_FALSE(compare_outputs(c10::IValue(), floats({1}), CompareMode::kValues).equal);
}

TEST(Compare, DimensionNamesMustAgree) {
  if (!compat::kNamedTensors) GTEST_SKIP() << compat::kNoNamedTensors;
  const at::Tensor e = floats({1, 2, 3, 4}).reshape({2, 2});
  const at::Tensor named = e.clone(), other = e.clone();
  compat::set_dimension_names(named, {"dimname::a", "*"});
  EXPECT_TRUE(compare_outputs(named, named.clone(), CompareMode::kValues).equal);
  EXPECT_EQ(compare_outputs(named, other, CompareMode::kValues).message,
            "dimension names none differ from the CPU's (a, *)");
}

TEST(Compare, IndicesByValuesAcceptsAnyPositionOfATie) {
  // sort([1, 1, 2]): the CPU says indices [0, 1, 2]; [1, 0, 2] selects the same values.
  IndexSource source{floats({1, 1, 2}), 0, {1}};
  const c10::IValue e = c10::ivalue::Tuple::create({floats({1, 1, 2}), at::tensor(std::vector<int64_t>{0, 1, 2})});
  const c10::IValue a = c10::ivalue::Tuple::create({floats({1, 1, 2}), at::tensor(std::vector<int64_t>{1, 0, 2})});
  EXPECT_TRUE(compare_outputs(e, a, CompareMode::kIndicesByValues, nullptr, &source).equal);
  EXPECT_FALSE(compare_outputs(e, a, CompareMode::kValues).equal);
  // Without a source the mode compares values.
  EXPECT_FALSE(compare_outputs(e, a, CompareMode::kIndicesByValues).equal);
}

TEST(Compare, IndicesByValuesRejectsIndicesOfOtherValues) {
  IndexSource source{floats({1, 1, 2}), 0, {1}};
  const c10::IValue e = c10::ivalue::Tuple::create({floats({1, 1, 2}), at::tensor(std::vector<int64_t>{0, 1, 2})});
  const c10::IValue wrong = c10::ivalue::Tuple::create({floats({1, 1, 2}), at::tensor(std::vector<int64_t>{0, 2, 1})});
  const Comparison c = compare_outputs(e, wrong, CompareMode::kIndicesByValues, nullptr, &source);
  EXPECT_FALSE(c.equal);
  EXPECT_EQ(c.message.rfind("output 1: indices select different values", 0), 0u) << c.message;
  EXPECT_EQ(c.first_mismatch, "[1]");
  const c10::IValue outside =
      c10::ivalue::Tuple::create({floats({1, 1, 2}), at::tensor(std::vector<int64_t>{0, 1, 3})});
  const Comparison o = compare_outputs(e, outside, CompareMode::kIndicesByValues, nullptr, &source);
  EXPECT_EQ(o.message, "output 1: 1 of 3 indices are outside [0, 3); first at [2]");
  // The values output is still compared element by element.
  const c10::IValue values = c10::ivalue::Tuple::create({floats({1, 2, 2}), at::tensor(std::vector<int64_t>{0, 1, 2})});
  EXPECT_FALSE(compare_outputs(e, values, CompareMode::kIndicesByValues, nullptr, &source).equal);
}

TEST(Compare, IndicesByValuesAlongAReducedDimensionAndFlattened) {
  // max(dim=1) of [[3, 3], [2, 5]] without keepdim: row 0 ties.
  const at::Tensor input = floats({3, 3, 2, 5}).reshape({2, 2});
  IndexSource along{input, 1, {0}};
  const at::Tensor e = at::tensor(std::vector<int64_t>{0, 1});
  EXPECT_TRUE(
      compare_outputs(e, at::tensor(std::vector<int64_t>{1, 1}), CompareMode::kIndicesByValues, nullptr, &along).equal);
  EXPECT_FALSE(
      compare_outputs(e, at::tensor(std::vector<int64_t>{0, 0}), CompareMode::kIndicesByValues, nullptr, &along).equal);
  // argmax without dim indexes the flattened input: positions 0 and 1 hold the same 3.
  IndexSource flat{floats({3, 3, 2, 1}).reshape({2, 2}), std::nullopt, {0}};
  const at::Tensor zero = at::tensor(std::vector<int64_t>{0}).reshape({}), one = zero.add(1), two = zero.add(2);
  EXPECT_TRUE(compare_outputs(zero, one, CompareMode::kIndicesByValues, nullptr, &flat).equal);
  EXPECT_FALSE(compare_outputs(zero, two, CompareMode::kIndicesByValues, nullptr, &flat).equal);
}

TEST(Compare, ZeroTensorsByTheZerosTheyStandFor) {
  const at::Tensor zero = at::_efficientzerotensor({2, 3});  // no memory behind it
  EXPECT_TRUE(compare_outputs(zero, at::zeros({2, 3}), CompareMode::kValues).equal);
  EXPECT_TRUE(compare_outputs(at::zeros({2, 3}), zero, CompareMode::kValues).equal);
  EXPECT_FALSE(compare_outputs(zero, at::ones({2, 3}), CompareMode::kValues).equal);
}

TEST(Compare, NamedViewsByTheirValues) {
  if (!compat::kNamedTensors) GTEST_SKIP() << compat::kNoNamedTensors;
  at::Tensor x = at::randn({1, 3});
  compat::set_dimension_names(x, {"dimname::a", "dimname::b"});
  const at::Tensor view = x.select(0, 0);
  EXPECT_TRUE(compare_outputs(view, view.clone(), CompareMode::kValues).equal);
  EXPECT_FALSE(compare_outputs(view, view.add(1), CompareMode::kValues).equal);
}

// What assert_close computes, written with ATen operators on float64 copies (complex by parts): the comparison's
// element loop (Note [Comparing element by element]) must give exactly these figures, to the last bit.
struct AtenFigures {
  int64_t mismatches = 0, first = -1;
  double max_abs = 0, max_rel = 0;
};
AtenFigures aten_figures(const at::Tensor& e, const at::Tensor& a, const Tolerance& t) {
  at::Tensor ee = (e.is_complex() ? at::view_as_real(e) : e).reshape({-1}).to(at::kDouble);
  at::Tensor aa = (a.is_complex() ? at::view_as_real(a) : a).reshape({-1}).to(at::kDouble);
  AtenFigures f;
  const at::Tensor diff = ee.sub(aa).abs();
  at::Tensor bad;
  if (!e.is_floating_point() && !e.is_complex()) {
    bad = ee.ne(aa);
  } else {
    const at::Tensor unequal = ee.eq(aa).logical_not().logical_and(ee.isnan().logical_not());
    const at::Tensor infinite = ee.isinf().logical_or(aa.isinf());
    bad = ee.isnan()
              .ne(aa.isnan())
              .logical_or(infinite.logical_and(unequal))
              .logical_or(diff.gt(ee.abs().mul(t.rtol).add(t.atol)).logical_and(unequal));
    const at::Tensor finite = diff.isfinite();
    if (finite.any().item<bool>()) {
      f.max_rel = diff.masked_select(finite).div(ee.abs().masked_select(finite).clamp_min(1e-300)).max().item<double>();
    }
  }
  const at::Tensor finite = diff.isfinite();
  if (finite.any().item<bool>()) f.max_abs = diff.masked_select(finite).max().item<double>();
  f.mismatches = bad.sum().item<int64_t>();
  if (f.mismatches > 0) f.first = bad.to(at::kByte).argmax().item<int64_t>();
  return f;
}

TEST(Compare, TheElementLoopGivesAssertClosesFiguresExactly) {
  at::Generator gen = at::detail::createCPUGenerator(7);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const auto type : {at::kFloat, at::kHalf, at::kBFloat16, at::kDouble, at::kComplexFloat, at::kComplexDouble,
                          at::kLong, at::kInt, at::kShort, at::kChar, at::kByte, at::kBool}) {
    SCOPED_TRACE(c10::toString(type));
    for (int round = 0; round < 20; ++round) {
      at::Tensor base = at::randn({7, 9}, gen).mul(round % 4 == 0 ? 1e3 : 1);
      at::Tensor other =
          base.add(at::randn({7, 9}, gen).mul(round % 3 == 0 ? 1e-6 : 1e-2)).where(at::rand({7, 9}, gen).lt(0.3), base);
      for (const float special : {nan, inf, -inf}) {  // in both, in one only
        base.view({-1})[(round * 5) % 63].fill_(special);
        other.view({-1})[(round * 5 + round % 2) % 63].fill_(special);
      }
      at::Tensor e = base, a = other;
      if (c10::isComplexType(type)) {
        e = at::view_as_complex(at::stack({base, base.flip(0)}, -1)).to(type);
        a = at::view_as_complex(at::stack({other, base.flip(0)}, -1)).to(type);
      } else if (c10::isIntegralType(type, /*includeBool=*/true)) {
        e = base.nan_to_num(0, 100, -100).mul(round % 2 ? 1 : 30).to(type);
        a = other.nan_to_num(0, 100, -100).mul(round % 2 ? 1 : 30).to(type);
      } else {
        e = base.to(type);
        a = other.to(type);
      }
      const Tolerance t = round % 5 == 0 ? Tolerance{1e-2, 1e-2} : default_tolerance(type);
      const Comparison c = compare_outputs(e, a, CompareMode::kValues, &t);
      const AtenFigures f = aten_figures(e, a, t);
      EXPECT_EQ(c.mismatches, f.mismatches);
      EXPECT_EQ(c.equal, f.mismatches == 0);
      EXPECT_EQ(c.max_abs_error, f.mismatches > 0 || e.is_floating_point() || e.is_complex() ? f.max_abs : 0);
      if (e.is_floating_point() || e.is_complex()) EXPECT_EQ(c.max_rel_error, f.max_rel);
      if (f.mismatches > 0) {
        const int64_t flat = e.is_complex() ? f.first / 2 : f.first;
        EXPECT_EQ(c.first_mismatch, fmt::format("[{}, {}]", flat / 9, flat % 9));
      }
    }
  }
}

TEST(Compare, NoncontiguousConjugatedAndNegatedOutputsByTheirValues) {
  const at::Tensor e = at::randn({4, 6});
  EXPECT_TRUE(compare_outputs(e.t(), e.t().contiguous(), CompareMode::kValues).equal);
  const Comparison c = compare_outputs(e.t(), e.t().contiguous().mul(2), CompareMode::kValues);
  EXPECT_FALSE(c.equal);
  const at::Tensor z = at::view_as_complex(at::randn({3, 2}));
  EXPECT_TRUE(compare_outputs(z.conj(), z.conj().resolve_conj(), CompareMode::kValues).equal);
  EXPECT_FALSE(compare_outputs(z.conj(), z, CompareMode::kValues).equal);
}

}  // namespace
}  // namespace mps_audit
