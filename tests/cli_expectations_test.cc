// End-to-end tests of PyTorch's own MPS expectations in a run (Note [Expected verdicts] in emu/expected_verdicts.cc):
// a release folder whose mps_expectations.tsv the test writes, emulated, predicted and checked.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <tuple>

#include <unistd.h>

#include "common/paths.h"
#include "test_support.h"

namespace mps_audit {
namespace {

using testing::run_mps_audit;
using testing::slurp;
using testing::source_path;
using testing::TempDir;

struct EmulatedRun {
  testing::CommandResult result;
  nlohmann::json doc;
  const nlohmann::json& record(const std::string& op) const {
    for (const auto& r : doc["results"]) {
      if (r["op"] == op) return r;
    }
    static const nlohmann::json none;
    return none;
  }
};

EmulatedRun run(const std::string& release, const std::string& out, std::vector<std::string> more,
                const std::vector<std::string>& env = {}) {
  std::vector<std::string> args = {"run",
                                   "--target",
                                   "mps-emu",
                                   "--emu-release",
                                   release,
                                   "--spec",
                                   source_path("opspec.yaml"),
                                   "--out",
                                   out,
                                   "--no-progress",
                                   "--ops",
                                   "^aten::(sin|cos|tan)$",
                                   "--dtypes",
                                   "float32"};
  args.insert(args.end(), more.begin(), more.end());
  EmulatedRun r;
  r.result = run_mps_audit(args, env);
  if (path_exists(out + "/results.json")) r.doc = nlohmann::json::parse(slurp(out + "/results.json"));
  return r;
}

const char* const kRows =
    "aten::cos\tfloat32\tunimplemented\tforward\t*\tUNIMPLEMENTED_XFAILLIST\tcos\taten_name\tt.py:10\tno cos\n"
    "aten::sin\tfloat32\twrong\tforward\t<15.0\tMACOS_BEFORE_15_0_XFAILLIST\tsin\taten_name\tt.py:20\tsin is off\n";

TEST(CliExpectations, EmulatedMpsRefusesAnUnimplementedDtypeAndShowsAnExpectedWrongResultApart) {
  TempDir dir;
  const std::string release = testing::release_with_expectations(dir, kRows);
  const EmulatedRun on14 = run(release, dir.path() + "/14", {"--emu-macos", "14", "--format", "json,md"});
  ASSERT_EQ(on14.result.exit_code, 0) << on14.result.err;
  const auto& cos = on14.record("aten::cos");
  EXPECT_EQ(cos["verdict"], "unsupported");
  EXPECT_EQ(cos["observed"], "pass");
  EXPECT_EQ(cos["basis"], "expectations");
  EXPECT_NE(cos["message"].get<std::string>().find("not implemented for float32 on MPS"), std::string::npos);
  EXPECT_EQ(cos["expectation"]["source"], "t.py:10");
  const auto& sin = on14.record("aten::sin");
  EXPECT_EQ(sin["verdict"], "known_failure");  // never a plain pass
  EXPECT_EQ(sin["observed"], "pass");
  EXPECT_EQ(sin["expectation"]["kind"], "wrong");
  EXPECT_EQ(sin["expectation"]["reason"], "sin is off");
  EXPECT_EQ(on14.doc["summary"]["known_failure"], 1);
  EXPECT_EQ(on14.doc["environment"]["expectations"]["mode"], "predict");
  EXPECT_EQ(on14.doc["environment"]["expectations"]["release"], "1.13.1");
  EXPECT_NE(on14.result.out.find("known_failure      1"), std::string::npos) << on14.result.out;
  EXPECT_NE(slurp(dir.path() + "/14/results.md").find("| known_failure | ! | 1 |"), std::string::npos);

  // macOS 15: the wrong result's condition (<15.0) no longer holds, the refusal's (always) does.
  const EmulatedRun on15 = run(release, dir.path() + "/15", {"--emu-macos", "15"});
  ASSERT_EQ(on15.result.exit_code, 0) << on15.result.err;
  EXPECT_EQ(on15.record("aten::sin")["verdict"], "pass");
  EXPECT_EQ(on15.record("aten::sin")["basis"], "registry");
  EXPECT_FALSE(on15.record("aten::sin").contains("expectation"));
  EXPECT_EQ(on15.record("aten::cos")["verdict"], "unsupported");

  // Off: what the emulator itself gives.
  const EmulatedRun off = run(release, dir.path() + "/off", {"--expectations", "off"});
  EXPECT_EQ(off.record("aten::sin")["verdict"], "pass");
  EXPECT_EQ(off.record("aten::cos")["verdict"], "pass");
  EXPECT_FALSE(off.doc["environment"].contains("expectations"));
  EXPECT_EQ(off.result.err.find("expectations: none"), std::string::npos);

  // A release folder without expectations says so, and its verdicts are the registry's alone.
  ::unlink((release + "/mps_expectations.tsv").c_str());
  const EmulatedRun none = run(release, dir.path() + "/none", {});
  ASSERT_EQ(none.result.exit_code, 0) << none.result.err;
  EXPECT_NE(none.result.err.find("expectations: none: " + release + " has no mps_expectations.tsv"), std::string::npos)
      << none.result.err;
  EXPECT_EQ(none.record("aten::cos")["verdict"], "pass");
}

// The emulator with an injected fault stands in for a real Mac: --expectations check is what --target mps does.
TEST(CliExpectations, CheckingMarksExpectedFailuresXfailAndStaleEntriesXpassReadyToReport) {
  TempDir dir;
  const std::string release = testing::release_with_expectations(
      dir,
      "aten::cos\tfloat32\twrong\tforward\t*\tON_MPS_XFAILLIST\tcos\taten_name\tt.py:10\tcos is off\n"
      "aten::sin\tfloat32\twrong\tforward\t*\tON_MPS_XFAILLIST\tsin\taten_name\tt.py:20\tsin is off\n");
  const EmulatedRun r = run(release, dir.path() + "/out", {"--expectations", "check", "--format", "json,md"},
                            {"MPS_AUDIT_EMU_FAULTS=aten::sin=wrong"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
  EXPECT_EQ(r.record("aten::sin")["verdict"], "xfail");
  EXPECT_EQ(r.record("aten::sin")["observed"], "mismatch");
  EXPECT_EQ(r.record("aten::cos")["verdict"], "xpass");
  EXPECT_EQ(r.record("aten::cos")["basis"], "registry");
  const std::string md = slurp(dir.path() + "/out/results.md");
  EXPECT_NE(md.find("## PyTorch's lists look stale: 1 entries"), std::string::npos) << md;
  EXPECT_NE(md.find("\"cos\": [torch.float32],  # t.py:10: passed as aten::cos"), std::string::npos) << md;
  EXPECT_EQ(md.find("\"sin\": [torch.float32]"), std::string::npos);
}

TEST(CliExpectations, RealTargetsKeepTheirVerdictsAndAMalformedFileIsOneDiagnostic) {
  TempDir dir;
  const auto cpu = run_mps_audit({"run", "--target", "cpu", "--spec", source_path("opspec.yaml"), "--out",
                                  dir.path() + "/cpu", "--no-progress", "--ops", "^aten::sin$", "--dtypes", "float32"});
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  const auto doc = nlohmann::json::parse(slurp(dir.path() + "/cpu/results.json"));
  EXPECT_EQ(doc["results"][0]["basis"], "kernel");
  EXPECT_FALSE(doc["results"][0].contains("expectation"));
  EXPECT_FALSE(doc["environment"].contains("expectations"));

  const auto predict_on_cpu = run_mps_audit(
      {"run", "--target", "cpu", "--expectations", "predict", "--out", dir.path() + "/x", "--ops", "^aten::sin$"});
  EXPECT_EQ(predict_on_cpu.exit_code, 2);
  EXPECT_NE(predict_on_cpu.err.find("error: --expectations predict: PyTorch's expectations are of MPS"),
            std::string::npos)
      << predict_on_cpu.err;

  const std::string release =
      testing::release_with_expectations(dir, "aten::sin\tfloat32\twrnog\tforward\t*\tL\tsin\tm\ts\tr\n");
  const EmulatedRun bad = run(release, dir.path() + "/bad", {});
  EXPECT_EQ(bad.result.exit_code, 2);
  EXPECT_NE(bad.result.err.find("mps_expectations.tsv:4:19: unknown kind 'wrnog'"), std::string::npos)
      << bad.result.err;
  EXPECT_EQ(std::count(bad.result.err.begin(), bad.result.err.end(), '\n'), 1) << bad.result.err;
  EXPECT_FALSE(path_exists(dir.path() + "/bad/results.json"));
}

// "Which release do I need?" over the shipped releases, and one more in $MPS_AUDIT_DATA_DIR.
// The ledger of known MPS bugs of $MPS_AUDIT_DATA_DIR: sin meets its entry in every sample; cos's needs a tensor of
// more than 2**32 elements, which no probe makes; tan's is wrong at rank 5, a condition its rank-5 sample meets.
const char* const kLedger = R"(format: mps-audit-known-bugs/2
entries:
  - id: pytorch-1
    source: https://github.com/pytorch/pytorch/issues/1
    summary: sin aborts
    kind: crash
    ops: [aten::sin]
    dtypes: [float32]
    when: [any]
    seen_in: 1.13.0
    fixed_in: unknown
  - id: pytorch-2
    source: https://github.com/pytorch/pytorch/issues/2
    summary: cos is wrong above 2**32 elements
    kind: wrong_result
    ops: [aten::cos]
    dtypes: [float32]
    when: [numel_gt:4294967296]
    seen_in: 1.13.0
    fixed_in: 2.6.0
    fix: https://github.com/pytorch/pytorch/pull/3
    fix_merged: 2024-12-01
  - id: pytorch-4
    source: https://github.com/pytorch/pytorch/issues/4
    summary: tan is wrong at rank 5
    kind: wrong_result
    ops: [aten::tan]
    dtypes: [float32]
    when: [rank_ge:5]
    seen_in: 1.13.0
    fixed_in: unknown
    repro:
      op: aten::tan
      args: {self: {shape: [1, 1, 1, 2, 3]}}
)";

TEST(CliExpectations, AKnownBugDecidesWhereASampleMetItAndLooksFixedWhereAMetSamplePasses) {
  TempDir dir;
  const std::string release = testing::release_with_expectations(dir, "");
  dir.write("mps_known_bugs.yaml", kLedger);
  const std::vector<std::string> env = {"MPS_AUDIT_DATA_DIR=" + dir.path()};
  const EmulatedRun predicted = run(release, dir.path() + "/predict", {"--format", "json,md"}, env);
  ASSERT_EQ(predicted.result.exit_code, 0) << predicted.result.err;
  const auto& sin = predicted.record("aten::sin");
  EXPECT_EQ(sin["verdict"], "known_failure");
  EXPECT_EQ(sin["basis"], "known_bugs");
  EXPECT_EQ(sin["known_bugs"][0]["met_by"], "every sample");
  const auto& cos = predicted.record("aten::cos");
  EXPECT_EQ(cos["verdict"], "pass");
  EXPECT_EQ(cos["known_bugs"][0]["id"], "pytorch-2");
  EXPECT_EQ(cos["known_bugs"][0]["met_by"], "");
  // Note [Conditional failures]: tan passes for ordinary inputs; its rank-5 sample, and the bug's own call, fail.
  const auto& tan = predicted.record("aten::tan");
  EXPECT_EQ(tan["verdict"], "pass") << tan.dump();
  EXPECT_EQ(tan["known_bugs"][0]["applies"], true) << tan.dump();
  EXPECT_NE(tan["known_bugs"][0]["condition"].get<std::string>().find("+rank5"), std::string::npos) << tan.dump();
  size_t failing = 0;
  for (const auto& c : tan["conditions"]) {
    if (c["verdict"] != "known_failure") continue;
    ++failing;
    EXPECT_EQ(c["observed"], "pass");
    EXPECT_EQ(c["known_bugs"][0], "pytorch-4");
  }
  EXPECT_EQ(failing, 1u) << tan.dump();  // the first condition that met it
  bool own_call = false;
  for (const auto& c : tan["conditions"]) own_call = own_call || c["sample"] == "repro:pytorch-4";
  EXPECT_TRUE(own_call) << tan.dump();
  const std::string md = slurp(dir.path() + "/predict/results.md");
  EXPECT_NE(md.find("## What the known failures rest on"), std::string::npos) << md;
  EXPECT_NE(md.find("[pytorch-1](https://github.com/pytorch/pytorch/issues/1)"), std::string::npos) << md;
  EXPECT_NE(md.find("## Notes, not verdicts"), std::string::npos) << md;
  EXPECT_NE(md.find("## Conditional failures: 1 op x dtype"), std::string::npos) << md;
  EXPECT_NE(md.find("pass; wrong results under rank 5, [pytorch-4](https://github.com/pytorch/pytorch/issues/4), "
                    "not known fixed"),
            std::string::npos)
      << md;
  // The gate decides on verdicts; a conditional failure fails it when asked.
  const auto fail_on = run_mps_audit(
      {"run", "--target", "mps-emu", "--emu-release", release, "--ops", "^aten::tan$", "--dtypes", "float32", "--out",
       dir.path() + "/gate", "--no-progress", "--format", "json", "--fail-on", "conditional"},
      env);
  EXPECT_EQ(fail_on.exit_code, 1) << fail_on.err;
  // Against a run whose ledger lacked tan's bug: the same verdicts, and one new conditional failure.
  TempDir before;
  const std::string ledger = kLedger;
  before.write("mps_known_bugs.yaml", ledger.substr(0, ledger.find("  - id: pytorch-4")));
  const EmulatedRun base = run(release, dir.path() + "/base", {}, {"MPS_AUDIT_DATA_DIR=" + before.path()});
  ASSERT_EQ(base.result.exit_code, 0) << base.result.err;
  const auto diff = run_mps_audit({"diff", dir.path() + "/base/results.json", dir.path() + "/predict/results.json"});
  EXPECT_EQ(diff.exit_code, 0) << diff.out;
  EXPECT_NE(diff.out.find("new conditional failures:\n  aten::tan float32: pass -> pass  (wrong results under rank 5"),
            std::string::npos)
      << diff.out;
  const auto gated = run_mps_audit(
      {"diff", dir.path() + "/base/results.json", dir.path() + "/predict/results.json", "--fail-on-conditional"});
  EXPECT_EQ(gated.exit_code, 1) << gated.out;
  EXPECT_NE(gated.out.find("gate: FAILED, 0 regressions and 1 new conditional failures"), std::string::npos)
      << gated.out;

  // A Mac where sin works (the emulator stands in): the bug looks fixed; where it fails, the failure is expected.
  const EmulatedRun fixed =
      run(release, dir.path() + "/fixed", {"--expectations", "check", "--format", "json,md"}, env);
  ASSERT_EQ(fixed.result.exit_code, 0) << fixed.result.err;
  EXPECT_EQ(fixed.record("aten::sin")["verdict"], "xpass");
  EXPECT_NE(fixed.record("aten::sin")["message"].get<std::string>().find(
                "looks fixed: confirm and close https://github.com/pytorch/pytorch/issues/1"),
            std::string::npos);
  EXPECT_NE(slurp(dir.path() + "/fixed/results.md").find("## Known bugs that look fixed: confirm and close"),
            std::string::npos);
  std::vector<std::string> faulty = env;
  faulty.push_back("MPS_AUDIT_EMU_FAULTS=aten::sin=wrong");
  const EmulatedRun broken = run(release, dir.path() + "/broken", {"--expectations", "check"}, faulty);
  ASSERT_EQ(broken.result.exit_code, 0) << broken.result.err;
  EXPECT_EQ(broken.record("aten::sin")["verdict"], "xfail");
  EXPECT_EQ(broken.record("aten::sin")["observed"], "mismatch");
}

// A malformed ledger stops the run before it starts: file:line:col, exit 2.
// Note [Known bugs' own calls] in probe/repros.cc: a repro's view is the thread's layout, and runs as it is; a repro
// the CPU refuses runs on the target all the same, where a refusal is its pass; and a repro runs where the operator's
// own samples found no reference.
TEST(CliExpectations, EveryReproRunsAViewAsGivenAndACallTheCpuRefusesAsARefusal) {
  TempDir dir;
  dir.write("mps_known_bugs.yaml", R"(format: mps-audit-known-bugs/2
entries:
  - id: pytorch-5
    source: https://github.com/pytorch/pytorch/issues/5
    summary: neg writes a transposed out= tensor wrongly
    kind: wrong_result
    ops: [aten::neg.out]
    dtypes: [float32]
    when: [non_contiguous]
    fixed_in: unknown
    repro:
      op: aten::neg.out
      args: {self: {values: [[0.0, 1.0], [2.0, 3.0]]}, out: {shape: [2, 2], strides: [1, 2]}}
  - id: pytorch-6
    source: https://github.com/pytorch/pytorch/issues/6
    summary: index_select takes an index out of range
    kind: wrong_result
    ops: [aten::index_select]
    dtypes: [float32]
    when: [out_of_range_indices]
    fixed_in: unknown
    repro:
      op: aten::index_select
      args: {self: {shape: [3, 2]}, dim: 0, index: {values: [-1], dtype: int64}}
      cpu: raises
  - id: pytorch-8
    source: https://github.com/pytorch/pytorch/issues/8
    summary: index_select takes an index out of range, which some releases' CPU took
    kind: wrong_result
    ops: [aten::index_select]
    dtypes: [float32]
    when: [out_of_range_indices]
    fixed_in: unknown
    repro:
      op: aten::index_select
      args: {self: {shape: [3, 2]}, dim: 0, index: {values: [3], dtype: int64}}
      cpu: varies
  - id: pytorch-7
    source: https://github.com/pytorch/pytorch/issues/7
    summary: where is wrong for int64
    kind: wrong_result
    ops: [aten::where.ScalarOther]
    dtypes: [int64]
    when: [other]
    when_detail: a thread's words
    fixed_in: unknown
    repro:
      op: aten::where.ScalarOther
      args: {condition: {shape: [3], dtype: bool, domain: mask}, self: {shape: [3], dtype: int64, domain: int, low: 0, high: 5}, other: 1}
)");
  const auto cpu =
      run_mps_audit({"run", "--target", "cpu", "--spec", source_path("opspec.yaml"), "--out", dir.path() + "/cpu",
                     "--no-progress", "--ops", "^aten::(neg\\.out|index_select|where\\.ScalarOther)$", "--dtypes",
                     "float32,int64", "--format", "json"},
                    {"MPS_AUDIT_DATA_DIR=" + dir.path()});
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  const auto doc = nlohmann::json::parse(slurp(dir.path() + "/cpu/results.json"));
  std::map<std::string, nlohmann::json> repros;
  for (const auto& r : doc["results"]) {
    for (const auto& c : r.value("conditions", nlohmann::json::array())) {
      if (c["sample"].get<std::string>().rfind("repro:", 0) == 0) repros[c["sample"]] = c;
    }
  }
  ASSERT_TRUE(repros.count("repro:pytorch-5")) << doc.dump();
  EXPECT_EQ(repros["repro:pytorch-5"]["verdict"], "pass");
  EXPECT_EQ(repros["repro:pytorch-5"]["traits"].value("non_contiguous", false), true) << repros["repro:pytorch-5"];
  ASSERT_TRUE(repros.count("repro:pytorch-6")) << doc.dump();
  EXPECT_EQ(repros["repro:pytorch-6"]["verdict"], "pass");
  EXPECT_EQ(repros["repro:pytorch-6"]["traits"].value("out_of_range_indices", false), true);
  EXPECT_NE(repros["repro:pytorch-6"]["message"].get<std::string>().find("refused, as the CPU refuses it: "),
            std::string::npos)
      << repros["repro:pytorch-6"];
  // A CPU rule that changed between releases: where this CPU refuses the call, the target refusing it passes.
  ASSERT_TRUE(repros.count("repro:pytorch-8")) << doc.dump();
  EXPECT_EQ(repros["repro:pytorch-8"]["verdict"], "pass");
  EXPECT_NE(repros["repro:pytorch-8"]["message"].get<std::string>().find("refused, as the CPU refuses it: "),
            std::string::npos);
  // where.ScalarOther's own samples get no reference (synthesis gives it no boolean condition); the thread's call runs.
  for (const auto& r : doc["results"]) {
    if (r["op"] == "aten::where.ScalarOther" && r["dtype"] == "int64") EXPECT_EQ(r["verdict"], "skip") << r.dump();
  }
  ASSERT_TRUE(repros.count("repro:pytorch-7")) << doc.dump();
  EXPECT_EQ(repros["repro:pytorch-7"]["verdict"], "pass");
}

TEST(CliExpectations, AMalformedLedgerIsOneDiagnostic) {
  TempDir dir;
  const std::string release = testing::release_with_expectations(dir, "");
  dir.write("mps_known_bugs.yaml", "format: mps-audit-known-bugs/2\nentries:\n  - id: x\n    ops: sin\n");
  const EmulatedRun r = run(release, dir.path() + "/out", {}, {"MPS_AUDIT_DATA_DIR=" + dir.path()});
  EXPECT_EQ(r.result.exit_code, 2);
  EXPECT_NE(r.result.err.find("mps_known_bugs.yaml:4:10: 'ops' must be a list"), std::string::npos) << r.result.err;
  EXPECT_TRUE(r.doc.is_null());
}

// The commonest operators of a training step in float32 (convolution, matrix products, activations, normalization,
// losses, embedding, dropout, pooling, the optimizers' element-wise operators) pass or fall back on every shipped
// release, on the oldest macOS and the newest the data names: no list entry, and no known bug but one that a sample
// built for its input condition met, calls them failing.
TEST(CliExpectations, TheCommonestTrainingOperatorsAreNoFalseAlarmOnAnyShippedRelease) {
  const std::string ops =
      "^aten::(convolution|_convolution|conv2d|convolution_backward|addmm|mm|bmm|linear|relu|relu_|gelu|silu|"
      "_softmax|_log_softmax|native_batch_norm|batch_norm|native_layer_norm|layer_norm|native_group_norm|group_norm|"
      "cross_entropy_loss|nll_loss_forward|nll_loss_backward|mse_loss|embedding|embedding_dense_backward|"
      "native_dropout|dropout|max_pool2d_with_indices|avg_pool2d|add_\\.Tensor|mul_\\.Tensor|addcmul_|addcdiv_|"
      "lerp_\\.Scalar|sqrt|div\\.Tensor|sum|mean|threshold_backward)$";
  for (const std::string& release : testing::source_tree_releases()) {
    for (const std::vector<std::string> macos : {std::vector<std::string>{"--emu-macos", "13.0"}, {}}) {
      TempDir dir;
      std::vector<std::string> args = {"run",      "--target", "mps-emu",  "--emu-release", release,
                                       "--ops",    ops,        "--out",    dir.path(),      "--no-progress",
                                       "--dtypes", "float32",  "--format", "json"};
      args.insert(args.end(), macos.begin(), macos.end());
      const testing::CommandResult r = run_mps_audit(args);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const auto doc = nlohmann::json::parse(slurp(dir.path() + "/results.json"));
      EXPECT_GE(doc["results"].size(), 30u);
      for (const auto& rec : doc["results"]) {
        const std::string v = rec["verdict"];
        // A known bug of a narrower condition (in-place add_ into a strided view in 1.13.1, conv2d on chunk() views
        // in 2.11.0) is a conditional failure beside the verdict (Note [Conditional failures]), never the verdict.
        EXPECT_TRUE(v == "pass" || v == "fallback" || v == "skip")
            << release << " " << (macos.empty() ? "default macOS" : macos[1]) << ": " << rec["op"] << " " << v << ": "
            << rec["message"];
      }
    }
  }
}

// PyTorch 2.6.0's MACOS_BEFORE_13_3_XFAILLIST, read at major.minor: on macOS 13.2 its entries decide (int64 cumsum and
// cumprod are not implemented, atan2 raises, cdist is wrong), on 13.3 none of them holds and int64 atan2 is what
// UNIMPLEMENTED_XFAILLIST says at every version; nothing else differs.
TEST(CliExpectations, MacosMinorVersionsDifferExactlyWherePyTorchsConditionsSay) {
  TempDir dir;
  std::map<std::string, std::map<std::string, std::string>> verdicts;  // macOS -> "op dtype" -> verdict
  for (const char* macos : {"13.2", "13.3"}) {
    const testing::CommandResult r =
        run_mps_audit({"run", "--target", "mps-emu", "--emu-release", "2.6.0", "--emu-macos", macos, "--out",
                       dir.path() + "/" + macos, "--no-progress", "--samples", "none", "--ops",
                       "^aten::(cumsum|cumprod|atan2|cdist|sin)$", "--dtypes", "float32,int64", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(slurp(dir.path() + "/" + macos + "/results.json"));
    EXPECT_EQ(doc["environment"]["expectations"]["macos"], macos);
    for (const auto& rec : doc["results"]) {
      verdicts[macos][rec["op"].get<std::string>() + " " + rec["dtype"].get<std::string>()] = rec["verdict"];
    }
  }
  std::map<std::string, std::pair<std::string, std::string>> differ;
  for (const auto& [pair, v] : verdicts["13.2"]) {
    if (verdicts["13.3"][pair] != v) differ[pair] = {v, verdicts["13.3"][pair]};
  }
  const std::map<std::string, std::pair<std::string, std::string>> expected = {
      {"aten::atan2 int64", {"known_failure", "unsupported"}},
      {"aten::cdist float32", {"known_failure", "pass"}},
      {"aten::cumprod int64", {"unsupported", "pass"}},
      {"aten::cumsum int64", {"unsupported", "pass"}}};
  EXPECT_EQ(differ, expected);
}

// --emu-macos and --emu-chip take only what a Mac can be: one line with the valid values, exit 2, nothing written.
TEST(CliExpectations, AMacosOrChipThatIsNoneIsOneLine) {
  for (const auto& [flag, value, valid] : {std::tuple{"--emu-macos", "14.x", "13.2, 13.3, 14.4, 15.2 or 26.1"},
                                           std::tuple{"--emu-chip", "m9", "m1, m2, m3, m4 or m5"}}) {
    TempDir dir;
    const testing::CommandResult r = run_mps_audit({"run", "--target", "mps-emu", flag, value, "--out",
                                                    dir.path() + "/out", "--no-progress", "--ops", "^aten::sin$"});
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_NE(r.err.find(valid), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(path_exists(dir.path() + "/out/results.json"));
  }
}

TEST(CliTimeline, FirstNativeAndFirstExpectedToWorkReleasePerOperatorAndDtype) {
  const auto json = [](const testing::CommandResult& r) { return nlohmann::json::parse(r.out); };
  const auto shipped =
      run_mps_audit({"timeline", "--ops", "^aten::(round\\.decimals|pow\\.Tensor_Scalar)$", "--format", "json"});
  ASSERT_EQ(shipped.exit_code, 0) << shipped.err;
  const auto doc = json(shipped);
  EXPECT_EQ(doc["releases"], nlohmann::json(testing::source_tree_releases()));
  ASSERT_EQ(doc["ops"].size(), 2u);
  // Note [Since, as a range]: both ends, null where there is none.
  const auto range = [](const char* after, const char* by) {
    return nlohmann::json{{"after", after ? nlohmann::json(after) : nlohmann::json()},
                          {"by", by ? nlohmann::json(by) : nlohmann::json()}};
  };
  const auto& pow = doc["ops"][0];
  EXPECT_EQ(pow["op"], "aten::pow.Tensor_Scalar");
  EXPECT_EQ(pow["native_since"], range(nullptr, "1.13.1"));
  // 1.13.1's lists are an allow list, and it names pow only in float16: float32 is expected to work from 2.6.0 on.
  EXPECT_EQ(pow["works_since"], range("1.13.1", "2.6.0"));
  EXPECT_EQ(pow["dtypes"]["float16"]["works_since"], range(nullptr, "1.13.1"));
  const auto& round = doc["ops"][1];
  EXPECT_EQ(round["native_since"], range("2.6.0", "2.11.0"));
  // Still held back in the newest shipped release (2.14.1's lists name it too).
  const std::string newest = doc["releases"].back();
  EXPECT_EQ(round["dtypes"]["int64"]["works_since"], range(newest.c_str(), nullptr));
  EXPECT_NE(round["dtypes"]["int64"]["held_back_by"].get<std::string>().find("UNIMPLEMENTED_XFAILLIST"),
            std::string::npos);

  // A newer release whose lists no longer name round.decimals for int64.
  TempDir data;
  make_directories(data.path() + "/pytorch-9.0.0");
  data.write("pytorch-9.0.0/native_functions.yaml", slurp(source_path("data/pytorch-2.11.0/native_functions.yaml")));
  data.write("pytorch-9.0.0/mps_expectations.tsv", "# mps-audit-expectations/1\n# release: 9.0.0\n");
  const auto newer = run_mps_audit({"timeline", "--ops", "^aten::round\\.decimals$", "--format", "json"},
                                   {"MPS_AUDIT_DATA_DIR=" + data.path()});
  ASSERT_EQ(newer.exit_code, 0) << newer.err;
  EXPECT_EQ(json(newer)["releases"].back(), "9.0.0");
  EXPECT_EQ(json(newer)["ops"][0]["dtypes"]["int64"]["works_since"], range(newest.c_str(), "9.0.0"));

  const auto md = run_mps_audit({"timeline", "--ops", "^aten::round\\.decimals$", "--format", "md"});
  // Works since 1.13.1 in float32 (a composite there, which its allow list names): its block list calls the
  // decimals variants flaky, which is no failure (Note [Expected verdicts]).
  EXPECT_NE(md.out.find("| `aten::round.decimals` | after 2.6.0, by 2.11.0 | by 1.13.1 |"), std::string::npos)
      << md.out;
  const auto text = run_mps_audit({"timeline", "--ops", "^aten::pow\\.Tensor_Scalar$"});
  EXPECT_NE(
      text.out.find("aten::pow.Tensor_Scalar                          by 1.13.1               after 1.13.1, by 2.6.0"),
      std::string::npos)
      << text.out;
  const auto bad = run_mps_audit({"timeline", "--format", "yaml"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--format yaml: expected text, md or json"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace mps_audit
