// Tests of reading PyTorch's MPS expectations and of what they do to records (Note [Expected verdicts]).
#include "emu/expectations.h"

#include <gtest/gtest.h>

#include "common/diagnostics.h"
#include "emu/expected_verdicts.h"

namespace mps_audit::emu {
namespace {

// A small file in the format tools/expectations/extract.py writes.
const char* const kFile =
    "# mps-audit-expectations/1\n"
    "# release: 2.11.0\n"
    "# operator\tdtypes\tkind\tscope\tmacos\tlist\topinfo\tmapping\tsource\treason\n"
    "*\tfloat64,complex128\tunimplemented\tforward\t*\tglobal: float64/complex128\t*\tglobal\tcommon_mps.py:830\t\n"
    "aten::pow\tbool\tunimplemented\tforward\t*\tUNIMPLEMENTED_XFAILLIST\tpow\taten_name\tcommon_mps.py:412\t"
    "no bool\n"
    "aten::cumsum\tint64\twrong\tforward\t<15.0\tMACOS_BEFORE_15_0_XFAILLIST\tcumsum\taten_name\tcommon_mps.py:300\t"
    "int64 accumulates wrongly before macOS 15\n"
    "aten::cumsum\tint64\tcrash\tgradient\t*\tXFAILLIST_GRAD\tcumsum\taten_name\tcommon_mps.py:950\t\n"
    "aten::sort.stable\tfloat16\tflaky\tforward\t>=13.3,<14.4\tON_MPS_XFAILLIST\tsort\taten_name\tcommon_mps.py:700\t"
    "\n"
    "aten::bernoulli\t*\tnot_a_bug\tforward\t*\tUNDEFINED_XFAILLIST\tbernoulli\taten_name\tcommon_mps.py:600\t"
    "random\n"
    "aten::sin\tfloat32\tpasses\tforward\t*\tALLOWLIST_OP\tsin\taten_name\ttest/test_mps.py:7200\t\n"
    "-\tfloat32\terror\tforward\t*\tON_MPS_XFAILLIST\tbfloat16\tunmappable: no operator 'bfloat16'\tx.py:1\t\n";

const Expectations& file() {
  static const Expectations e = Expectations::parse(kFile, "mps_expectations.tsv");
  return e;
}

TEST(Expectations, ReadsEveryColumnAndCountsUnmappableEntries) {
  const Expectations& e = file();
  EXPECT_EQ(e.release(), "2.11.0");
  ASSERT_EQ(e.rows().size(), 8u);
  EXPECT_EQ(e.unmappable(), 1u);
  const Expectation& pow = e.rows()[1];
  EXPECT_EQ(pow.op, "aten::pow");
  EXPECT_EQ(pow.dtypes, std::vector<std::string>({"bool"}));
  EXPECT_EQ(pow.kind, ExpectationKind::kUnimplemented);
  EXPECT_EQ(pow.scope, ExpectationScope::kForward);
  EXPECT_EQ(pow.list, "UNIMPLEMENTED_XFAILLIST");
  EXPECT_EQ(pow.source, "common_mps.py:412");
  EXPECT_EQ(pow.reason, "no bool");
  EXPECT_EQ(pow.where.line, 5);
  EXPECT_TRUE(e.rows()[5].dtypes.empty());  // '*': every dtype
}

TEST(Expectations, FindsByOverloadBaseNameAndGlobalRowsInScopeDtypeAndMacos) {
  const Expectations& e = file();
  const auto kinds = [&](const char* op, const char* dtype, ExpectationScope scope, MacosVersion macos) {
    std::vector<std::string> out;
    for (const Expectation* x : e.find(op, dtype, scope, macos)) out.emplace_back(to_string(x->kind));
    return out;
  };
  using V = std::vector<std::string>;
  const auto fwd = ExpectationScope::kForward;
  EXPECT_EQ(kinds("aten::pow.Tensor_Scalar", "bool", fwd, 1400), V({"unimplemented"}));  // base name: every overload
  EXPECT_EQ(kinds("aten::pow.Tensor_Scalar", "int64", fwd, 1400), V());
  EXPECT_EQ(kinds("aten::pow.Tensor_Scalar", "float64", fwd, 1400), V({"unimplemented"}));  // '*': every operator
  EXPECT_EQ(kinds("aten::cumsum", "int64", fwd, 1400), V({"wrong"}));
  EXPECT_EQ(kinds("aten::cumsum", "int64", fwd, 1500), V());  // "<15.0"
  EXPECT_EQ(kinds("aten::cumsum", "int64", ExpectationScope::kGradient, 1500), V({"crash"}));
  EXPECT_EQ(kinds("aten::sort.stable", "float16", fwd, 1300), V());  // ">=13.3,<14.4"
  EXPECT_EQ(kinds("aten::sort.stable", "float16", fwd, 1400), V({"flaky"}));
  EXPECT_EQ(kinds("aten::sort.stable", "float16", fwd, 1404), V());
  EXPECT_EQ(kinds("aten::sort", "float16", fwd, 1400), V());  // a row of one overload names only that one
  // The rows that name an operator, whatever their scope, dtype or condition, and not the every-operator rows.
  EXPECT_EQ(e.naming("aten::cumsum.out").size(), 2u);
  EXPECT_EQ(e.naming("aten::pow.Scalar").size(), 1u);
  EXPECT_EQ(e.naming("aten::sort.stable").size(), 1u);
  EXPECT_TRUE(e.naming("aten::sort").empty());
  EXPECT_TRUE(e.naming("aten::cos").empty());
}

TEST(Expectations, ParsesMacosVersions) {
  EXPECT_EQ(parse_macos_version("14.4.1"), 1404);
  EXPECT_EQ(parse_macos_version("26"), 2600);
  EXPECT_EQ(parse_macos_version("13.3"), 1303);
  EXPECT_FALSE(parse_macos_version("").has_value());
  EXPECT_FALSE(parse_macos_version("x14").has_value());
}

struct BadFile {
  const char* name;
  std::string text;
  int line, column;
  std::string message;
};

class ExpectationsBadInput : public ::testing::TestWithParam<BadFile> {};

TEST_P(ExpectationsBadInput, NamesFileLineAndColumn) {
  const BadFile& b = GetParam();
  try {
    Expectations::parse(b.text, "x.tsv");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().file, "x.tsv");
    EXPECT_EQ(e.where().line, b.line);
    EXPECT_EQ(e.where().column, b.column);
    EXPECT_EQ(e.message().substr(0, b.message.size()), b.message);
  }
}

const std::string kHead = "# mps-audit-expectations/1\n";
INSTANTIATE_TEST_SUITE_P(
    Lines, ExpectationsBadInput,
    ::testing::Values(
        BadFile{"NoFormatLine", "aten::sin\t*\terror\tforward\t*\tL\tsin\tm\ts\tr\n", 1, 1, "not an expectations file"},
        BadFile{"OtherFormat", "# mps-audit-expectations/9\n", 1, 3, "format 'mps-audit-expectations/9'"},
        BadFile{"TooFewColumns", kHead + "aten::sin\t*\terror\n", 2, 1, "expected 10 tab-separated columns"},
        BadFile{"UnknownKind", kHead + "aten::sin\t*\twrnog\tforward\t*\tL\tsin\tm\ts\tr\n", 2, 13,
                "unknown kind 'wrnog' (did you mean 'wrong'?)"},
        BadFile{"UnknownScope", kHead + "aten::sin\t*\twrong\tforwards\t*\tL\tsin\tm\ts\tr\n", 2, 19,
                "unknown scope 'forwards'"},
        BadFile{"BadCondition", kHead + "aten::sin\t*\twrong\tforward\t>=13.3,<=15\tL\tsin\tm\ts\tr\n", 2, 34,
                "macOS condition '<=15'"},
        BadFile{"BadOperator", kHead + "sin\t*\twrong\tforward\t*\tL\tsin\tm\ts\tr\n", 2, 1, "operator 'sin'"},
        BadFile{"NoDtypes", kHead + "aten::sin\t\twrong\tforward\t*\tL\tsin\tm\ts\tr\n", 2, 11, "no dtypes"}),
    [](const ::testing::TestParamInfo<BadFile>& info) { return std::string(info.param.name); });

ProbeResult record(const char* op, const char* dtype, Verdict v) {
  ProbeResult r;
  r.op = op;
  r.dtype = dtype;
  r.verdict = v;
  r.basis = kBasisRegistry;
  return r;
}

TEST(ExpectedVerdicts, PredictRefusesAnUnimplementedDtypeThatRanNatively) {
  ProbeResult r = record("aten::pow.Tensor_Scalar", "bool", Verdict::kPass);
  apply_expectations(r, file(), ExpectationMode::kPredict, 1400);
  EXPECT_EQ(r.verdict, Verdict::kUnsupported);
  EXPECT_EQ(r.observed, "pass");
  EXPECT_EQ(r.basis, kBasisExpectations);
  ASSERT_TRUE(r.expectation);
  EXPECT_EQ(r.expectation->list, "UNIMPLEMENTED_XFAILLIST");
  EXPECT_EQ(r.expectation->release, "2.11.0");
  EXPECT_NE(r.message.find("not implemented for bool on MPS"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("common_mps.py:412"), std::string::npos) << r.message;

  // Where the emulated release has no kernel and it fell back, the real Mac falls back too: kept, with the entry.
  ProbeResult fell_back = record("aten::pow.Scalar", "bool", Verdict::kFallback);
  apply_expectations(fell_back, file(), ExpectationMode::kPredict, 1400);
  EXPECT_EQ(fell_back.verdict, Verdict::kFallback);
  EXPECT_TRUE(fell_back.observed.empty());
  EXPECT_EQ(fell_back.basis, kBasisRegistry);
  EXPECT_TRUE(fell_back.expectation);
}

TEST(ExpectedVerdicts, PredictShowsAnExpectedWrongResultAsKnownFailureNotAsPass) {
  ProbeResult r = record("aten::cumsum", "int64", Verdict::kPass);
  apply_expectations(r, file(), ExpectationMode::kPredict, 1400);
  EXPECT_EQ(r.verdict, Verdict::kKnownFailure);
  EXPECT_EQ(r.observed, "pass");
  EXPECT_EQ(r.basis, kBasisExpectations);
  EXPECT_NE(r.message.find("wrong results"), std::string::npos) << r.message;

  // The same pair on macOS 15, where the list's condition does not hold: a plain pass.
  ProbeResult on15 = record("aten::cumsum", "int64", Verdict::kPass);
  apply_expectations(on15, file(), ExpectationMode::kPredict, 1500);
  EXPECT_EQ(on15.verdict, Verdict::kPass);
  EXPECT_FALSE(on15.expectation);
}

TEST(ExpectedVerdicts, PredictKeepsWhatTheEmulatorSawFailAndNotesNonBugs) {
  ProbeResult refused = record("aten::add.Tensor", "float64", Verdict::kUnsupported);
  apply_expectations(refused, file(), ExpectationMode::kPredict, 1400);
  EXPECT_EQ(refused.verdict, Verdict::kUnsupported);
  ASSERT_TRUE(refused.expectation);
  EXPECT_EQ(refused.expectation->list, "global: float64/complex128");
  EXPECT_EQ(refused.basis, kBasisRegistry);

  ProbeResult random = record("aten::bernoulli", "float32", Verdict::kPass);
  apply_expectations(random, file(), ExpectationMode::kPredict, 1400);
  EXPECT_EQ(random.verdict, Verdict::kPass);
  ASSERT_TRUE(random.expectation);
  EXPECT_EQ(random.expectation->kind, "not_a_bug");

  ProbeResult known_pass = record("aten::sin", "float32", Verdict::kPass);  // an allow-list row is no failure
  apply_expectations(known_pass, file(), ExpectationMode::kPredict, 1400);
  EXPECT_EQ(known_pass.verdict, Verdict::kPass);
  EXPECT_FALSE(known_pass.expectation);
}

TEST(ExpectedVerdicts, CheckMarksExpectedFailuresXfailAndStaleEntriesXpass) {
  ProbeResult wrong = record("aten::cumsum", "int64", Verdict::kMismatch);
  wrong.message = "output 0 differs";
  apply_expectations(wrong, file(), ExpectationMode::kCheck, 1400);
  EXPECT_EQ(wrong.verdict, Verdict::kXfail);
  EXPECT_EQ(wrong.observed, "mismatch");
  EXPECT_NE(wrong.message.find("output 0 differs"), std::string::npos);

  ProbeResult stale = record("aten::cumsum", "int64", Verdict::kPass);
  apply_expectations(stale, file(), ExpectationMode::kCheck, 1400);
  EXPECT_EQ(stale.verdict, Verdict::kXpass);
  EXPECT_NE(stale.message.find("MACOS_BEFORE_15_0_XFAILLIST"), std::string::npos) << stale.message;

  // A fallback of a dtype the lists call not implemented agrees with them; a pass of a flaky entry proves nothing.
  ProbeResult fell_back = record("aten::pow.Scalar", "bool", Verdict::kFallback);
  apply_expectations(fell_back, file(), ExpectationMode::kCheck, 1400);
  EXPECT_EQ(fell_back.verdict, Verdict::kXfail);
  ProbeResult flaky = record("aten::sort.stable", "float16", Verdict::kPass);
  apply_expectations(flaky, file(), ExpectationMode::kCheck, 1400);
  EXPECT_EQ(flaky.verdict, Verdict::kPass);

  // The spec's own judgement stands.
  ProbeResult spec_xfail = record("aten::cumsum", "int64", Verdict::kXfail);
  apply_expectations(spec_xfail, file(), ExpectationMode::kCheck, 1400);
  EXPECT_EQ(spec_xfail.verdict, Verdict::kXfail);
  EXPECT_FALSE(spec_xfail.expectation);
}

// Rows of each kind of evidence, for Note [Expected verdicts]'s rules.
const Expectations& evidence() {
  static const Expectations e = Expectations::parse(
      "# mps-audit-expectations/1\n"
      "# release: 1.13.1\n"
      "aten::mul\t*\tflaky\tforward\t*\tBLOCKLIST\tmul\taten_name\ttest_mps.py:7649\tflaky\n"
      "aten::nonzero\tfloat32\tcrash\tforward\t*\tBLOCKLIST\tnonzero\taten_name\ttest_mps.py:7651\t\n"
      "aten::to\t*\tunimplemented\tforward\t*\tUNIMPLEMENTED_XFAILLIST\tto\taten_name\tcommon_mps.py:590\t\n"
      "aten::matrix_exp\t*\twrong\tforward\t<15.0\tMACOS_BEFORE_15_0_XFAILLIST\tmatrix_exp\taten_name\tc.py:9\t\n"
      "aten::sin\tfloat32\tpasses\tforward\t*\tALLOWLIST_OP\tsin\taten_name\ttest_mps.py:7200\t\n"
      "aten::log_softmax.int\tfloat32\tunimplemented\tforward\t*\tUNIMPLEMENTED_XFAILLIST\tlog_softmaxwith_dtype\t"
      "aten_name\tcommon_mps.py:613\t\n"
      "aten::mm\t*\tunimplemented\tforward\t*\tUNIMPLEMENTED_XFAILLIST\tsparse.mmreduce\tname\ttest_mps.py:775\t\n",
      "evidence.tsv");
  return e;
}

// A flaky entry never changes a verdict, over a pass or over a fallback, on emulated MPS or on a real Mac: the record
// carries it.
TEST(ExpectedVerdicts, AFlakyEntryAnnotatesAndNeverDecides) {
  for (const ExpectationMode mode : {ExpectationMode::kPredict, ExpectationMode::kCheck}) {
    for (const Verdict seen : {Verdict::kPass, Verdict::kFallback}) {
      ProbeResult r = record("aten::mul.Tensor", "float32", seen);
      apply_expectations(r, evidence(), mode, 1400);
      EXPECT_EQ(r.verdict, seen) << to_string(mode);
      EXPECT_TRUE(r.observed.empty());
      ASSERT_TRUE(r.expectation);
      EXPECT_EQ(r.expectation->kind, "flaky");
      EXPECT_FALSE(decides_verdict(*r.expectation));
    }
  }
}

// A crash entry over a pass is a known failure; over an observed fallback, the fallback stays what the record says.
TEST(ExpectedVerdicts, ACrashEntryDecidesAPassButNeverAnObservedFallback) {
  ProbeResult passed = record("aten::nonzero", "float32", Verdict::kPass);
  apply_expectations(passed, evidence(), ExpectationMode::kPredict, 1400);
  EXPECT_EQ(passed.verdict, Verdict::kKnownFailure);
  EXPECT_EQ(passed.observed, "pass");
  ProbeResult fell_back = record("aten::nonzero", "float32", Verdict::kFallback);
  apply_expectations(fell_back, evidence(), ExpectationMode::kPredict, 1400);
  EXPECT_EQ(fell_back.verdict, Verdict::kFallback);
  EXPECT_EQ(fell_back.basis, kBasisRegistry);
  ASSERT_TRUE(fell_back.expectation);
  EXPECT_EQ(fell_back.expectation->kind, "crash");
}

// An entry keyed on a whole OpInfo is about some of its inputs: it annotates every call of the operator, unless it
// states the condition it is about (a macOS range).
TEST(ExpectedVerdicts, AWholeOpInfoEntryAnnotatesUnlessItStatesItsCondition) {
  ProbeResult to = record("aten::to.dtype", "float32", Verdict::kPass);
  apply_expectations(to, evidence(), ExpectationMode::kPredict, 1400);
  EXPECT_EQ(to.verdict, Verdict::kPass);
  ASSERT_TRUE(to.expectation);
  EXPECT_TRUE(to.expectation->every_dtype);
  ProbeResult exp14 = record("aten::matrix_exp", "float32", Verdict::kPass);
  apply_expectations(exp14, evidence(), ExpectationMode::kPredict, 1400);
  EXPECT_EQ(exp14.verdict, Verdict::kKnownFailure);
  // An OpInfo variant that converts with dtype= is about that conversion, not about every call in float32.
  ProbeResult with_dtype = record("aten::log_softmax.int", "float32", Verdict::kPass);
  apply_expectations(with_dtype, evidence(), ExpectationMode::kPredict, 1400);
  EXPECT_EQ(with_dtype.verdict, Verdict::kPass);
  ASSERT_TRUE(with_dtype.expectation);
  EXPECT_FALSE(with_dtype.expectation->decided);
  // A sparse OpInfo's entry is about sparse inputs.
  ProbeResult mm = record("aten::mm", "float32", Verdict::kPass);
  apply_expectations(mm, evidence(), ExpectationMode::kPredict, 1400);
  EXPECT_EQ(mm.verdict, Verdict::kPass);
  ProbeResult exp15 = record("aten::matrix_exp", "float32", Verdict::kPass);
  apply_expectations(exp15, evidence(), ExpectationMode::kPredict, 1500);
  EXPECT_EQ(exp15.verdict, Verdict::kPass);
}

// An allow list's silence on a dtype is noted as not seen passing, and decides nothing.
TEST(ExpectedVerdicts, ADtypeTheAllowListDoesNotNameIsNotSeenPassing) {
  ProbeResult half = record("aten::sin", "float16", Verdict::kPass);
  apply_expectations(half, evidence(), ExpectationMode::kPredict, 1400);
  EXPECT_EQ(half.verdict, Verdict::kPass);
  ASSERT_TRUE(half.expectation);
  EXPECT_EQ(half.expectation->kind, "not_seen_passing");
  EXPECT_NE(half.expectation->reason.find("float32"), std::string::npos) << half.expectation->reason;
  ProbeResult single = record("aten::sin", "float32", Verdict::kPass);
  apply_expectations(single, evidence(), ExpectationMode::kPredict, 1400);
  EXPECT_FALSE(single.expectation);
}

TEST(ExpectedVerdicts, ModeFollowsTheTargetAndRefusesOtherTargets) {
  const Target emulated{TargetKind::kMpsEmu, {}}, mps{TargetKind::kMps, {}}, cuda{TargetKind::kCuda, {}};
  EXPECT_EQ(expectation_mode("auto", emulated), ExpectationMode::kPredict);
  EXPECT_EQ(expectation_mode("auto", mps), ExpectationMode::kCheck);
  EXPECT_EQ(expectation_mode("auto", cuda), ExpectationMode::kOff);
  EXPECT_EQ(expectation_mode("check", emulated), ExpectationMode::kCheck);
  EXPECT_EQ(expectation_mode("off", mps), ExpectationMode::kOff);
  EXPECT_THROW(expectation_mode("predict", cuda), UserError);
  EXPECT_THROW(expectation_mode("maybe", emulated), UserError);
}

}  // namespace
}  // namespace mps_audit::emu
