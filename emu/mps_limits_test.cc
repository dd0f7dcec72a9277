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
    when: [axis_from_last_gt:3]
    since: 2.7.0
    until: 2.15.0
  - id: old-macos-bytes
    summary: an array over 4 GiB aborts
    outcome: error
    message: total bytes of NDArray > 2**32
    source: a thread
    threads: [https://github.com/pytorch/pytorch/issues/1]
    ops: [aten::masked_fill_.Scalar]
    when: [bytes_gt:4294967296]
    macos: "<15.0"
  - id: conv-output
    summary: a 1-d or 2-d convolution refuses an output over 65536 in a dimension
    outcome: refusal
    message: Output channels > 65536 not supported at the MPS device.
    source: Convolution.mm
    threads: [https://github.com/pytorch/pytorch/issues/152278]
    ops: [aten::_mps_convolution]
    when: [out_dim_gt:65536, rank_lt:5]
    macos: "<15.1"
  - id: topk-k
    summary: topk refuses a large k
    outcome: error
    message: Currently topk on mps works only for k<=16
    source: TopK
    threads: [https://github.com/pytorch/pytorch/issues/78915]
    ops: [aten::topk]
    when: ["arg:k>16", dim_gt:10]
    since: 1.13.0
    until: 2.0.0
)";

const MpsLimits& limits() {
  static const MpsLimits l = MpsLimits::parse(kLimits, "mps_limits.yaml");
  return l;
}

TEST(MpsLimits, AScanMeetsItsAxisLimitOnlyPastTheFourInnermostAxes) {
  const MpsLimit& scan = limits().limits()[0];
  const std::vector<int64_t> rank5 = {2, 1, 3, 4, 5};
  EXPECT_FALSE(scan.on_results());
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

// A limit on results is checked once they are made, and every atom must hold: a 3-d convolution (a rank-5 input)
// is exempt whatever its output.
TEST(MpsLimits, EveryAtomMustHoldAndALimitOnResultsLooksAtThem) {
  const MpsLimit& conv = limits().limits()[2];
  EXPECT_TRUE(conv.on_results());
  LimitedCall call;
  call.shapes = {{1, 1, 3}, {65537, 1, 3}};
  call.itemsizes = {4, 4};
  EXPECT_EQ(conv.met_by(call), "");  // not computed yet: no result
  call.results = {{1, 65537, 3}};
  EXPECT_EQ(conv.met_by(call), "a result of size 65537 in a dimension and tensors of rank 3 at most");
  call.results = {{1, 65536, 3}};
  EXPECT_EQ(conv.met_by(call), "");  // 65536 itself is within
  call.shapes = {{1, 1, 2, 3, 3}, {65537, 1, 1, 1, 1}};
  call.results = {{1, 65537, 2, 3, 3}};
  EXPECT_EQ(conv.met_by(call), "");  // a rank-5 argument: a 3-d convolution
}

TEST(MpsLimits, AnArgumentsValueIsComparedAsTheKnownBugsCompareIt) {
  const MpsLimit& topk = limits().limits()[3];
  LimitedCall call;
  call.shapes = {{4, 30}};
  call.args = {{"k", "20"}, {"largest", "true"}};
  EXPECT_EQ(topk.met_by(call), "k 20 and a tensor of size 30 in a dimension");
  call.args["k"] = "16";
  EXPECT_EQ(topk.met_by(call), "");
  call.args.erase("k");
  EXPECT_EQ(topk.met_by(call), "");  // no such argument: not met
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
  EXPECT_EQ(limits().of("aten::_mps_convolution", "2.14.1", 1500).size(), 1u);  // 15.0 is before 15.1
  EXPECT_EQ(limits().of("aten::_mps_convolution", "2.14.1", 1501).size(), 0u);
  EXPECT_EQ(limits().conditions_in("2.14.1"), (std::vector<std::string>{"<15.0", "<15.1"}));
  EXPECT_EQ(limits().conditions_in("1.13.1"), (std::vector<std::string>{"<15.0", "<15.1"}));
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
      {head + "    outcome: abort\n" + rest + "    when: [rank_gt:16]\n", "unknown outcome 'abort'", 4, 14},
      {head + "    outcome: crash\n" + rest + "    when: [rank_gt:16, rank_ge:16]\n", "unknown condition 'rank_ge:16'",
       10, 24},
      {head + "    outcome: crash\n" + rest + "    when: rank_gt:16\n", "'when' must be a list", 10, 11},
      {head + "    outcome: crash\n" + rest + "    when: [\"arg:k>\"]\n", "unknown condition 'arg:k>'", 10, 12},
      {head + "    outcome: crash\n" + rest + "    when: [rank_gt:16]\n    sinse: 2.0.0\n", "unknown key 'sinse'", 11,
       5},
      {head + "    outcome: crash\n" + rest + "    when: [rank_gt:16]\n    since: 2.x\n", "since '2.x'", 11, 12},
      {head + "    outcome: crash\n" + rest + "    when: [rank_gt:16]\n    macos: \"<=fifteen\"\n", "macOS condition",
       11, 12},
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
