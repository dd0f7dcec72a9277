// Tests of analyse_calls: how a program's recorded calls are grouped under the replay's records (one per op x dtype)
// and counted, per call, per site and in the totals the reports show.
#include "model/calls_replay.h"

#include <gtest/gtest.h>

namespace mps_audit {
namespace {

RecordedCall recorded(size_t index, const std::string& op, const std::string& dtype, int64_t count,
                      std::map<std::string, std::map<std::string, int64_t>> sites) {
  RecordedCall c;
  c.index = index;
  c.op = op;
  c.dtype = dtype;
  c.count = count;
  c.seconds = 0.5 * static_cast<double>(count);
  c.in_bytes = 10;
  c.out_bytes = 30;
  c.sites = std::move(sites);
  return c;
}

ProbeResult record(const std::string& op, const std::string& dtype, Verdict v, const std::string& sample = "") {
  ProbeResult r;
  r.op = op;
  r.dtype = dtype;
  r.verdict = v;
  r.sample = sample;
  return r;
}

// Two calls of cumsum float32 (one record, it falls back), sin at two lines, a refused erfinv, a call in a dtype the
// prober does not probe, one the replay had no record for, one it skipped, and linear, which PyTorch's lists expect
// to give wrong results (known_failure over what the target did: pass).
CallsAudit analysed() {
  CallsFile f;
  f.sources = {{"a.py:1", "y = x.cumsum(0)"}};
  f.calls = {recorded(0, "aten::cumsum", "float32", 3, {{"a.py:1", {{"forward", 3}}}}),
             recorded(1, "aten::cumsum", "float32", 1, {{"a.py:5", {{"forward", 1}}}}),
             recorded(2, "aten::sin", "float32", 2, {{"a.py:1", {{"forward", 1}}}, {"a.py:9", {{"backward", 1}}}}),
             recorded(3, "aten::erfinv", "float16", 4, {{"a.py:9", {{"backward", 4}}}}),
             recorded(4, "aten::add", "float8_e4m3fn", 5, {{"a.py:5", {{"forward", 5}}}}),
             recorded(5, "aten::mul", "float32", 6, {{"a.py:5", {{"forward", 6}}}}),
             recorded(6, "aten::exp", "float32", 7, {{"a.py:5", {{"forward", 7}}}}),
             recorded(7, "aten::linear", "float32", 8, {{"a.py:7", {{"forward", 8}}}})};
  Results results;
  ProbeResult cumsum = record("aten::cumsum", "float32", Verdict::kFallback, "call:1");
  cumsum.fallback_ops = {"aten::cumsum.out"};
  ProbeResult exp = record("aten::exp", "float32", Verdict::kSkip);
  exp.message = "no sample fits";
  ProbeResult linear = record("aten::linear", "float32", Verdict::kKnownFailure);
  linear.observed = "pass";
  linear.expectation = ExpectationNote{};
  linear.expectation->kind = "wrong";
  linear.expectation->scope = "forward";
  linear.expectation->macos = "*";
  linear.expectation->decided = true;
  results.records = {cumsum, record("aten::sin", "float32", Verdict::kPass),
                     record("aten::erfinv", "float16", Verdict::kUnsupported), exp, linear};
  return analyse_calls(std::move(f), std::move(results));
}

TEST(AnalyseCalls, EachCallTakesItsRecordsVerdict) {
  const CallsAudit a = analysed();
  ASSERT_EQ(a.calls.size(), 8u);
  EXPECT_TRUE(a.calls[0].probed);
  EXPECT_EQ(a.calls[0].verdict, Verdict::kFallback);
  EXPECT_EQ(a.calls[0].fallback_ops, std::vector<std::string>({"aten::cumsum.out"}));
  EXPECT_EQ(a.calls[1].verdict, Verdict::kFallback);
  EXPECT_FALSE(a.calls[0].decided);  // the record's sample was the second call's
  EXPECT_TRUE(a.calls[1].decided);
  EXPECT_EQ(a.calls[2].verdict, Verdict::kPass);
  EXPECT_EQ(a.calls[3].verdict, Verdict::kUnsupported);
  for (size_t i : {4, 5, 6}) EXPECT_FALSE(a.calls[i].probed) << i;
  // A known failure is reported as what the target did, with the expectation beside it.
  EXPECT_EQ(a.calls[7].verdict, Verdict::kPass);
  EXPECT_TRUE(a.calls[7].expected_failure);
  EXPECT_FALSE(a.calls[0].expected_failure);
}

TEST(AnalyseCalls, CountsTheProgramsCallsInTheTotals) {
  const CallsAudit a = analysed();
  EXPECT_EQ(a.probed_calls, 3 + 1 + 2 + 4 + 8);
  EXPECT_EQ(a.fallback_calls, 4);
  EXPECT_EQ(a.failed_calls, 4);  // erfinv; linear ran fine here, whatever PyTorch expects of a real Mac
  EXPECT_EQ(a.expected_failures, 8);
  EXPECT_DOUBLE_EQ(a.seconds, 0.5 * (3 + 1 + 2 + 4 + 5 + 6 + 7 + 8));
  EXPECT_DOUBLE_EQ(a.fallback_seconds, 0.5 * 4);
  EXPECT_EQ(a.bytes_to_cpu, 4 * 10);  // each call that falls back moves its arguments, and its results back
  EXPECT_EQ(a.bytes_from_cpu, 4 * 30);
  EXPECT_EQ(a.not_probed, (std::map<std::string, int64_t>{
                              {"dtype float8_e4m3fn is not probed (MPS has no float8_e4m3fn)", 5},
                              {"no sample fits", 7},
                              {"not in the replay's plan (no CPU kernel, or the spec leaves the dtype out)", 6}}));
}

TEST(AnalyseCalls, GroupsCallsBySiteWorstFirstThenByCalls) {
  const CallsAudit a = analysed();
  std::vector<std::string> order;
  for (const auto& s : a.sites) order.push_back(s.site);
  // a.py:9 has a refusal, a.py:1 and a.py:5 a fallback (a.py:5 more calls), a.py:7 only passes.
  EXPECT_EQ(order, std::vector<std::string>({"a.py:9", "a.py:5", "a.py:1", "a.py:7"}));
  const CallSite& line9 = a.sites[0];
  EXPECT_EQ(line9.worst, Verdict::kUnsupported);
  EXPECT_EQ(line9.calls, 1 + 4);
  EXPECT_EQ(line9.replayed, std::vector<size_t>({2, 3}));
  const CallSite& line5 = a.sites[1];
  EXPECT_EQ(line5.worst, Verdict::kFallback);  // the calls not probed there do not count
  EXPECT_EQ(line5.calls, 1 + 5 + 6 + 7);
  EXPECT_EQ(line5.code, "");
  EXPECT_EQ(a.sites[2].code, "y = x.cumsum(0)");
  EXPECT_EQ(a.sites[2].calls, 3 + 1);
  EXPECT_EQ(a.sites[3].worst, Verdict::kPass);
}

}  // namespace
}  // namespace mps_audit
