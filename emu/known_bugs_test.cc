// Tests of the ledger of known MPS bugs and of the emulated Mac it is applied on (Note [Known bugs]).
#include "emu/known_bugs.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "common/diagnostics.h"

namespace mps_audit::emu {
namespace {

const char* const kLedger = R"(format: mps-audit-known-bugs/2
entries:
  - id: pytorch-154881
    source: https://github.com/pytorch/pytorch/issues/154881
    summary: cumsum on a 5-D tensor aborts
    kind: crash
    ops: [aten::cumsum]
    dtypes: [float32]
    when: [rank_ge:5]
    seen_in: 2.7.0
    fixed_in: unknown
    repro:
      op: aten::cumsum
      args: {self: {shape: [1, 2, 3, 4, 5]}, dim: 0}
  - id: pytorch-195163
    source: https://github.com/pytorch/pytorch/issues/195163
    summary: batched matmul silently wrong on M1/M2
    kind: wrong_result
    ops: [aten::bmm]
    dtypes: [float32]
    when: [any]
    seen_in: 2.14.0
    fixed_in: 2.15.0
    fix: https://github.com/pytorch/pytorch/pull/1
    fix_merged: 2026-09-01
    chips: [m1, m2]
  - id: pytorch-96610
    source: https://github.com/pytorch/pytorch/issues/96610
    summary: int64 cumsum fails on macOS 13.3
    kind: error
    ops: [aten::cumsum.out]
    dtypes: [all]
    when: [other]
    when_detail: a macOS 13.3 beta
    macos: ">=13.3,<13.4"
    fixed_in: unknown
)";

const KnownBugs& ledger() {
  static const KnownBugs b = KnownBugs::parse(kLedger, "mps_known_bugs.yaml");
  return b;
}

ProbeResult record(const char* op, const char* dtype, Verdict v) {
  ProbeResult r;
  r.op = op;
  r.dtype = dtype;
  r.verdict = v;
  r.basis = kBasisRegistry;
  return r;
}

// A record that passed, with a condition sample of rank `rank` whose verdict was `v`.
ProbeResult with_condition(int rank, Verdict v = Verdict::kPass) {
  ProbeResult r = record("aten::cumsum", "float32", Verdict::kPass);
  r.traits.max_rank = 2;
  ConditionOutcome c;
  c.condition = "rank5";
  c.sample = "recorded:0+rank5";
  c.verdict = v;
  c.traits.max_rank = rank;
  r.conditions.push_back(c);
  return r;
}

TEST(KnownBugs, ReadsEntriesAndFindsThemByOperatorAndDtype) {
  ASSERT_EQ(ledger().entries().size(), 3u);
  EXPECT_EQ(ledger().entries()[2].seen_in, "unknown");
  EXPECT_TRUE(ledger().entries()[2].dtypes.empty());  // all
  EXPECT_EQ(ledger().entries()[0].when, std::vector<std::string>{"rank_ge:5"});
  ASSERT_TRUE(ledger().entries()[0].repro);
  EXPECT_EQ(ledger().entries()[0].repro->op, "aten::cumsum");
  EXPECT_EQ(ledger().entries()[0].repro->args["dim"].as<int>(), 0);
  EXPECT_EQ(ledger().entries()[1].fix_merged, "2026-09-01");
  EXPECT_TRUE(ledger().entries()[1].unconditional());
  EXPECT_FALSE(ledger().entries()[0].unconditional());
  EXPECT_EQ(ledger().find("aten::cumsum.out", "float32").size(), 2u);
  EXPECT_EQ(ledger().find("aten::cumsum.out", "int64").size(), 1u);
  EXPECT_TRUE(ledger().find("aten::cumsum_", "float32").empty());
  EXPECT_TRUE(ledger().entries()[0].in_release("2.11.0"));
  EXPECT_TRUE(ledger().entries()[0].decides_in("2.9.0"));
  EXPECT_FALSE(ledger().entries()[0].decides_in("2.11.0"));  // no fix recorded: only near where it was seen
  EXPECT_FALSE(ledger().entries()[2].decides_in("2.0.0"));   // neither end recorded
  EXPECT_FALSE(ledger().entries()[0].in_release("2.6.0"));
  // Fixed before a release: never that release's.
  EXPECT_FALSE(ledger().entries()[1].in_release("2.15.0"));
  EXPECT_TRUE(ledger().entries()[1].in_release("2.14.1"));
}

// Note [Conditional failures]: a bug of a narrower condition than `any` that a condition sample met is that
// condition's verdict, and the record keeps its own.
TEST(KnownBugs, AConditionalBugIsTheConditionsVerdictAndTheRecordKeepsItsOwn) {
  ProbeResult r = with_condition(5);
  apply_known_bugs(r, ledger(), "2.9.0", {1500, Chip::kAny}, ExpectationMode::kPredict);
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_TRUE(r.observed.empty());
  ASSERT_EQ(r.conditions.size(), 1u);
  EXPECT_EQ(r.conditions[0].verdict, Verdict::kKnownFailure);
  EXPECT_EQ(r.conditions[0].observed, "pass");
  EXPECT_EQ(r.conditions[0].basis, kBasisKnownBugs);
  EXPECT_EQ(r.conditions[0].known_bugs, std::vector<std::string>{"pytorch-154881"});
  EXPECT_NE(r.conditions[0].message.find("https://github.com/pytorch/pytorch/issues/154881"), std::string::npos);
  ASSERT_EQ(r.known_bugs.size(), 1u);
  EXPECT_EQ(r.known_bugs[0].met_by, "a rank-5 argument");
  EXPECT_EQ(r.known_bugs[0].condition, "recorded:0+rank5");
  EXPECT_TRUE(r.known_bugs[0].applies);
  EXPECT_FALSE(r.known_bugs[0].decided);
  EXPECT_TRUE(has_conditional_failure(r));

  // No sample met it: carried, no more.
  ProbeResult not_met = with_condition(4);
  apply_known_bugs(not_met, ledger(), "2.9.0", {1500, Chip::kAny}, ExpectationMode::kPredict);
  EXPECT_EQ(not_met.conditions[0].verdict, Verdict::kPass);
  ASSERT_EQ(not_met.known_bugs.size(), 1u);
  EXPECT_TRUE(not_met.known_bugs[0].met_by.empty());
  EXPECT_FALSE(has_conditional_failure(not_met));

  // One of the record's ordinary samples met it: a conditional failure of the record, whose verdict stays.
  ProbeResult ordinary = record("aten::cumsum", "float32", Verdict::kPass);
  ordinary.traits.max_rank = 5;
  apply_known_bugs(ordinary, ledger(), "2.9.0", {1500, Chip::kAny}, ExpectationMode::kPredict);
  EXPECT_EQ(ordinary.verdict, Verdict::kPass);
  ASSERT_EQ(ordinary.known_bugs.size(), 1u);
  EXPECT_TRUE(ordinary.known_bugs[0].applies);
  EXPECT_TRUE(ordinary.known_bugs[0].condition.empty());
  EXPECT_TRUE(has_conditional_failure(ordinary));

  // Before the release it was seen in, the entry is not the release's.
  ProbeResult older = with_condition(5);
  apply_known_bugs(older, ledger(), "2.6.0", {1500, Chip::kAny}, ExpectationMode::kPredict);
  EXPECT_EQ(older.conditions[0].verdict, Verdict::kPass);
  EXPECT_TRUE(older.known_bugs.empty());

  // Four minor versions after it was seen, with no fix recorded, the bug is noted, not assumed.
  ProbeResult later = with_condition(5);
  apply_known_bugs(later, ledger(), "2.11.0", {1500, Chip::kAny}, ExpectationMode::kPredict);
  EXPECT_EQ(later.conditions[0].verdict, Verdict::kPass);
  ASSERT_EQ(later.known_bugs.size(), 1u);
  EXPECT_FALSE(later.known_bugs[0].applies);

  // An observed fallback under the condition stays what it is.
  ProbeResult fell_back = with_condition(5, Verdict::kFallback);
  apply_known_bugs(fell_back, ledger(), "2.9.0", {1500, Chip::kAny}, ExpectationMode::kPredict);
  EXPECT_EQ(fell_back.conditions[0].verdict, Verdict::kFallback);
  EXPECT_EQ(fell_back.known_bugs.size(), 1u);
}

// The bug's own call meets its condition whatever its traits say: it is the thread's.
TEST(KnownBugs, ABugsOwnCallMeetsIt) {
  ProbeResult r = with_condition(2);
  r.conditions[0].condition = "repro";
  r.conditions[0].sample = "repro:pytorch-154881";
  apply_known_bugs(r, ledger(), "2.9.0", {1500, Chip::kAny}, ExpectationMode::kPredict);
  EXPECT_EQ(r.conditions[0].verdict, Verdict::kKnownFailure);
  EXPECT_EQ(r.known_bugs[0].condition, "repro:pytorch-154881");
}

// Note [Known bugs a call meets]: a recorded call meets the bugs its own arguments meet, may meet those the recording
// cannot tell, and no other.
TEST(KnownBugs, ARecordedCallMeetsWhatItsOwnArgumentsMeet) {
  SampleTraits rank5, rank2;
  rank5.max_rank = 5;
  rank2.max_rank = 2;
  const auto met = bugs_of_call(ledger(), "2.9.0", {1500, Chip::kAny}, "aten::cumsum", "float32", &rank5);
  ASSERT_EQ(met.size(), 1u);
  EXPECT_EQ(met[0].id, "pytorch-154881");
  EXPECT_TRUE(met[0].applies);
  EXPECT_FALSE(met[0].maybe);
  EXPECT_EQ(met[0].met_by, "a rank-5 argument");
  EXPECT_TRUE(bugs_of_call(ledger(), "2.9.0", {1500, Chip::kAny}, "aten::cumsum", "float32", &rank2).empty());
  // Outside the releases the ledger places it in: met, and said so, not applied.
  const auto later = bugs_of_call(ledger(), "2.11.0", {1500, Chip::kAny}, "aten::cumsum", "float32", &rank5);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_FALSE(later[0].applies);
  // A call the replay did not run: an unconditional bug is met, a conditional one may be.
  const auto unrun = bugs_of_call(ledger(), "2.9.0", {1500, Chip::kAny}, "aten::cumsum", "float32", nullptr);
  ASSERT_EQ(unrun.size(), 1u);
  EXPECT_TRUE(unrun[0].maybe);
  const auto bmm = bugs_of_call(ledger(), "2.14.1", {2600, Chip::kM1}, "aten::bmm", "float32", nullptr);
  ASSERT_EQ(bmm.size(), 1u);
  EXPECT_TRUE(bmm[0].applies);
  // `other` cannot be told from a call's arguments: may meet.
  const auto other = bugs_of_call(ledger(), "2.0.0", {1303, Chip::kAny}, "aten::cumsum.out", "int64", &rank2);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_TRUE(other[0].maybe);
  EXPECT_FALSE(other[0].applies);
}

// A chip-dependent unconditional entry decides the record on the chips it names, is noted on any chip, and is not
// there on the others.
TEST(KnownBugs, AChipDependentEntryFollowsTheEmulatedChip) {
  for (const auto& [chip, verdict, carried] :
       {std::tuple{Chip::kM1, Verdict::kKnownFailure, 1u}, std::tuple{Chip::kAny, Verdict::kPass, 1u},
        std::tuple{Chip::kM3, Verdict::kPass, 0u}}) {
    ProbeResult r = record("aten::bmm", "float32", Verdict::kPass);
    apply_known_bugs(r, ledger(), "2.14.1", {2600, chip}, ExpectationMode::kPredict);
    EXPECT_EQ(r.verdict, verdict) << to_string(chip);
    EXPECT_EQ(r.known_bugs.size(), carried) << to_string(chip);
    if (carried) EXPECT_EQ(r.known_bugs[0].decided, verdict == Verdict::kKnownFailure) << to_string(chip);
  }
}

// A macOS minor version flips an entry: 13.3 meets it, 13.2 and 13.4 do not.
TEST(KnownBugs, AMacosMinorVersionFlipsAnEntry) {
  for (const auto& [macos, carried] : {std::pair{1302, 0u}, std::pair{1303, 1u}, std::pair{1304, 0u}}) {
    ProbeResult r = record("aten::cumsum.out", "int64", Verdict::kPass);
    apply_known_bugs(r, ledger(), "2.0.0", {macos, Chip::kAny}, ExpectationMode::kPredict);
    EXPECT_EQ(r.known_bugs.size(), carried) << macos;
    EXPECT_EQ(r.verdict, Verdict::kPass) << macos;  // `other`: no ordinary sample can meet it
  }
}

// On a Mac that behaves as if fixed, a met entry whose sample passes is an xpass that says to confirm and close it;
// one whose sample failed is an xfail.
TEST(KnownBugs, OnARealMacAPassOfAMetEntryLooksFixed) {
  ProbeResult fixed = with_condition(5);
  apply_known_bugs(fixed, ledger(), "2.7.0", {1500, Chip::kAny}, ExpectationMode::kCheck);
  EXPECT_EQ(fixed.conditions[0].verdict, Verdict::kXpass);
  EXPECT_NE(fixed.conditions[0].message.find(
                "looks fixed: confirm and close https://github.com/pytorch/pytorch/issues/154881"),
            std::string::npos)
      << fixed.conditions[0].message;
  ProbeResult failed = with_condition(5, Verdict::kError);
  apply_known_bugs(failed, ledger(), "2.7.0", {1500, Chip::kAny}, ExpectationMode::kCheck);
  EXPECT_EQ(failed.conditions[0].verdict, Verdict::kXfail);
  EXPECT_EQ(failed.conditions[0].observed, "error");
  ProbeResult whole = record("aten::bmm", "float32", Verdict::kMismatch);
  apply_known_bugs(whole, ledger(), "2.14.1", {2600, Chip::kM2}, ExpectationMode::kCheck);
  EXPECT_EQ(whole.verdict, Verdict::kXfail);
  EXPECT_EQ(whole.observed, "mismatch");
}

TEST(KnownBugs, ConditionsSayWhatMetThem) {
  const auto bug = [](std::vector<std::string> when) {
    KnownBug b;
    b.when = std::move(when);
    b.when_detail = "a beta of macOS";
    return b;
  };
  SampleTraits t;
  t.max_size = 70000;
  t.storage_offset = true;
  t.kwargs = {"dtype"};
  t.args = {{"k", {"20"}}, {"rounding_mode", {"floor"}}, {"dim", {"none"}}, {"mask", {"[false, true]"}}};
  EXPECT_EQ(condition_met(bug({"size_gt:65536"}), t).by, "a dimension of size 70000");
  EXPECT_FALSE(condition_met(bug({"size_gt:70000"}), t).yes());
  EXPECT_EQ(condition_met(bug({"storage_offset"}), t).by, "an argument at a storage offset");
  EXPECT_FALSE(condition_met(bug({"non_contiguous"}), t).yes());
  EXPECT_EQ(condition_met(bug({"kwarg:dtype"}), t).by, "the keyword argument dtype");
  EXPECT_EQ(condition_met(bug({"any"}), t).by, "every sample");
  EXPECT_EQ(condition_met(bug({"arg:k>16", "storage_offset"}), t).by, "k 20 and an argument at a storage offset");
  EXPECT_FALSE(condition_met(bug({"arg:k>16", "non_contiguous"}), t).yes());  // every atom must hold
  EXPECT_FALSE(condition_met(bug({"arg:k<=16"}), t).yes());
  EXPECT_TRUE(condition_met(bug({"arg:rounding_mode=floor"}), t).yes());
  EXPECT_TRUE(condition_met(bug({"arg:dim=none"}), t).yes());
  EXPECT_TRUE(condition_met(bug({"arg:mask=[false,true]"}), t).yes());
  EXPECT_FALSE(condition_met(bug({"arg:alpha=2"}), t).yes());  // an argument the call does not have
  // A list against a number: "stride other than 1" holds of [1, 2], not of [1, 1].
  t.args["stride"] = {"[1, 1]"};
  EXPECT_FALSE(condition_met(bug({"arg:stride!=1"}), t).yes());
  EXPECT_FALSE(condition_met(bug({"arg:stride>1"}), t).yes());
  EXPECT_TRUE(condition_met(bug({"arg:stride=1"}), t).yes());
  t.args["stride"] = {"[1, 2]"};
  EXPECT_TRUE(condition_met(bug({"arg:stride!=1"}), t).yes());
  EXPECT_TRUE(condition_met(bug({"arg:stride>1"}), t).yes());
  EXPECT_FALSE(condition_met(bug({"arg:stride=1"}), t).yes());
  // What cannot be told: `other`, and values that were not read.
  const ConditionMet other = condition_met(bug({"other"}), t);
  EXPECT_TRUE(other.maybe());
  EXPECT_EQ(other.by, "a beta of macOS");
  EXPECT_FALSE(condition_met(bug({"nan"}), t).yes());
  EXPECT_FALSE(condition_met(bug({"nan"}), t).maybe());
  t.values_unknown = true;
  EXPECT_TRUE(condition_met(bug({"nan"}), t).maybe());
  EXPECT_FALSE(condition_met(bug({"nan", "non_contiguous"}), t).maybe());  // one atom not met: no
  t.nan = true;
  EXPECT_TRUE(condition_met(bug({"nan"}), t).yes());
  EXPECT_TRUE(condition_met(bug({"other"}), t, /*own_call=*/true).yes());
}

struct BadLedger {
  const char* name;
  std::string text;
  int line, column;
  const char* message;
};
class KnownBugsBadInput : public ::testing::TestWithParam<BadLedger> {};

TEST_P(KnownBugsBadInput, NamesFileLineAndColumn) {
  const BadLedger& bad = GetParam();
  try {
    KnownBugs::parse(bad.text, "ledger.yaml");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().file, "ledger.yaml");
    EXPECT_EQ(e.where().line, bad.line);
    EXPECT_EQ(e.where().column, bad.column);
    EXPECT_NE(e.message().find(bad.message), std::string::npos) << e.message();
  }
}

