// End-to-end tests of the subcommands that read results.json: `render`, `diff` (the CI gate and its ratchet) and
// `compare`, with the fixtures of tests/data/golden/results/.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/paths.h"
#include "test_support.h"

namespace mps_audit {
namespace {

using testing::run_mps_audit;
using testing::TempDir;

std::string fixture(const std::string& name) {
  return testing::source_path("tests/data/golden/results/" + name);
}

void expect_one_diagnostic(const testing::CommandResult& r, const std::string& start) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind(start, 0), 0u) << r.err;
  EXPECT_EQ(r.err.find("error:", 1), std::string::npos) << r.err;
}

TEST(CliReport, RenderWritesEveryFormatFromAResultsFile) {
  TempDir dir;
  const auto r = run_mps_audit(
      {"render", fixture("run.json"), "--format", "json,md,html,junit,csv,badge", "-o", dir.path() + "/reports"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name :
       {"results.json", "results.md", "results.html", "results.junit.xml", "results.csv", "badge.svg"}) {
    EXPECT_TRUE(path_exists(dir.path() + "/reports/" + name)) << name;
  }
  // Rendering is a pure function of results.json: the JSON it writes renders the same Markdown again.
  const auto again = run_mps_audit({"render", dir.path() + "/reports/results.json", "--format", "md"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(testing::slurp(dir.path() + "/reports/results.md"), testing::slurp(fixture("run.md")));
}

// Note [Native since, when asked]: a run reads the shipped releases for the HTML report's "native since" column only
// when it writes that report; render reads them for a results.json without them, and draws the same column.
TEST(CliReport, NativeSinceIsReadOnlyForTheHtmlReportAndRenderFillsItIn) {
  TempDir dir;
  const auto timeline = [](const std::string& path) {
    return nlohmann::json::parse(testing::slurp(path)).value("timeline", nlohmann::json());
  };
  const auto run = [&](const std::string& out, const char* formats) {
    return run_mps_audit({"run", "--target", "mps-emu", "--ops", "^aten::(sin|round\\.decimals)$", "--dtypes",
                          "float32", "--format", formats, "--out", dir.path() + "/" + out, "--no-progress"});
  };
  const auto with_html = run("html", "json,html");
  ASSERT_EQ(with_html.exit_code, 0) << with_html.err;
  const nlohmann::json read = timeline(dir.path() + "/html/results.json");
  ASSERT_TRUE(read.is_object());
  EXPECT_EQ(read["native_since"]["aten::round.decimals"], "2.11.0");
  const auto json_only = run("json", "json");
  ASSERT_EQ(json_only.exit_code, 0) << json_only.err;
  EXPECT_TRUE(timeline(dir.path() + "/json/results.json").is_null());
  const auto rendered = run_mps_audit(
      {"render", dir.path() + "/json/results.json", "--format", "json,html", "-o", dir.path() + "/rendered"});
  ASSERT_EQ(rendered.exit_code, 0) << rendered.err;
  EXPECT_EQ(timeline(dir.path() + "/rendered/results.json"), read);
  // And a render without the HTML report reads nothing for it.
  const auto md =
      run_mps_audit({"render", dir.path() + "/json/results.json", "--format", "json,md", "-o", dir.path() + "/md"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_TRUE(timeline(dir.path() + "/md/results.json").is_null());
}

TEST(CliReport, MarkdownIsAppendedToTheGithubStepSummary) {
  TempDir dir;
  const std::string summary = dir.write("summary.md", "earlier step\n");
  const auto r = run_mps_audit({"render", fixture("run.json"), "--format", "md", "-o", dir.path()},
                               {"GITHUB_STEP_SUMMARY=" + summary});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = testing::slurp(summary);
  EXPECT_EQ(text.rfind("earlier step\n# mps-audit: ", 0), 0u) << text.substr(0, 200);
}

TEST(CliReport, DiffExitsOneOnARegressionAndZeroOtherwise) {
  const auto regressed = run_mps_audit({"diff", fixture("base.json"), fixture("run.json")});
  EXPECT_EQ(regressed.exit_code, 1) << regressed.err;
  // Among them nonzero float16, fallback -> known_failure: PyTorch's own lists say it fails on a real Mac.
  EXPECT_NE(regressed.out.find("gate: FAILED, 5 regressions"), std::string::npos) << regressed.out;
  EXPECT_NE(regressed.out.find("aten::nonzero float16: fallback -> known_failure"), std::string::npos) << regressed.out;
  // A run against itself: nothing changed.
  const auto same = run_mps_audit({"diff", fixture("run.json"), fixture("run.json"), "--format", "json"});
  EXPECT_EQ(same.exit_code, 0) << same.err;
  const auto doc = nlohmann::json::parse(same.out);
  EXPECT_EQ(doc["gate"], "passed");
  EXPECT_EQ(doc["unchanged"], 17);
  EXPECT_TRUE(doc["conditional"].empty());
  // The run's conv2d passes and fails under a condition the base did not have: listed; a failure only when asked.
  EXPECT_NE(regressed.out.find("new conditional failures:\n  aten::conv2d float32: (absent) -> pass"),
            std::string::npos)
      << regressed.out;
  const auto gated = run_mps_audit({"diff", fixture("base.json"), fixture("run.json"), "--fail-on-conditional"});
  EXPECT_EQ(gated.exit_code, 1);
  EXPECT_NE(gated.out.find("gate: FAILED, 5 regressions and 1 new conditional failures"), std::string::npos)
      << gated.out;
  const auto md = run_mps_audit({"diff", fixture("base.json"), fixture("run.json"), "--format", "md"});
  EXPECT_EQ(md.exit_code, 1);
  EXPECT_EQ(md.out.rfind("## mps-audit diff: ❌ 5 regressions", 0), 0u) << md.out;
}

TEST(CliReport, TheBaselineOnlyMovesForward) {
  TempDir dir;
  const std::string baseline = dir.path() + "/baseline.json";
  // A regression: the baseline is not written.
  auto r = run_mps_audit({"diff", fixture("base.json"), fixture("run.json"), "--update-baseline", baseline});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("not updated: 5 regressions"), std::string::npos) << r.out;
  EXPECT_FALSE(path_exists(baseline));
  // No regression: the new results become the baseline, and diffing against it passes.
  r = run_mps_audit({"diff", fixture("run.json"), fixture("run.json"), "--update-baseline", baseline});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(path_exists(baseline));
  EXPECT_EQ(run_mps_audit({"diff", baseline, fixture("run.json")}).exit_code, 0);
  EXPECT_EQ(run_mps_audit({"diff", baseline, fixture("base.json")}).exit_code, 1);
}

TEST(CliReport, RunWithABaselineFailsOnARegression) {
  TempDir dir;
  // On emulated 1.13.1 cumsum falls back to the CPU; a baseline in which it passed makes that a regression.
  const std::string baseline = dir.write("baseline.json", R"({"schema_version": 2, "environment": {},
    "results": [{"op": "aten::cumsum", "dtype": "float32", "verdict": "pass"}]})");
  const auto run = [&](const std::string& out, const std::string& baseline) {
    return testing::emulated_run_args(out, {"--ops", "^aten::cumsum$", "--dtypes", "float32", "--baseline", baseline});
  };
  auto r = run_mps_audit(run(dir.path() + "/out", baseline));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("aten::cumsum float32: pass -> fallback"), std::string::npos) << r.out;
  EXPECT_NE(testing::slurp(dir.path() + "/out/diff.md").find("❌ 1 regressions"), std::string::npos);
  // Against its own results the run passes the gate.
  r = run_mps_audit(run(dir.path() + "/again", dir.path() + "/out/results.json"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // A baseline that cannot be read stops the run before it starts.
  expect_one_diagnostic(run_mps_audit(run(dir.path() + "/none", dir.path() + "/missing.json")),
                        "error: " + dir.path() + "/missing.json: cannot read file");
  EXPECT_FALSE(path_exists(dir.path() + "/none"));
}

TEST(CliReport, CompareNamesEachRunByItsEnvironment) {
  TempDir dir;
  const auto r = run_mps_audit(
      {"compare", fixture("base.json"), fixture("run.json"), "--format", "json", "-o", dir.path() + "/c.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(testing::slurp(dir.path() + "/c.json"));
  ASSERT_EQ(doc["runs"].size(), 2u);
  EXPECT_EQ(doc["runs"][0]["label"], "emulated MPS (PyTorch 1.13.1 registry, macOS 14 rules)");
  EXPECT_EQ(doc["runs"][1]["label"], "emulated MPS (PyTorch 1.13.1 registry, macOS 14 rules) (run 2)");
  EXPECT_EQ(doc["steps"][0]["fallbacks_introduced"], nlohmann::json({{"aten::cumsum", {"float32"}}}));
}

TEST(CliReport, BadInputGivesOneDiagnosticAndWritesNothing) {
  TempDir dir;
  const std::string missing = dir.path() + "/missing.json";
  expect_one_diagnostic(run_mps_audit({"render", missing}), "error: " + missing + ": cannot read file");
  const std::string broken = dir.write("broken.json", "{\"results\": [\n  {\"op\": }\n");
  expect_one_diagnostic(run_mps_audit({"diff", broken, fixture("run.json")}), "error: " + broken + ":2:10: not JSON");
  const std::string registry = dir.write("registry.json", "{\"ops\": []}");
  expect_one_diagnostic(run_mps_audit({"compare", registry, fixture("run.json")}),
                        "error: " + registry + ": not a results.json");
  expect_one_diagnostic(run_mps_audit({"compare", fixture("run.json")}), "error: compare needs at least two");
  expect_one_diagnostic(run_mps_audit({"render", fixture("run.json"), "--format", "pdf", "-o", dir.path() + "/o"}),
                        "error: --format pdf: expected one of json, md, html, junit, csv, badge");
  EXPECT_FALSE(path_exists(dir.path() + "/o"));
  expect_one_diagnostic(run_mps_audit({"diff", fixture("run.json"), fixture("run.json"), "--format", "yaml"}),
                        "error: --format yaml: expected text, md or json");
}

}  // namespace
}  // namespace mps_audit
