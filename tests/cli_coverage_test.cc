// End-to-end tests of `mps-audit coverage` (report/coverage_page.h): the shipped releases and one more in
// $MPS_AUDIT_DATA_DIR, the Core ATen operators first, ranges, what the newest lists still expect to fail, and a
// malformed release. docs.coverage_is_current (tests/CMakeLists.txt) checks the checked-in page.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "common/paths.h"
#include "registry/op_tier.h"
#include "test_support.h"

namespace mps_audit {
namespace {

using testing::run_mps_audit;
using testing::slurp;
using testing::source_path;
using testing::TempDir;

// The newest shipped release, a copy of it as release 9.0.0 that adds an MPS kernel of `op` by hand and whose lists
// expect `op` to fail in float16.
struct NewerRelease {
  TempDir data;
  std::string newest;  // of the shipped ones
  std::string op;      // "aten::name.overload": no MPS kernel in `newest`, public, not core

  NewerRelease() {
    const auto shipped = nlohmann::json::parse(run_mps_audit({"timeline", "--ops", "^$", "--format", "json"}).out);
    newest = shipped["releases"].back();
    const std::string dir = source_path("data/pytorch-" + newest);
    const auto registry =
        nlohmann::json::parse(run_mps_audit({"registry", "--native-functions", dir, "--format", "json"}).out);
    const CoreOps core = core_ops_of(read_native_functions(dir + "/native_functions.yaml"), newest);
    for (const auto& e : registry["ops"]) {
      const std::string name = e["name"];
      if (e["status"] == "none" && name.rfind("aten::_", 0) != 0 && !core.ops.count(name)) {
        op = name;
        break;
      }
    }
    make_directories(data.path() + "/pytorch-9.0.0");
    data.write("pytorch-9.0.0/native_functions.yaml", slurp(dir + "/native_functions.yaml"));
    data.write("pytorch-9.0.0/mps_extra_registrations.tsv", op.substr(op.find("::") + 2) + "\tnative\n");
    data.write("pytorch-9.0.0/mps_expectations.tsv",
               "# mps-audit-expectations/1\n# release: 9.0.0\n"
               "# operator\tdtypes\tkind\tscope\tmacos\tlist\topinfo\tmapping\tsource\treason\n" +
                   op + "\tfloat16\tunimplemented\tforward\t*\tNEW_XFAILLIST\tx\taten_name\tt.py:1\tnot yet\n");
  }
  testing::CommandResult coverage(const std::string& format) const {
    return run_mps_audit({"coverage", "--format", format}, {"MPS_AUDIT_DATA_DIR=" + data.path()});
  }
};

// The rows of the Markdown page's section `title`: operator -> its line.
std::map<std::string, std::string> section_rows(const std::string& md, const std::string& title) {
  std::map<std::string, std::string> rows;
  size_t at = md.find("\n## " + std::string(title) + ":");
  if (at == std::string::npos) return rows;
  const size_t end = md.find("\n## ", at + 1);
  for (size_t line = md.find("\n| `", at); line < end; line = md.find("\n| `", line + 1)) {
    const std::string text = md.substr(line + 1, md.find('\n', line + 1) - line - 1);
    rows[text.substr(3, text.find('`', 3) - 3)] = text;
  }
  return rows;
}

TEST(CliCoverage, EveryOperatorByTierWithRangesAndWhatTheNewestListsExpectToFail) {
  const NewerRelease r;
  ASSERT_FALSE(r.op.empty());
  const auto md = r.coverage("md");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  // The Core ATen operators are those the newest release tags `core`, all of them and first.
  const CoreOps core = core_ops_of(read_native_functions(r.data.path() + "/pytorch-9.0.0/native_functions.yaml"), "");
  ASSERT_FALSE(core.ops.empty());
  const auto core_rows = section_rows(md.out, "Core ATen operators");
  EXPECT_EQ(core_rows.size(), core.ops.size());
  for (const auto& op : core.ops) EXPECT_TRUE(core_rows.count(op)) << op;
  size_t last = 0;
  for (OpTier tier : kAllOpTiers) {
    const size_t at = md.out.find("\n## " + std::string(tier_title(tier)) + ":");
    ASSERT_NE(at, std::string::npos) << tier_title(tier);
    EXPECT_GT(at, last) << tier_title(tier);
    last = at;
  }
  EXPECT_TRUE(section_rows(md.out, "Test operators").count("aten::_foobar"));
  EXPECT_TRUE(section_rows(md.out, "Internal operators").count("aten::_softmax.out"));

  // The kernel 9.0.0 adds: falls back in the newest shipped release, native (partial: float16) in 9.0.0.
  const std::string row = section_rows(md.out, "Other public operators")[r.op];
  EXPECT_NE(row.find(fmt::format(" | native, partial | after {}, by 9.0.0 |", r.newest)), std::string::npos) << row;
  EXPECT_NE(row.find("| falls back"), std::string::npos) << row;
  EXPECT_NE(row.find("| float16: NEW\\_XFAILLIST unimplemented |"), std::string::npos) << row;  // `_` escaped
  EXPECT_NE(md.out.find(fmt::format(
                " | {} | 9.0.0 | native since | works since | 9.0.0's lists expect to fail | known bugs |", r.newest)),
            std::string::npos);
  // Nothing of where the data lives.
  EXPECT_EQ(md.out.find(r.data.path()), std::string::npos);
  EXPECT_EQ(md.out.find(source_path("data")), std::string::npos);

  const auto html = r.coverage("html");
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_EQ(html.out.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.out.find("<details><summary><h2 id=\"internal\">Internal operators:"), std::string::npos);
  EXPECT_NE(html.out.find("<details><summary><h2 id=\"test\">Test operators:"), std::string::npos);
  EXPECT_LT(html.out.find("<h2 id=\"core\">"), html.out.find("<h2 id=\"public\">"));
  EXPECT_NE(html.out.find("<th>" + r.op + "</th>"), std::string::npos);
  EXPECT_EQ(html.out.find(r.data.path()), std::string::npos);
  EXPECT_EQ(html.out.find("<script"), std::string::npos);
  EXPECT_EQ(r.coverage("html").out, html.out);
}

TEST(CliCoverage, AMalformedReleaseIsOneDiagnostic) {
  const NewerRelease r;
  r.data.write("pytorch-9.0.0/mps_expectations.tsv",
               "# mps-audit-expectations/1\n# release: 9.0.0\n# operator\tdtypes\tkind\n"
               "aten::sin\tfloat32\twrnog\tforward\t*\tL\tsin\tm\ts\tr\n");
  TempDir out;
  const auto bad = run_mps_audit({"coverage", "--format", "md", "-o", out.path() + "/coverage.md"},
                                 {"MPS_AUDIT_DATA_DIR=" + r.data.path()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(
      bad.err.rfind("error: " + r.data.path() + "/pytorch-9.0.0/mps_expectations.tsv:4:19: unknown kind 'wrnog'", 0),
      0u)
      << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  EXPECT_FALSE(path_exists(out.path() + "/coverage.md"));
  const auto format = run_mps_audit({"coverage", "--format", "json"});
  EXPECT_EQ(format.exit_code, 2);
  EXPECT_NE(format.err.find("--format json: expected md or html"), std::string::npos) << format.err;
}

}  // namespace
}  // namespace mps_audit