const std::string kHead = "format: mps-audit-known-bugs/2\nentries:\n";
const std::string kEntry =
    "  - id: x\n    ops: [aten::sin]\n    dtypes: [float32]\n    kind: crash\n"
    "    fixed_in: unknown\n    source: s\n    summary: s\n";
INSTANTIATE_TEST_SUITE_P(
    Ledger, KnownBugsBadInput,
    ::testing::Values(
        BadLedger{"Format", "format: other/1\nentries: []\n", 1, 9, "not a known-bugs ledger"},
        BadLedger{"Condition", kHead + kEntry + "    when: [rank_ge:x]\n", 10, 12, "unknown condition"},
        BadLedger{"SecondAtom", kHead + kEntry + "    when: [rank_ge:5, arg:k]\n", 10, 23, "unknown condition 'arg:k'"},
        BadLedger{"AnyAlone", kHead + kEntry + "    when: [any, nan]\n", 10, 11, "'any' stands alone"},
        BadLedger{"Kind",
                  kHead + "  - id: x\n    ops: [aten::sin]\n    dtypes: [float32]\n    when: [any]\n"
                          "    kind: crashes\n    fixed_in: unknown\n    source: s\n    summary: s\n",
                  7, 11, "unknown kind 'crashes'"},
        BadLedger{"Macos", kHead + kEntry + "    when: [any]\n    macos: \"=14\"\n", 11, 12, "macOS condition '=14'"},
        BadLedger{"Missing", kHead + "  - id: x\n    ops: [aten::sin]\n", 3, 5, "no 'dtypes'"},
        BadLedger{"Chip", kHead + kEntry + "    when: [any]\n    chips: [m9]\n", 11, 12, "m9"},
        BadLedger{"FixWithoutDate", kHead + kEntry + "    when: [any]\n    fix: u\n", 11, 10, "needs 'fix_merged'"},
        BadLedger{"UnknownKey", kHead + kEntry + "    when: [any]\n    fixed: 2.1.0\n", 11, 5, "unknown key 'fixed'"},
        BadLedger{"ReproOp", kHead + kEntry + "    when: [any]\n    repro: {op: sin}\n", 11, 17,
                  "expected aten::NAME"}),
    [](const ::testing::TestParamInfo<BadLedger>& info) { return std::string(info.param.name); });

