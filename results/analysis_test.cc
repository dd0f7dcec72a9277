// Tests of what every report is computed from: operator groups, coverage per registry status, offenders and the
// fallback table's order.
#include "results/analysis.h"

#include <gtest/gtest.h>

namespace mps_audit {
namespace {

TEST(Analysis, GroupsOperatorsByFamily) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"aten::__ilshift__.Scalar", "pointwise"},
      {"aten::__and__.Tensor", "pointwise"},
      {"aten::add.Tensor", "pointwise"},
      {"aten::t", "view"},
      {"aten::transpose.int", "view"},
      {"aten::to_dense", "sparse"},
      {"aten::_to_copy", "creation"},
      {"aten::zeros_like", "creation"},
      {"aten::conv2d", "nn"},
      {"aten::linalg_svd", "linalg"},
      {"aten::_foreach_add_.List", "foreach"},
      {"aten::sum.dim_IntList", "reduction"},
      {"aten::index_select", "indexing"},
      {"aten::max_pool2d_with_indices_backward", "backward"},
      {"aten::fft_rfft", "fft"},
      {"aten::special_erfcx", "special"},
      {"aten::bernoulli.p", "random"},
      {"aten::quantize_per_tensor", "quantized"}};
  for (const auto& [op, group] : cases) EXPECT_EQ(op_group(op), group) << op;
  for (const auto& [op, group] : cases) {
    EXPECT_NE(std::find(op_groups().begin(), op_groups().end(), op_group(op)), op_groups().end()) << op;
  }
}

ProbeResult record(const std::string& op, const std::string& dtype, Verdict v, const std::string& status) {
  ProbeResult r;
  r.op = op;
  r.dtype = dtype;
  r.verdict = v;
  r.registry_status = status;
  if (v == Verdict::kFallback) r.fallback_ops = {op + ".out"};
  return r;
}

TEST(Analysis, CountsCoverageOffendersAndFallbacks) {
  Results results;
  results.records = {record("aten::sin", "float32", Verdict::kPass, "native"),
                     record("aten::sin", "float16", Verdict::kPass, "native"),
                     record("aten::cos", "float32", Verdict::kMismatch, "native"),
                     record("aten::cos", "float16", Verdict::kMismatch, "native"),
                     record("aten::erf", "float32", Verdict::kSkip, "native"),
                     record("aten::cumsum", "float32", Verdict::kFallback, "none"),
                     record("aten::cumsum", "float16", Verdict::kCrash, "none"),
                     record("aten::cummax", "float32", Verdict::kFallback, "none"),
                     record("aten::cummax", "float16", Verdict::kFallback, "none")};
  const Analysis a = analyze(results, CoreOps{});  // all of one tier: public
  EXPECT_EQ(a.counts.total, 9u);
  EXPECT_EQ(a.counts.of(Verdict::kFallback), 3u);
  EXPECT_EQ(a.operators, 5u);
  ASSERT_EQ(a.coverage.size(), 2u);
  EXPECT_EQ(a.coverage[0].status, "native");
  EXPECT_EQ(a.coverage[0].operators, 3u);
  EXPECT_EQ(a.coverage[0].probed, 2u);  // erf is only a skip
  EXPECT_EQ(a.coverage[0].pass_float32, 1u);
  EXPECT_EQ(a.coverage[0].has_float32, 2u);
  // Worst first: a crash before a mismatch before fallbacks; sin passes and is no offender.
  ASSERT_EQ(a.worst.size(), 3u);
  EXPECT_EQ(a.worst[0].op, "aten::cumsum");
  EXPECT_EQ(a.worst[0].worst, Verdict::kCrash);
  EXPECT_EQ(a.worst[1].op, "aten::cos");
  EXPECT_EQ(a.worst[1].dtypes, (std::vector<std::string>{"float32", "float16"}));
  EXPECT_EQ(a.worst[2].op, "aten::cummax");
  // Fallbacks: the operator falling back in more dtypes first.
  ASSERT_EQ(a.fallbacks.size(), 2u);
  EXPECT_EQ(a.fallbacks[0].op, "aten::cummax");
  EXPECT_EQ(a.fallbacks[0].fallback_dtypes, 2u);
  EXPECT_EQ(a.fallbacks[1].fallback_ops, std::vector<std::string>{"aten::cumsum.out"});
  EXPECT_EQ(a.fallback_records, 3u);
  // Failures grouped: the two cos mismatches share a message, so one group by message.
  ASSERT_FALSE(a.failures.empty());
  EXPECT_EQ(a.failures[0].verdict, Verdict::kCrash);
  const auto mismatch = std::find_if(a.failures.begin(), a.failures.end(),
                                     [](const FailureSection& s) { return s.verdict == Verdict::kMismatch; });
  ASSERT_NE(mismatch, a.failures.end());
  EXPECT_EQ(mismatch->by_message.size(), 1u);
  EXPECT_EQ(mismatch->by_message[0].items.size(), 2u);
}

// Note [Operator tiers]: the Core ATen operators first, then other public, internal and test operators, whatever
// their verdicts; within a tier the order above.
TEST(Analysis, OrdersOffendersAndFallbacksByTierFirst) {
  Results results;
  for (const char* dtype : {"float32", "float16", "bfloat16"}) {
    results.records.push_back(record("aten::_test_optional_intlist", dtype, Verdict::kFallback, "none"));
    results.records.push_back(record("aten::_compute_linear_combination", dtype, Verdict::kFallback, "none"));
  }
  results.records.push_back(record("aten::_foobar", "float32", Verdict::kCrash, "none"));
  results.records.push_back(record("aten::cummax", "float32", Verdict::kFallback, "none"));
  results.records.push_back(record("aten::cummax", "float16", Verdict::kMismatch, "none"));
  results.records.push_back(record("aten::cumsum", "float32", Verdict::kFallback, "none"));
  CoreOps core;
  core.ops = {"aten::cumsum"};
  const Analysis a = analyze(results, core);
  std::vector<std::string> fallbacks, worst;
  for (const auto& f : a.fallbacks) fallbacks.push_back(f.op);
  for (const auto& o : a.worst) worst.push_back(o.op);
  EXPECT_EQ(fallbacks, (std::vector<std::string>{"aten::cumsum", "aten::cummax", "aten::_compute_linear_combination",
                                                 "aten::_test_optional_intlist"}));
  EXPECT_EQ(worst, (std::vector<std::string>{"aten::cumsum", "aten::cummax", "aten::_compute_linear_combination",
                                             "aten::_foobar", "aten::_test_optional_intlist"}));
  EXPECT_EQ(a.worst[0].tier, OpTier::kCore);
  EXPECT_EQ(a.worst[1].tier, OpTier::kPublic);
  EXPECT_EQ(a.fallbacks[3].tier, OpTier::kTest);

  // Without a core set, the shipped releases' is taken.
  const std::string shipped = *shipped_core_ops().ops.begin();
  results.records = {record(shipped, "float32", Verdict::kFallback, "none")};
  EXPECT_EQ(analyze(results).fallbacks[0].tier, OpTier::kCore) << shipped;
}

}  // namespace
}  // namespace mps_audit
