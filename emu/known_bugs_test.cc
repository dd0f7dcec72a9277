// Tests of the ledger of known MPS bugs and of the emulated Mac it is applied on (Note [Known bugs]).
#include "emu/known_bugs.h"

#include <gtest/gtest.h>

#include "common/diagnostics.h"

namespace mps_audit::emu {
namespace {

const char* const kLedger = R"(format: mps-audit-known-bugs/1
entries:
  - id: pytorch-154881
    ops: [aten::cumsum]
    dtypes: [float32]
    when: rank_ge:5
    kind: crash
    seen_in: 2.7.0
    fixed_in: unknown
    source: https://github.com/pytorch/pytorch/issues/154881
    summary: cumsum on a 5-D tensor aborts
  - id: pytorch-195163
    ops: [aten::bmm]
    dtypes: [float32]
    when: any
    kind: wrong_result
    seen_in: 2.14.0
    fixed_in: 2.15.0
    chips: [m1, m2]
    source: https://github.com/pytorch/pytorch/issues/195163
    summary: batched matmul silently wrong on M1/M2
  - id: pytorch-96610
    ops: [aten::cumsum.out]
    dtypes: [all]
    when: other
    kind: error
    macos: ">=13.3,<13.4"
    fixed_in: unknown
    source: https://github.com/pytorch/pytorch/issues/96610
    summary: int64 cumsum fails on macOS 13.3
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

TEST(KnownBugs, ReadsEntriesAndFindsThemByOperatorAndDtype) {
  ASSERT_EQ(ledger().entries().size(), 3u);
  EXPECT_EQ(ledger().entries()[2].seen_in, "unknown");
  EXPECT_TRUE(ledger().entries()[2].dtypes.empty());  // all
  EXPECT_EQ(ledger().find("aten::cumsum.out", "float32").size(), 2u);
  EXPECT_EQ(ledger().find("aten::cumsum.out", "int64").size(), 1u);
  EXPECT_TRUE(ledger().find("aten::cumsum_", "float32").empty());
  EXPECT_TRUE(ledger().entries()[0].in_release("2.11.0"));
  EXPECT_TRUE(ledger().entries()[0].decides_in("2.9.0"));
  EXPECT_FALSE(ledger().entries()[0].decides_in("2.11.0"));  // no fix recorded: only near where it was seen
  EXPECT_FALSE(ledger().entries()[2].decides_in("2.0.0"));   // neither end recorded
  EXPECT_FALSE(ledger().entries()[0].in_release("2.6.0"));
  EXPECT_FALSE(ledger().entries()[1].in_release("2.15.0"));
}

// A sample that met the condition: the bug decides the pass; a sample that did not: the bug is carried, no more.
TEST(KnownBugs, AnEntryDecidesOnlyWhereASampleMetItsCondition) {
  ProbeResult met = record("aten::cumsum", "float32", Verdict::kPass);
  met.traits.max_rank = 5;
  apply_known_bugs(met, ledger(), "2.9.0", {1500, Chip::kAny}, ExpectationMode::kPredict);
  EXPECT_EQ(met.verdict, Verdict::kKnownFailure);
  EXPECT_EQ(met.basis, kBasisKnownBugs);
  EXPECT_EQ(met.observed, "pass");
  ASSERT_EQ(met.known_bugs.size(), 1u);
  EXPECT_EQ(met.known_bugs[0].met_by, "a rank-5 argument");
  EXPECT_NE(met.message.find("https://github.com/pytorch/pytorch/issues/154881"), std::string::npos) << met.message;

  ProbeResult not_met = record("aten::cumsum", "float32", Verdict::kPass);
  not_met.traits.max_rank = 4;
  apply_known_bugs(not_met, ledger(), "2.9.0", {1500, Chip::kAny}, ExpectationMode::kPredict);
  EXPECT_EQ(not_met.verdict, Verdict::kPass);
  ASSERT_EQ(not_met.known_bugs.size(), 1u);
  EXPECT_TRUE(not_met.known_bugs[0].met_by.empty());

  // Before the release it was seen in, the entry is not the release's.
  ProbeResult older = record("aten::cumsum", "float32", Verdict::kPass);
  older.traits.max_rank = 5;
  apply_known_bugs(older, ledger(), "2.6.0", {1500, Chip::kAny}, ExpectationMode::kPredict);
  EXPECT_EQ(older.verdict, Verdict::kPass);
  EXPECT_TRUE(older.known_bugs.empty());

  // Four minor versions after it was seen, with no fix recorded, the bug is noted, not assumed.
  ProbeResult later = record("aten::cumsum", "float32", Verdict::kPass);
  later.traits.max_rank = 5;
  apply_known_bugs(later, ledger(), "2.11.0", {1500, Chip::kAny}, ExpectationMode::kPredict);
  EXPECT_EQ(later.verdict, Verdict::kPass);
  ASSERT_EQ(later.known_bugs.size(), 1u);
  EXPECT_FALSE(later.known_bugs[0].decided);

  // An observed fallback stays what it is.
  ProbeResult fell_back = record("aten::cumsum", "float32", Verdict::kFallback);
  fell_back.traits.max_rank = 5;
  apply_known_bugs(fell_back, ledger(), "2.9.0", {1500, Chip::kAny}, ExpectationMode::kPredict);
  EXPECT_EQ(fell_back.verdict, Verdict::kFallback);
  EXPECT_EQ(fell_back.known_bugs.size(), 1u);
}

// A chip-dependent entry decides on the chips it names, is noted on any chip, and is not there on the others.
TEST(KnownBugs, AChipDependentEntryFollowsTheEmulatedChip) {
  for (const auto& [chip, verdict, carried] :
       {std::tuple{Chip::kM1, Verdict::kKnownFailure, 1u}, std::tuple{Chip::kAny, Verdict::kPass, 1u},
        std::tuple{Chip::kM3, Verdict::kPass, 0u}}) {
    ProbeResult r = record("aten::bmm", "float32", Verdict::kPass);
    apply_known_bugs(r, ledger(), "2.14.1", {2600, chip}, ExpectationMode::kPredict);
    EXPECT_EQ(r.verdict, verdict) << to_string(chip);
    EXPECT_EQ(r.known_bugs.size(), carried) << to_string(chip);
  }
}

// A macOS minor version flips an entry: 13.3 meets it, 13.2 and 13.4 do not.
TEST(KnownBugs, AMacosMinorVersionFlipsAnEntry) {
  for (const auto& [macos, carried] : {std::pair{1302, 0u}, std::pair{1303, 1u}, std::pair{1304, 0u}}) {
    ProbeResult r = record("aten::cumsum.out", "int64", Verdict::kPass);
    apply_known_bugs(r, ledger(), "2.0.0", {macos, Chip::kAny}, ExpectationMode::kPredict);
    EXPECT_EQ(r.known_bugs.size(), carried) << macos;
    EXPECT_EQ(r.verdict, Verdict::kPass) << macos;  // `other`: no sample can meet it
  }
}

// On a Mac that behaves as if fixed, a met entry whose record passes is an xpass that says to confirm and close it;
// one whose record failed is an xfail.
TEST(KnownBugs, OnARealMacAPassOfAMetEntryLooksFixed) {
  ProbeResult fixed = record("aten::cumsum", "float32", Verdict::kPass);
  fixed.traits.max_rank = 5;
  apply_known_bugs(fixed, ledger(), "2.7.0", {1500, Chip::kAny}, ExpectationMode::kCheck);
  EXPECT_EQ(fixed.verdict, Verdict::kXpass);
  EXPECT_NE(fixed.message.find("looks fixed: confirm and close https://github.com/pytorch/pytorch/issues/154881"),
            std::string::npos)
      << fixed.message;
  ProbeResult crashed = record("aten::cumsum", "float32", Verdict::kCrash);
  crashed.traits.max_rank = 5;
  apply_known_bugs(crashed, ledger(), "2.7.0", {1500, Chip::kAny}, ExpectationMode::kCheck);
  EXPECT_EQ(crashed.verdict, Verdict::kXfail);
  EXPECT_EQ(crashed.observed, "crash");
}

TEST(KnownBugs, ConditionsSayWhatMetThem) {
  SampleTraits t;
  t.max_size = 70000;
  t.storage_offset = true;
  t.kwargs = {"dtype"};
  EXPECT_EQ(condition_met("size_gt:65536", t), "a dimension of size 70000");
  EXPECT_EQ(condition_met("size_gt:70000", t), "");
  EXPECT_EQ(condition_met("storage_offset", t), "an argument at a storage offset");
  EXPECT_EQ(condition_met("non_contiguous", t), "");
  EXPECT_EQ(condition_met("kwarg:dtype", t), "the keyword argument dtype");
  EXPECT_EQ(condition_met("kwarg:dim", t), "");
  EXPECT_EQ(condition_met("any", t), "every sample");
  EXPECT_EQ(condition_met("other", t), "");
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

const std::string kHead = "format: mps-audit-known-bugs/1\nentries:\n";
const std::string kEntry =
    "  - id: x\n    ops: [aten::sin]\n    dtypes: [float32]\n    kind: crash\n"
    "    fixed_in: unknown\n    source: s\n    summary: s\n";
INSTANTIATE_TEST_SUITE_P(
    Ledger, KnownBugsBadInput,
    ::testing::Values(BadLedger{"Format", "format: other/1\nentries: []\n", 1, 9, "not a known-bugs ledger"},
                      BadLedger{"Condition", kHead + kEntry + "    when: rank_ge:x\n", 10, 11, "unknown condition"},
                      BadLedger{"Kind",
                                kHead + "  - id: x\n    ops: [aten::sin]\n    dtypes: [float32]\n    when: any\n"
                                        "    kind: crashes\n    fixed_in: unknown\n    source: s\n    summary: s\n",
                                7, 11, "unknown kind 'crashes'"},
                      BadLedger{"Macos", kHead + kEntry + "    when: any\n    macos: \"=14\"\n", 11, 12,
                                "macOS condition '=14'"},
                      BadLedger{"Missing", kHead + "  - id: x\n    ops: [aten::sin]\n", 3, 5, "no 'dtypes'"},
                      BadLedger{"Chip", kHead + kEntry + "    when: any\n    chips: [m9]\n", 11, 12, "m9"}),
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
