// Golden-file tests of every report format of a run, of diff and of compare (tests/data/golden/results/;
// MPS_AUDIT_UPDATE_GOLDEN=1 rewrites them), and what each format must hold whatever the golden says: untrusted
// messages escaped, the Markdown size limit, JUnit's outcomes.
#include <regex>

#include <gtest/gtest.h>

#include "common/diagnostics.h"
#include "report/diff_report.h"
#include "report/renderers.h"
#include "results/compare.h"
#include "results/diff.h"
#include "test_support.h"

namespace mps_audit {
namespace {

Results fixture(const std::string& name) {
  return load_results(testing::source_path("tests/data/golden/results/" + name));
}

size_t occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(ReportsGolden, EveryFormatOfARun) {
  const Results run = fixture("run.json");
  testing::expect_golden("results/run.md", render_markdown(run));
  testing::expect_golden("results/run.junit.xml", render_junit(run));
  testing::expect_golden("results/run.csv", render_csv(run));
  testing::expect_golden("results/run.badge.svg", render_badge(run));
  testing::expect_golden("results/run.summary.txt", render_summary(run));
  testing::expect_golden("results/run.rendered.json", render_results_json(run));
}

TEST(ReportsGolden, DiffAndCompare) {
  const Results base = fixture("base.json"), run = fixture("run.json");
  const RunDiff d = diff_runs(base, run);
  testing::expect_golden("results/diff.txt", render_diff(d, "text"));
  testing::expect_golden("results/diff.md", render_diff(d, "md"));
  testing::expect_golden("results/diff.json", render_diff(d, "json"));
  const std::vector<Results> runs = {base, run};
  testing::expect_golden("results/compare.md", render_comparison(compare_runs(runs), runs, "md"));
  testing::expect_golden("results/compare.json", render_comparison(compare_runs(runs), runs, "json"));
}

// The fixture's aten::hostile carries markup, quotes, a pipe and a newline in its message and warning.
TEST(Reports, UntrustedTextIsEscaped) {
  const Results run = fixture("run.json");
  const Results base = fixture("base.json");
  const std::vector<Results> runs = {base, run};
  for (const std::string& text :
       {render_markdown(run), render_junit(run), render_badge(run), render_diff(diff_runs(base, run), "md"),
        render_comparison(compare_runs(runs), runs, "md")}) {
    EXPECT_EQ(text.find("<img"), std::string::npos) << text;
    EXPECT_EQ(text.find("</script>"), std::string::npos) << text;
  }
  // Markdown: the message stays in its table row (the pipe is escaped, the newline flattened).
  const std::string md = render_markdown(run);
  EXPECT_NE(md.find(R"(&lt;img src=x onerror=alert(1)&gt; \| "quoted" &amp; 'single' second line)"), std::string::npos)
      << md;
  // XML: attribute values cannot be closed early.
  const std::string xml = render_junit(run);
  EXPECT_NE(xml.find("&lt;img src=x onerror=alert(1)&gt; | &quot;quoted&quot; &amp; &#39;single&#39;"),
            std::string::npos);
  // CSV: a field with quotes, commas or newlines is quoted, its quotes doubled.
  const std::string csv = render_csv(run);
  EXPECT_NE(csv.find("\"</script><img src=x onerror=alert(1)> | \"\"quoted\"\" & 'single'\nsecond line\""),
            std::string::npos);
}

// The fixture's records and 400 copies of them under other operators' names: a run too large for one page.
Results fixture_times_401() {
  Results big = fixture("run.json");
  const std::vector<ProbeResult> some = big.records;
  for (int i = 0; i < 400; ++i) {
    for (ProbeResult r : some) {
      r.op += std::to_string(i);
      big.records.push_back(r);
    }
  }
  return big;
}

TEST(Reports, MarkdownStaysWithinItsLimitAndSaysWhatItLeftOut) {
  Results big = fixture_times_401();
  RenderOptions options;
  options.markdown_limit = 20000;
  const std::string md = render_markdown(big, options);
  EXPECT_LE(md.size(), options.markdown_limit);
  EXPECT_NE(md.find("Left out to stay within 20000 characters"), std::string::npos);
  EXPECT_NE(md.find("rows shown; the rest did not fit"), std::string::npos);
  EXPECT_NE(md.find("## Summary"), std::string::npos);  // what comes first is never cut
  options.markdown_limit = 10000000;
  EXPECT_EQ(render_markdown(big, options).find("Left out"), std::string::npos);
}

// A long table shows its first rows, so that the sections after it fit too: what fails before what only runs slower,
// the notes last; every row stays in results.json.
TEST(Reports, MarkdownShowsTheFirstRowsOfLongTablesAndEverySection) {
  Results big = fixture_times_401();
  const std::string md = render_markdown(big, RenderOptions());
  EXPECT_NE(md.find("_The first 15 of 802 rows; every row is in results.json"), std::string::npos) << md.size();
  const size_t failures = md.find("## Failures"), conditional = md.find("## Conditional failures"),
               fallbacks = md.find("## Fall back to the CPU");
  ASSERT_NE(fallbacks, std::string::npos) << md.substr(md.size() - 600);
  EXPECT_LT(failures, conditional);
  EXPECT_LT(conditional, fallbacks);
  // Only the matrix, last and the largest, is left out of the limit (the whole of it is in results.html).
  const std::string left_out = md.substr(md.find("Left out"));
  EXPECT_EQ(left_out.rfind("Left out to stay within 65000 characters: matrix (", 0), 0u) << left_out;
  EXPECT_EQ(left_out.find(';'), std::string::npos) << left_out;
}

TEST(Reports, MarkdownSaysARunIsIncomplete) {
  Results run = fixture("run.json");
  EXPECT_NE(render_markdown(run).find("**Incomplete run** (stopped by SIGINT): 17 of 19 planned probes finished, "
                                      "2 not run"),
            std::string::npos);
  run.run = {run.records.size(), run.records.size(), "", ""};
  EXPECT_EQ(render_markdown(run).find("Incomplete"), std::string::npos);
}

TEST(Reports, JunitHasOneTestcasePerRecordAndStrictFailsFallbacks) {
  const Results run = fixture("run.json");
  const auto count_failures = [](const std::string& xml) { return occurrences(xml, "<failure "); };
  const std::string xml = render_junit(run);
  EXPECT_EQ(occurrences(xml, "<testcase "), run.records.size());
  // mismatch x2, error x2, crash, timeout fail; skip, xfail and known_failure are skipped.
  EXPECT_EQ(count_failures(xml), 6u);
  EXPECT_EQ(occurrences(xml, "<skipped "), 3u);
  RenderOptions strict;
  strict.strict = true;
  // unsupported x2, fallback x2, xpass fail too.
  EXPECT_EQ(count_failures(render_junit(run, strict)), 11u);
  // The suites' counts add up to the top level's.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(xml, m, std::regex("<testsuites [^>]*tests=\"(\\d+)\" failures=\"(\\d+)\"")));
  EXPECT_EQ(std::stoul(m[1]), run.records.size());
  EXPECT_EQ(std::stoul(m[2]), 6u);
}

TEST(Reports, BadgeIsTheShareOfProbedPairsThatPass) {
  Results run = fixture("run.json");
  // 3 pass of 16 probed (one skip) -> 19%; a pass with a conditional failure (conv2d) passes
  EXPECT_NE(render_badge(run).find(">19%<"), std::string::npos);
  for (auto& r : run.records) r.verdict = Verdict::kPass;
  EXPECT_NE(render_badge(run).find(">100%<"), std::string::npos);
}

TEST(Reports, UnknownFormatIsBadInput) {
  EXPECT_THROW(check_report_formats({"json", "pdf"}), UserError);
  EXPECT_NO_THROW(check_report_formats(report_formats()));
}

}  // namespace
}  // namespace mps_audit
