// Tests of the HTML report: the golden page of tests/data/reports/results.json (MPS_AUDIT_UPDATE_GOLDEN=1 rewrites
// it), hostile strings never reaching the page as markup, the embedded document, and the environment banners.
// tests/browser/html_report.test.mjs tests the page's behaviour in Chromium.
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/renderers.h"
#include "results/analysis.h"
#include "test_support.h"

namespace mps_audit {
namespace {

const char* kFixture = "tests/data/reports/results.json";
const char* kGolden = "tests/data/reports/results.html";

Results fixture() {
  return load_results(testing::source_path(kFixture));
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The text of the page's data element, and it parsed.
const char* kDataOpen = "<script type=\"application/json\" id=\"mps-audit-data\">";
std::string data_text(const std::string& page) {
  const size_t begin = page.find(kDataOpen);
  EXPECT_NE(begin, std::string::npos);
  const size_t from = begin + std::string(kDataOpen).size();
  return page.substr(from, page.find("</script>", from) - from);
}
nlohmann::json page_data(const std::string& page) {
  return nlohmann::json::parse(data_text(page));
}

Results one_record_run(const std::string& emulator, size_t planned) {
  Results r;
  r.environment.target = emulator.empty() ? "cuda" : "mps-emu";
  r.environment.device = emulator.empty() ? "cuda:0" : "mps:0";
  r.environment.emulator = emulator;
  ProbeResult p;
  p.op = "aten::sin";
  p.dtype = "float32";
  p.verdict = Verdict::kPass;
  r.records.push_back(p);
  r.run.planned = planned;
  r.run.finished = 1;
  return r;
}

TEST(HtmlReportGolden, FixtureRendersToTheGoldenPage) {
  const std::string page = render_html({fixture()});
  const std::string path = testing::source_path(kGolden);
  if (std::getenv("MPS_AUDIT_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << page;
    return;
  }
  EXPECT_EQ(page, testing::slurp(path)) << "differs from " << path
                                        << "; if the change is meant, MPS_AUDIT_UPDATE_GOLDEN=1 rewrites it";
}

TEST(HtmlReport, HostileStringsNeverAppearAsMarkup) {
  const Results results = fixture();
  // The fixture has the strings this test is about (so it cannot pass vacuously).
  bool has_hostile_message = false;
  for (const auto& r : results.records) has_hostile_message |= r.message.find("</script><img") != std::string::npos;
  ASSERT_TRUE(has_hostile_message);
  const std::string page = render_html({results});
  for (const char* markup : {"<img", "<svg onload", "<script>alert", "<b>not bold", "<b>odd", "<i>dim", "<!--"}) {
    EXPECT_EQ(page.find(markup), std::string::npos) << markup;
  }
  // The page's own scripts only: the data cannot close its element early.
  EXPECT_EQ(count_of(page, "<script"), 2u);
  EXPECT_EQ(count_of(page, "</script>"), 2u);
  // U+2028 and U+2029 only as \u escapes (raw, they end a line in older JavaScript).
  EXPECT_EQ(page.find("\u2028"), std::string::npos);
  EXPECT_EQ(page.find("\u2029"), std::string::npos);
  // Text outside the data is escaped as HTML: the spec path is in the environment table.
  EXPECT_NE(page.find("specs/&lt;b&gt;odd&lt;/b&gt;&amp;.yaml"), std::string::npos);
}

TEST(HtmlReport, EmbeddedDataKeepsEveryStringExactly) {
  const Results results = fixture();
  const nlohmann::json data = page_data(render_html({results}));
  const auto& strings = data.at("strings");
  ASSERT_EQ(data.at("records").size(), results.records.size());
  for (size_t i = 0; i < results.records.size(); ++i) {
    const ProbeResult& r = results.records[i];
    const auto& rec = data.at("records")[i];
    EXPECT_EQ(data.at("ops")[rec[0].get<size_t>()][0], r.op);
    EXPECT_EQ(data.at("columns")[rec[1].get<size_t>()][1], r.dtype);
    EXPECT_EQ(data.at("verdicts")[rec[2].get<size_t>()]["name"], std::string(to_string(r.verdict)));
    EXPECT_EQ(strings[rec[3].get<size_t>()], r.message) << r.op;
  }
}

TEST(HtmlReport, GroupsAndWorstVerdictsComeFromTheModel) {
  const Results results = fixture();
  const nlohmann::json data = page_data(render_html({results}));
  for (const auto& op : data.at("ops")) {
    const std::string name = op[0];
    EXPECT_EQ(data.at("groups")[op[1].get<size_t>()], std::string(op_group(name))) << name;
    Verdict worst = Verdict::kSkip;
    for (const auto& r : results.records) {
      if (r.op == name) worst = worse(worst, r.verdict);
    }
    EXPECT_EQ(data.at("verdicts")[op[2].get<size_t>()]["name"], std::string(to_string(worst))) << name;
  }
}

TEST(HtmlReport, EmulatedRunsHaveTheBannerAndRealOnesDoNot) {
  const std::string emulated = render_html({one_record_run("emulated MPS (PyTorch 2.11.0 registry)", 1)});
  EXPECT_NE(emulated.find("Emulated MPS, not a real Mac"), std::string::npos);
  const std::string real = render_html({one_record_run("", 1)});
  EXPECT_EQ(real.find("Emulated MPS"), std::string::npos);
  EXPECT_NE(real.find("real device"), std::string::npos);
}

TEST(HtmlReport, IncompleteRunsSaySo) {
  const std::string page = render_html({one_record_run("", 5)});
  EXPECT_NE(page.find("Incomplete run: 1 of 5 planned probes finished, 4 not run"), std::string::npos);
  EXPECT_NE(page.find("incomplete run</span>"), std::string::npos);
  EXPECT_EQ(render_html({one_record_run("", 1)}).find("Incomplete run"), std::string::npos);
}

TEST(HtmlReport, SeveralRunsGetColumnGroupsNamedByEnvironment) {
  const std::string page = render_html({one_record_run("emulated MPS (PyTorch 1.13.1 registry)", 1), fixture()});
  const nlohmann::json data = page_data(page);
  ASSERT_EQ(data.at("runs").size(), 2u);
  EXPECT_EQ(data.at("runs")[0], "1: mps-emu — emulated MPS (PyTorch 1.13.1 registry)");
  EXPECT_EQ(data.at("runs")[1], "2: mps-emu — emulated MPS (PyTorch 1.13.1 registry, macOS 14 rules)");
  // A column per (run, dtype): float32 of the first, float32, float16 and float64 of the second.
  ASSERT_EQ(data.at("columns").size(), 4u);
  EXPECT_EQ(data.at("columns")[0], nlohmann::json({0, "float32"}));
  EXPECT_EQ(data.at("columns")[1], nlohmann::json({1, "float32"}));
  // aten::sin is in the first run only; the fixture's operators in the second only.
  EXPECT_EQ(data.at("ops")[0][3], nlohmann::json({0, -1}));
  EXPECT_EQ(data.at("records").size(), 1 + fixture().records.size());
  EXPECT_NE(page.find("Emulated MPS, not a real Mac</strong> (run 1)"), std::string::npos);
  EXPECT_NE(page.find("Emulated MPS, not a real Mac</strong> (run 2)"), std::string::npos);
}

TEST(HtmlReport, NothingIsFetched) {
  std::string page = render_html({fixture()});
  // What the page itself says, without the data (whose strings are inert text) and the SVG namespace (a name).
  const std::string data = data_text(page);
  page.erase(page.find(data), data.size());
  for (size_t at; (at = page.find("http://www.w3.org/2000/svg")) != std::string::npos;) page.erase(at, 26);
  for (const char* url : {"http:", "https:", "//cdn", "src=", "@import", "url(", "fetch(", "XMLHttpRequest"}) {
    EXPECT_EQ(page.find(url), std::string::npos) << url;
  }
  EXPECT_NE(page.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
}

}  // namespace
}  // namespace mps_audit
