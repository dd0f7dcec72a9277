// Tests of the limits of MPS's kernels (Note [MPS limits]).
#include "emu/mps_limits.h"

#include <gtest/gtest.h>

#include "common/diagnostics.h"

namespace mps_audit::emu {
namespace {

const char* const kLimits = R"(format: mps-audit-mps-limits/1
limits:
  - id: scan-axis
    summary: a scan along a leading axis aborts
    outcome: crash
    message: "failed assertion `axis = 0, 1, 2, 3'"
    source: MPSNDArrayScan.mm:251
    threads: [https://github.com/pytorch/pytorch/issues/187105]
    ops: [aten::cumsum, aten::sort.stable]
    when: axis_from_last_gt:3
    since: 2.7.0
    until: 2.15.0
  - id: old-macos-bytes
    summary: an array over 4 GiB aborts
    outcome: error
    message: total bytes of NDArray > 2**32
    source: a thread
    threads: [https://github.com/pytorch/pytorch/issues/1]
    ops: [aten::masked_fill_.Scalar]
    when: bytes_gt:4294967296
    macos: "<15.0"
)";

const MpsLimits& limits() {
  static const MpsLimits l = MpsLimits::parse(kLimits, "mps_limits.yaml");
  return l;
}

TEST(MpsLimits, AScanMeetsItsAxisLimitOnlyPastTheFourInnermostAxes) {
  const MpsLimit& scan = limits().limits()[0];
  const std::vector<int64_t> rank5 = {2, 1, 3, 4, 5};
  EXPECT_EQ(scan.met_by({{rank5}, {4}, 0}), "dim 0 of a rank-5 tensor");
  EXPECT_EQ(scan.met_by({{rank5}, {4}, -5}), "dim -5 of a rank-5 tensor");
  EXPECT_EQ(scan.met_by({{rank5}, {4}, 1}), "");   // the fourth axis from the last
  EXPECT_EQ(scan.met_by({{rank5}, {4}, -1}), "");  // the last
  EXPECT_EQ(scan.met_by({{{3, 4}}, {4}, 0}), "");
  EXPECT_EQ(scan.met_by({{rank5}, {4}, std::nullopt}), "");  // no dim: not a scan along one
  EXPECT_EQ(scan.met_by({{rank5}, {4}, 7}), "");             // out of range: the operator's own error
}

TEST(MpsLimits, ASizeLimitCountsBytesOfAnyTensorArgument) {
  const MpsLimit& bytes = limits().limits()[1];
  EXPECT_EQ(bytes.met_by({{{2}, {1024, 1024, 1025}}, {1, 4}, std::nullopt}), "a tensor of 4299161600 bytes");
  EXPECT_EQ(bytes.met_by({{{1024, 1024, 1024}}, {4}, std::nullopt}), "");  // exactly 2**32: not past it
}

TEST(MpsLimits, ALimitHoldsInItsReleasesAndMacosVersionsForTheOperatorsItNames) {
  EXPECT_EQ(limits().of("aten::cumsum.out", "2.14.1", 1500).size(), 1u);
  EXPECT_EQ(limits().of("aten::cumsum", "2.6.0", 1500).size(), 0u);   // before `since`
  EXPECT_EQ(limits().of("aten::cumsum", "2.15.0", 1500).size(), 0u);  // from `until` on
  EXPECT_EQ(limits().of("aten::sort.stable", "2.14.1", 1500).size(), 1u);
  EXPECT_EQ(limits().of("aten::sort", "2.14.1", 1500).size(), 0u);  // another overload than the one named
  EXPECT_EQ(limits().of("aten::masked_fill_.Scalar", "2.14.1", 1402).size(), 1u);
  EXPECT_EQ(limits().of("aten::masked_fill_.Scalar", "2.14.1", 1500).size(), 0u);
  EXPECT_EQ(limits().of("aten::abs", "2.14.1", 1500).size(), 0u);
}

TEST(MpsLimits, TheMessageNamesTheLimitWhatMetItAndItsSource) {
  EXPECT_EQ(limit_message(limits().limits()[0], "dim 0 of a rank-5 tensor"),
            "failed assertion `axis = 0, 1, 2, 3' (emulated MPS limit scan-axis: dim 0 of a rank-5 tensor; "
            "MPSNDArrayScan.mm:251)");
}

// Each broken form: the message and where it points.
TEST(MpsLimits, ABrokenFileSaysWhatAndWhere) {
  const std::string head = "format: mps-audit-mps-limits/1\nlimits:\n  - id: x\n";
  const std::string rest = "    summary: s\n    message: m\n    source: s\n    threads: [t]\n    ops: [aten::abs]\n";
  struct Case {
    std::string text, message;
    int line, col;
  };
  const std::vector<Case> cases = {
      {head + "    outcome: abort\n" + rest + "    when: rank_gt:16\n", "unknown outcome 'abort'", 4, 14},
      {head + "    outcome: crash\n" + rest + "    when: rank_ge:16\n", "unknown condition 'rank_ge:16'", 10, 11},
      {head + "    outcome: crash\n" + rest + "    when: rank_gt:16\n    sinse: 2.0.0\n", "unknown key 'sinse'", 11, 5},
      {head + "    outcome: crash\n" + rest + "    when: rank_gt:16\n    since: 2.x\n", "since '2.x'", 11, 12},
      {head + "    outcome: crash\n" + rest + "    when: rank_gt:16\n    macos: \"<=fifteen\"\n", "macOS condition", 11,
       12},
      {"format: mps-audit-known-bugs/2\nlimits: []\n", "not a file of MPS limits", 1, 9},
      {"format: mps-audit-mps-limits/1\nlimits: [\n", "not YAML", 3, 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      MpsLimits::parse(c.text, "mps_limits.yaml");
      ADD_FAILURE() << "parsed";
    } catch (const UserError& e) {
      EXPECT_NE(e.message().find(c.message), std::string::npos) << e.message();
      EXPECT_EQ(e.where().line, c.line) << e.message();
      EXPECT_EQ(e.where().column, c.col) << e.message();
    }
  }
}

TEST(MpsLimits, TheShippedLimitsReadAndNameOperatorsWithTheirThreads) {
  const auto shipped = load_shipped_mps_limits();
  ASSERT_TRUE(shipped.has_value());
  ASSERT_FALSE(shipped->limits().empty());
  for (const auto& l : shipped->limits()) {
    EXPECT_FALSE(l.threads.empty()) << l.id;
    for (const auto& t : l.threads) EXPECT_EQ(t.rfind("https://github.com/pytorch/pytorch/", 0), 0u) << l.id;
  }
}

}  // namespace
}  // namespace mps_audit::emu
