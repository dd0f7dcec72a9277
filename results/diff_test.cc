// Tests of Note [What counts as a regression], one rule at a time.
#include "results/diff.h"

#include <gtest/gtest.h>

namespace mps_audit {
namespace {

Results one(Verdict v, const std::string& op = "aten::sin") {
  Results r;
  ProbeResult p;
  p.op = op;
  p.dtype = "float32";
  p.verdict = v;
  r.records.push_back(p);
  return r;
}

enum class Kind { kRegression, kImprovement, kChanged, kNewlyProbed, kNoLongerProbed, kUnchanged };

Kind kind(Verdict before, Verdict after) {
  const RunDiff d = diff_runs(one(before), one(after));
  EXPECT_EQ(d.regressions.size() + d.improvements.size() + d.changed.size() + d.newly_probed.size() +
                d.no_longer_probed.size() + d.unchanged,
            1u);
  if (!d.regressions.empty()) return Kind::kRegression;
  if (!d.improvements.empty()) return Kind::kImprovement;
  if (!d.changed.empty()) return Kind::kChanged;
  if (!d.newly_probed.empty()) return Kind::kNewlyProbed;
  if (!d.no_longer_probed.empty()) return Kind::kNoLongerProbed;
  return Kind::kUnchanged;
}

TEST(Diff, WorseRanksAndNewFailuresRegress) {
  EXPECT_EQ(kind(Verdict::kPass, Verdict::kFallback), Kind::kRegression);
  EXPECT_EQ(kind(Verdict::kFallback, Verdict::kUnsupported), Kind::kRegression);
  EXPECT_EQ(kind(Verdict::kPass, Verdict::kXfail), Kind::kRegression);
  for (Verdict bad : {Verdict::kMismatch, Verdict::kError, Verdict::kCrash, Verdict::kTimeout}) {
    for (Verdict was : {Verdict::kPass, Verdict::kFallback, Verdict::kUnsupported, Verdict::kSkip, Verdict::kXfail}) {
      EXPECT_EQ(kind(was, bad), Kind::kRegression) << to_string(was) << " -> " << to_string(bad);
    }
  }
}

TEST(Diff, ImprovementsNeverFail) {
  EXPECT_EQ(kind(Verdict::kFallback, Verdict::kPass), Kind::kImprovement);
  EXPECT_EQ(kind(Verdict::kUnsupported, Verdict::kFallback), Kind::kImprovement);
  EXPECT_EQ(kind(Verdict::kCrash, Verdict::kPass), Kind::kImprovement);
  EXPECT_FALSE(diff_runs(one(Verdict::kCrash), one(Verdict::kPass)).has_regressions());
}

TEST(Diff, SkipsAndSameRankAreListedNotGated) {
  EXPECT_EQ(kind(Verdict::kPass, Verdict::kSkip), Kind::kNoLongerProbed);
  EXPECT_EQ(kind(Verdict::kSkip, Verdict::kFallback), Kind::kNewlyProbed);
  EXPECT_EQ(kind(Verdict::kCrash, Verdict::kMismatch), Kind::kChanged);
  EXPECT_EQ(kind(Verdict::kUnsupported, Verdict::kXfail), Kind::kChanged);
  EXPECT_EQ(kind(Verdict::kPass, Verdict::kPass), Kind::kUnchanged);
}

TEST(Diff, DisappearedRecordsRegressUnlessTheyWereSkips) {
  Results base = one(Verdict::kPass, "aten::cos");
  base.records.push_back(one(Verdict::kSkip, "aten::erf").records[0]);
  const RunDiff d = diff_runs(base, one(Verdict::kPass, "aten::sin"));
  ASSERT_EQ(d.regressions.size(), 1u);
  EXPECT_EQ(d.regressions[0].op, "aten::cos");
  EXPECT_FALSE(d.regressions[0].in_new);
  ASSERT_EQ(d.removed.size(), 1u);
  EXPECT_EQ(d.removed[0].op, "aten::erf");
  ASSERT_EQ(d.added.size(), 1u);
  EXPECT_EQ(d.added[0].op, "aten::sin");
}

TEST(Diff, NamesTheEnvironmentsDifferences) {
  RunEnvironment a, b;
  a.torch_version = "1.13.0";
  b.torch_version = "2.11.0";
  a.os = "Linux 6.1";
  b.os = "Linux 6.2";  // not a difference verdicts depend on
  EXPECT_EQ(environment_differences(a, b), std::vector<std::string>{"torch_version: 1.13.0 -> 2.11.0"});
}

}  // namespace
}  // namespace mps_audit