TEST(EmulatedMac, ParsesMajorMinorAndRefusesWhatIsNone) {
  EXPECT_EQ(parse_emu_macos("--emu-macos", "13.3"), 1303);
  EXPECT_EQ(parse_emu_macos("--emu-macos", "26.1"), 2601);
  EXPECT_EQ(parse_emu_macos("--emu-macos", "14"), 1400);
  for (const char* bad : {"14.x", "16.0", "13.10", "", "13.", "x"}) {
    EXPECT_THROW(parse_emu_macos("--emu-macos", bad), UserError) << bad;
  }
  try {
    parse_emu_macos("--emu-macos", "14.x");
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("13.2, 13.3, 14.4, 15.2 or 26.1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(macos_text(1303), "13.3");
}

TEST(EmulatedMac, ChipsAndTheirGpuFamilies) {
  EXPECT_EQ(parse_chip("--emu-chip", "m1"), Chip::kM1);
  EXPECT_EQ(parse_chip("--emu-chip", "any"), Chip::kAny);
  EXPECT_THROW(parse_chip("--emu-chip", "m9"), UserError);
  EXPECT_EQ(gpu_family(Chip::kM2), 8);
  EXPECT_EQ(gpu_family(Chip::kM5), 10);
  EXPECT_TRUE(uses_metal4(Chip::kM5, 2600));
  EXPECT_FALSE(uses_metal4(Chip::kM5, 1500));
  EXPECT_EQ((EmulatedMac{2601, Chip::kM5}).describe(), "macOS 26.1, M5 (Apple GPU family 10, Metal 4)");
  EXPECT_EQ((EmulatedMac{1500, Chip::kAny}).describe(), "macOS 15.0, any chip");
}

TEST(EmulatedMac, TheDefaultIsTheNewestMacosTheConditionsName) {
  EXPECT_EQ(newest_named_macos({}), 1400);
  EXPECT_EQ(newest_named_macos({"<15.0", ">=13.3,<14.4", "*"}), 1500);
  EXPECT_EQ(newest_named_macos({">=27.0"}), 2700);
}

}  // namespace
}  // namespace mps_audit::emu
