// A test suite's calls file (Note [A test suite's calls]): each call's tests read back, kept in model.json and listed
// per test in model.md; a program's file without them reads as before; malformed tests give one line.
#include "model/calls_file.h"

#include <gtest/gtest.h>

#include <ATen/core/Dict.h>
#include <ATen/core/List.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <nlohmann/json.hpp>

#include "common/diagnostics.h"
#include "model/calls_replay.h"
#include "probe/recorded_samples.h"  // kCallsFormat
#include "report/model_reports.h"
#include "test_support.h"

namespace mps_audit {
namespace {

using Dict = c10::Dict<c10::IValue, c10::IValue>;

Dict dict(std::initializer_list<std::pair<std::string, c10::IValue>> items) {
  Dict d(c10::StringType::get(), c10::AnyType::get());
  for (const auto& [k, v] : items) d.insert(k, v);
  return d;
}

Dict counts(std::initializer_list<std::pair<std::string, int64_t>> items) {
  Dict d(c10::StringType::get(), c10::AnyType::get());
  for (const auto& [k, v] : items) d.insert(k, v);
  return d;
}

// A calls file of two distinct calls: cumsum made by two tests (one in a fixture's setup), sin by one; with `tests`
// false, the same calls as a program's recording makes them.
std::string write_calls(const testing::TempDir& dir, bool tests, const c10::IValue& bad_tests = {}) {
  c10::impl::GenericList calls(c10::AnyType::get());
  Dict cumsum = dict(
      {{"op", std::string("aten::cumsum")},
       {"dtype", std::string("float32")},
       {"count", int64_t{3}},
       {"sites", dict({{"test_ops.py:12", counts({{"forward", 2}})}, {"conftest.py:7", counts({{"forward", 1}})}})}});
  Dict sin = dict({{"op", std::string("aten::sin")},
                   {"dtype", std::string("float32")},
                   {"count", int64_t{1}},
                   {"sites", dict({{"test_ops.py:20", counts({{"forward", 1}})}})}});
  if (tests) {
    cumsum.insert("tests", dict({{"test_ops.py::test_cumsum", dict({{"call", counts({{"test_ops.py:12", 2}})}})},
                                 {"test_ops.py::test_fixture", dict({{"setup", counts({{"conftest.py:7", 1}})}})}}));
    sin.insert("tests", dict({{"test_ops.py::test_sin", dict({{"call", counts({{"test_ops.py:20", 1}})}})}}));
  }
  if (!bad_tests.isNone()) sin.insert("tests", bad_tests);
  calls.push_back(cumsum);
  calls.push_back(sin);
  const Dict top = dict({{"format", std::string(kCallsFormat)},
                         {"torch", std::string("1.13.1")},
                         {"sources", dict({{"test_ops.py:12", std::string("torch.cumsum(x, 0)")}})},
                         {"calls", calls}});
  const std::vector<char> bytes = torch::jit::pickle_save(top);
  return dir.write("calls.pt", std::string(bytes.begin(), bytes.end()));
}

TEST(CallsFile, EachCallKeepsTheTestsThatMadeItByPhaseAndSite) {
  testing::TempDir dir;
  const CallsFile f = load_calls_file(write_calls(dir, /*tests=*/true));
  ASSERT_EQ(f.calls.size(), 2u);
  using Sites = std::map<std::string, int64_t>;
  using Phases = std::map<std::string, Sites>;
  EXPECT_EQ(f.calls[0].tests, (std::map<std::string, Phases>{
                                  {"test_ops.py::test_cumsum", Phases{{"call", Sites{{"test_ops.py:12", 2}}}}},
                                  {"test_ops.py::test_fixture", Phases{{"setup", Sites{{"conftest.py:7", 1}}}}}}));
  EXPECT_EQ(f.calls[1].tests.at("test_ops.py::test_sin").at("call").at("test_ops.py:20"), 1);
}

TEST(CallsFile, AProgramsRecordingHasNoTests) {
  testing::TempDir dir;
  const CallsFile f = load_calls_file(write_calls(dir, /*tests=*/false));
  ASSERT_EQ(f.calls.size(), 2u);
  EXPECT_TRUE(f.calls[0].tests.empty());
  EXPECT_EQ(f.calls[0].calls_at("test_ops.py:12"), 2);
}

TEST(CallsFile, TestsOfAnotherShapeAreOneLine) {
  testing::TempDir dir;
  for (const c10::IValue& bad : {c10::IValue(int64_t{3}), c10::IValue(dict({{"test_ops.py::t", int64_t{1}}}))}) {
    const std::string path = write_calls(dir, /*tests=*/false, bad);
    try {
      load_calls_file(path);
      ADD_FAILURE() << "read malformed tests";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("call 1: its tests are not test -> setup|call|teardown -> site -> calls"),
                std::string::npos)
          << e.what();
    }
  }
}

// The replay's verdicts, per test: cumsum falls back, so both tests that made it are listed, each at its own phase and
// line; the test that made only sin runs natively and is not.
TEST(CallsFile, TheReportsListEachTestsCallsThatFallBack) {
  testing::TempDir dir;
  Results results;
  ProbeResult cumsum;
  cumsum.op = "aten::cumsum";
  cumsum.dtype = "float32";
  cumsum.verdict = Verdict::kFallback;
  cumsum.fallback_ops = {"aten::cumsum.out"};
  ProbeResult sin = cumsum;
  sin.op = "aten::sin";
  sin.verdict = Verdict::kPass;
  sin.fallback_ops.clear();
  results.records = {cumsum, sin};
  const CallsAudit audit = analyse_calls(load_calls_file(write_calls(dir, /*tests=*/true)), results);
  const std::string md = render_calls_markdown(audit);
  EXPECT_NE(md.find("2 of the 3 tests that made ATen calls made one that falls back or fails here"), std::string::npos)
      << md;
  EXPECT_NE(
      md.find("| test\\_ops.py::test\\_cumsum | call | `test_ops.py:12` | `torch.cumsum(x, 0)` | `aten::cumsum` | "
              "float32 | 2 | falls back | aten::cumsum.out |"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("| test\\_ops.py::test\\_fixture | setup | `conftest.py:7` |"), std::string::npos) << md;
  EXPECT_EQ(md.find("test\\_ops.py::test\\_sin"), std::string::npos) << md;
  const nlohmann::json doc = nlohmann::json::parse(render_calls_json(audit));
  EXPECT_EQ(doc["calls"][0]["tests"]["test_ops.py::test_fixture"]["setup"]["conftest.py:7"], 1);
  EXPECT_NE(render_calls_html(audit).find("<td>test_ops.py::test_cumsum</td><td>call</td>"), std::string::npos);
  // A program's recording has no section by test.
  const CallsAudit program = analyse_calls(load_calls_file(write_calls(dir, /*tests=*/false)), results);
  EXPECT_EQ(render_calls_markdown(program).find("## By test"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(render_calls_json(program))["calls"][0].contains("tests"));
}

}  // namespace
}  // namespace mps_audit
