// End-to-end tests of `mps-audit record` and `mps-audit model --calls`: a small training program
// (tests/data/calls/cumsum_adam.py: a module with a cumsum, cross-entropy, an Adam step) recorded with a Python that
// has the linked release's torch, replayed on emulated 1.13.1 (where cumsum falls back) and 2.11.0 (where it does
// not), against the TorchScript audit of the same module and step; and the bad inputs that must give one line and
// exit 2.
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/paths.h"
#include "common/torch_compat.h"
#include "results/results_file.h"
#include "test_support.h"

namespace mps_audit {
namespace {

using testing::run_mps_audit;
using testing::source_path;
using testing::TempDir;

// A Python with the linked release's torch: $MPS_AUDIT_TEST_PYTHON, else Debian's. Empty when there is none (the
// tests skip, except under CI).
std::string torch_python() {
  const char* chosen = std::getenv("MPS_AUDIT_TEST_PYTHON");
  const std::string python = chosen && *chosen ? chosen : "/usr/bin/python3";
  const std::string want = std::string(compat::kTorchVersion).substr(0, 4);  // "1.13", "2.11"
  const std::string check = "'" + python + "' -c \"import torch,sys; sys.exit(0 if torch.__version__.startswith('" +
                            want + "') else 1)\" 2>/dev/null";
  return std::system(check.c_str()) == 0 ? python : "";
}

#define REQUIRE_TORCH_PYTHON(python)                                                                \
  const std::string python = torch_python();                                                        \
  if (python.empty()) {                                                                             \
    if (std::getenv("CI")) FAIL() << "CI records programs with a Python that has the linked torch"; \
    GTEST_SKIP() << "no Python with torch " << compat::kTorchVersion;                               \
  }

const std::string kProgram = "tests/data/calls/cumsum_adam.py";

testing::CommandResult record(const TempDir& dir, const std::string& python, const std::vector<std::string>& more = {},
                              const std::string& out = "calls.pt") {
  std::vector<std::string> args = {"record", "-o", dir.path() + "/" + out, "--", python, source_path(kProgram)};
  args.insert(args.end(), more.begin(), more.end());
  return run_mps_audit(args);
}

struct Replay {
  testing::CommandResult result;
  nlohmann::json doc;
  // The model.json entries of the distinct calls of `op`.
  std::vector<nlohmann::json> calls(const std::string& op) const {
    std::vector<nlohmann::json> out;
    for (const auto& c : doc["calls"]) {
      if (c["op"] == op) out.push_back(c);
    }
    return out;
  }
};

Replay replay(const TempDir& dir, const std::string& release, const std::string& calls = "calls.pt",
              const std::string& out = "out") {
  Replay r;
  r.result = run_mps_audit({"model", "--calls", dir.path() + "/" + calls, "--target", "mps-emu", "--emu-release",
                            release, "--out", dir.path() + "/" + out, "--format", "json,md,html", "--jobs", "2"});
  const std::string json = dir.path() + "/" + out + "/model.json";
  if (path_exists(json)) r.doc = nlohmann::json::parse(testing::slurp(json));
  return r;
}

// The leaves that ran on the CPU, with the phase of the call that ran them ("aten::cumsum.out backward"), of a
// model.json of either path: TorchScript's "ops" (one phase each), a replay's "calls" (their phases).
std::set<std::string> fallback_leaves(const nlohmann::json& doc, const char* list) {
  std::set<std::string> out;
  for (const auto& c : doc[list]) {
    std::vector<std::string> phases;
    if (c.contains("phase")) phases.push_back(c["phase"]);
    if (c.contains("phases")) {
      for (const auto& [phase, n] : c["phases"].items()) phases.push_back(phase);
    }
    for (const auto& leaf : c["fallback_ops"]) {
      for (const auto& phase : phases) out.insert(leaf.get<std::string>() + " " + phase);
    }
  }
  return out;
}

TEST(CliCalls, RecordedTrainingStepNamesItsFallbackWithTheSourceLine) {
  REQUIRE_TORCH_PYTHON(python);
  TempDir dir;
  const auto recorded = record(dir, python);
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  EXPECT_NE(recorded.err.find("distinct"), std::string::npos) << recorded.err;
  const Replay r = replay(dir, "1.13.1");
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
  EXPECT_TRUE(r.doc["program"]["not_kept"].empty()) << r.doc["program"].dump(1);
  // Every call the recorder counted is replayed (torch 1.13.1's program makes 57, 2.14.1's 51).
  EXPECT_EQ(recorded.err.rfind(fmt::format("recorded {} calls (", r.doc["program"]["calls"].get<int>()), 0), 0u)
      << recorded.err;
  const auto cumsum = r.calls("aten::cumsum");
  ASSERT_EQ(cumsum.size(), 1u) << r.doc["calls"].dump(1);
  EXPECT_EQ(cumsum[0]["status"], "fallback");
  // The program's own calls are what ran, also of an operator the spec gives samples of (nn.Linear's addmm).
  bool addmm = false;
  for (const auto& rec : r.doc["results"]) {
    if (rec["op"] != "aten::addmm") continue;
    addmm = true;
    EXPECT_EQ(rec["sample"].get<std::string>().rfind("call:", 0), 0u) << rec.dump();
  }
  EXPECT_TRUE(addmm) << r.doc["results"].dump(1);
  EXPECT_EQ(cumsum[0]["fallback_ops"], nlohmann::json({"aten::cumsum.out"}));
  // Its gradient is a cumsum of the same shape: one distinct call, made at two lines in two phases.
  EXPECT_EQ(cumsum[0]["count"], 2);
  EXPECT_EQ(cumsum[0]["phases"], nlohmann::json({{"backward", 1}, {"forward", 1}}));
  EXPECT_EQ(cumsum[0]["sites"], nlohmann::json({{"cumsum_adam.py:22", {{"forward", 1}}},     // torch.cumsum
                                                {"cumsum_adam.py:38", {{"backward", 1}}}}))  // loss.backward()
      << cumsum[0].dump();
  // The site that falls back comes first, with its line of code.
  std::map<std::string, nlohmann::json> sites;
  for (const auto& s : r.doc["sites"]) sites[s["site"]] = s;
  EXPECT_EQ(sites["cumsum_adam.py:22"]["code"], "return torch.cumsum(x, dim=1)");
  EXPECT_EQ(sites["cumsum_adam.py:22"]["status"], "fallback");
  EXPECT_EQ(sites["cumsum_adam.py:38"]["code"], "loss.backward()");
  EXPECT_EQ(sites["cumsum_adam.py:38"]["status"], "fallback");
  EXPECT_NE(r.doc["sites"][0]["status"], "native");  // the problems first
  EXPECT_EQ(sites["cumsum_adam.py:39"]["code"], "opt.step()");
  // torch 2.x's Adam moves its first moment with lerp_ (on the weight, 4x8, and the bias, 4), for which 1.13.1's MPS
  // has no kernel: there the step falls back too, its arguments to the CPU and the moment back.
  const bool lerp = !r.calls("aten::lerp_.Scalar").empty();
  EXPECT_EQ(lerp, MPS_AUDIT_TORCH_AT_LEAST(2, 0));
  EXPECT_EQ(sites["cumsum_adam.py:39"]["status"], lerp ? "fallback" : "native");
  const int lerp_calls = lerp ? 2 : 0, lerp_to_cpu = lerp ? 2 * (32 + 4) * 4 : 0,
            lerp_from_cpu = lerp ? (32 + 4) * 4 : 0;
  // Autograd's backward and Adam's update were recorded, each in its phase, at the line that made them.
  bool backward_mm = false, adam = false;
  for (const auto& c : r.calls("aten::mm")) backward_mm = backward_mm || c["phases"].contains("backward");
  for (const auto& c : r.calls("aten::addcdiv_")) {
    adam = adam || (c["phases"].contains("optimizer") && c["sites"].contains("cumsum_adam.py:39"));
  }
  EXPECT_TRUE(backward_mm) << r.doc["calls"].dump(1);
  EXPECT_TRUE(adam) << r.doc["calls"].dump(1);
  EXPECT_EQ(r.doc["totals"]["fallback_calls"], 2 + lerp_calls);
  EXPECT_GT(r.doc["totals"]["fallback_time_share"].get<double>(), 0.0);
  // cumsum, each time: its float32[16, 4] argument
  EXPECT_EQ(r.doc["totals"]["bytes_to_cpu"], 2 * 16 * 4 * 4 + lerp_to_cpu);
  EXPECT_EQ(r.doc["totals"]["bytes_from_cpu"], 2 * 16 * 4 * 4 + lerp_from_cpu);
  EXPECT_NE(r.result.out.find("cumsum_adam.py:22 aten::cumsum (float32, forward): falls back (aten::cumsum.out on "
                              "the CPU)"),
            std::string::npos)
      << r.result.out;
  EXPECT_NE(r.result.out.find("cumsum_adam.py:38 aten::cumsum (float32, backward): falls back"), std::string::npos);
  const std::string md = testing::slurp(dir.path() + "/out/model.md");
  EXPECT_NE(md.find("| `cumsum_adam.py:22` | `return torch.cumsum(x, dim=1)` | `aten::cumsum` | float32 | forward | "
                    "1 | falls back | aten::cumsum.out |"),
            std::string::npos)
      << md;
  EXPECT_NE(testing::slurp(dir.path() + "/out/model.html").find("return torch.cumsum(x, dim=1)"), std::string::npos);
}

// A training program of today's APIs (examples/train_attention_amp.py: F.scaled_dot_product_attention, a
// TransformerEncoderLayer, torch.amp.autocast on the CPU, AdamW), recorded with torch 2.x and replayed on the newest
// shipped release, the default. The CPU's own attention operators are replayed as what a Mac calls (Note [The recording
// device's own choices]); where the linked libtorch is that release, no record rests on another libtorch.
TEST(CliCalls, TodaysTrainingProgramOnTheNewestRelease) {
  REQUIRE_TORCH_PYTHON(python);
  if (!MPS_AUDIT_TORCH_AT_LEAST(2, 0)) GTEST_SKIP() << "the program needs torch 2.x";
  TempDir dir;
  const auto recorded = run_mps_audit(
      {"record", "-o", dir.path() + "/calls.pt", "--", python, source_path("examples/train_attention_amp.py")});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  const auto r = run_mps_audit({"model", "--calls", dir.path() + "/calls.pt", "--target", "mps-emu", "--out",
                                dir.path() + "/out", "--format", "json,md", "--jobs", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(testing::slurp(dir.path() + "/out/model.json"));
  const std::string newest = testing::source_tree_releases().back();
  EXPECT_NE(r.out.find("(PyTorch " + newest + " registry"), std::string::npos) << r.out;
  EXPECT_TRUE(doc["program"]["complete"].get<bool>());
  std::set<std::string> dtypes, phases;
  bool attention = false, cpu_backward = false;
  for (const auto& c : doc["calls"]) {
    dtypes.insert(c["dtype"].get<std::string>());
    for (const auto& [phase, n] : c["phases"].items()) phases.insert(phase);
    // Every call is named by a line of the program.
    bool in_program = false;
    for (const auto& [site, p] : c["sites"].items())
      in_program = in_program || site.rfind("train_attention_amp.py:", 0) == 0;
    EXPECT_TRUE(in_program) << c.dump();
    if (c.value("recorded_as", "") == "aten::_scaled_dot_product_flash_attention_for_cpu") {
      attention = true;
      EXPECT_EQ(c["op"], "aten::_scaled_dot_product_attention_math");
      EXPECT_EQ(c["status"], "native") << c.dump();
    }
    if (c["op"] == "aten::_scaled_dot_product_flash_attention_for_cpu_backward") {
      cpu_backward = true;
      EXPECT_EQ(c["status"], "not_probed") << c.dump();
    }
    // What falls back on the newest release is the release's own, never the recording device's choice.
    if (c["status"] == "fallback")
      EXPECT_EQ(c["op"].get<std::string>().find("_for_cpu"), std::string::npos) << c.dump();
  }
  EXPECT_TRUE(attention) << doc["calls"].dump(1);
  EXPECT_TRUE(cpu_backward) << doc["calls"].dump(1);
  EXPECT_TRUE(dtypes.count("bfloat16")) << "autocast's calls";
  // F.cross_entropy is no loss module: its calls are the forward pass's.
  EXPECT_EQ(phases, (std::set<std::string>{"backward", "forward", "optimizer"}));
  if (std::string(compat::kTorchVersion).rfind(newest.substr(0, newest.rfind('.')), 0) == 0) {
    for (const auto& rec : doc["results"]) EXPECT_NE(rec.value("skip_reason", ""), "linked_libtorch") << rec.dump();
  }
}

// The replay and the TorchScript audit of the same module and step name the same operators as running on the CPU.
TEST(CliCalls, ReplayNamesTheSameFallbacksAsTheTorchScriptAudit) {
  REQUIRE_TORCH_PYTHON(python);
#if MPS_AUDIT_TORCH_AT_LEAST(2, 0)
  GTEST_SKIP() << "the TorchScript training step on mps-emu is compared on libtorch 1.13";
#endif
  TempDir dir;
  ASSERT_EQ(record(dir, python).exit_code, 0);
  const std::string script = dir.path() + "/net.pt";
  ASSERT_EQ(std::system(("'" + python + "' " + source_path(kProgram) + " --script " + script).c_str()), 0);
  for (const std::string release : {"1.13.1", "2.11.0"}) {
    SCOPED_TRACE(release);
    const Replay r = replay(dir, release, "calls.pt", "replay-" + release);
    ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
    const auto ts =
        run_mps_audit({"model", script, "--input", "16x8", "--train", "--target-classes", "4", "--optimizer", "adam",
                       "--target", "mps-emu", "--emu-release", release, "--out", dir.path() + "/ts-" + release});
    ASSERT_EQ(ts.exit_code, 0) << ts.err;
    const auto ts_doc = nlohmann::json::parse(testing::slurp(dir.path() + "/ts-" + release + "/model.json"));
    EXPECT_EQ(fallback_leaves(r.doc, "calls"), fallback_leaves(ts_doc, "ops"));
    const std::set<std::string> on_1131 = {"aten::cumsum.out backward", "aten::cumsum.out forward"};
    EXPECT_EQ(fallback_leaves(r.doc, "calls"), release == "2.11.0" ? std::set<std::string>{} : on_1131);
  }
}

TEST(CliCalls, ModelJsonOfAReplayIsAResultsFileTheGateReads) {
  REQUIRE_TORCH_PYTHON(python);
  TempDir dir;
  ASSERT_EQ(record(dir, python).exit_code, 0);
  const Replay old_release = replay(dir, "1.13.1", "calls.pt", "old");
  const Replay new_release = replay(dir, "2.11.0", "calls.pt", "new");
  ASSERT_EQ(old_release.result.exit_code, 0) << old_release.result.err;
  const Results results = load_results(dir.path() + "/old/model.json");
  bool cumsum = false;
  for (const auto& rec : results.records) {
    cumsum = cumsum || (rec.op == "aten::cumsum" && rec.dtype == "float32" && rec.verdict == Verdict::kFallback);
  }
  EXPECT_TRUE(cumsum);
  // 1.13.1 as the baseline of 2.11.0: cumsum got better, nothing regressed; the other way round is a regression.
  EXPECT_EQ(run_mps_audit({"diff", dir.path() + "/old/model.json", dir.path() + "/new/model.json"}).exit_code, 0);
  EXPECT_EQ(run_mps_audit({"diff", dir.path() + "/new/model.json", dir.path() + "/old/model.json"}).exit_code, 1);
}

TEST(CliCalls, AProgramThatFailsLeavesAnIncompleteRecording) {
  REQUIRE_TORCH_PYTHON(python);
  TempDir dir;
  const auto recorded = record(dir, python, {"--fail"});
  EXPECT_EQ(recorded.exit_code, 1) << "the program's own exit status";
  EXPECT_NE(recorded.err.find("RuntimeError: stopped on purpose"), std::string::npos) << recorded.err;
  EXPECT_NE(recorded.err.find("incomplete"), std::string::npos) << recorded.err;
  const Replay r = replay(dir, "1.13.1");
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
  EXPECT_FALSE(r.doc["program"]["complete"].get<bool>());
  EXPECT_EQ(r.doc["program"]["error"], "RuntimeError: stopped on purpose");
  EXPECT_EQ(r.calls("aten::cumsum").size(), 1u);  // the forward pass ran before the failure
  EXPECT_TRUE(r.calls("aten::addcdiv_").empty());
  EXPECT_NE(testing::slurp(dir.path() + "/out/model.md").find("The recording is incomplete"), std::string::npos);
}

struct BadCase {
  const char* name;
  std::vector<std::string> args;  // {FILE} is a file of `content` in a fresh folder
  std::string content;
  const char* message;
};

class CliCallsBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(CliCallsBadInput, OneLineAndExitTwo) {
  const BadCase& c = GetParam();
  TempDir dir;
  const std::string file = dir.write("input.pt", c.content);
  std::vector<std::string> args;
  for (const auto& a : c.args) args.push_back(a == "{FILE}" ? file : a == "{OUT}" ? dir.path() + "/out" : a);
  const auto r = run_mps_audit(args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(path_exists(dir.path() + "/out/model.json"));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CliCallsBadInput,
    ::testing::Values(
        BadCase{"CorruptFile",
                {"model", "--calls", "{FILE}", "--target", "mps-emu", "--out", "{OUT}"},
                "not a pickle",
                "not a calls file"},
        BadCase{"MissingFile",
                {"model", "--calls", "/nonexistent/calls.pt", "--target", "mps-emu", "--out", "{OUT}"},
                "",
                "/nonexistent/calls.pt"},
        BadCase{"WithATorchScriptModel",
                {"model", "m.pt", "--calls", "{FILE}", "--target", "mps-emu", "--out", "{OUT}"},
                "",
                "give no TorchScript file"},
        BadCase{"NeitherModelNorCalls", {"model", "--target", "mps-emu", "--out", "{OUT}"}, "", "--calls FILE"},
        BadCase{"NotPython", {"record", "-o", "{FILE}", "--", "ls", "-l"}, "", "is not a Python interpreter"},
        BadCase{"NoSuchPython",
                {"record", "-o", "{FILE}", "--", "python3.99-not-here", "train.py"},
                "",
                "cannot run python3.99-not-here"},
        BadCase{"NoProgram", {"record", "-o", "{FILE}"}, "", "no program to run"},
        BadCase{"NoOutput", {"record", "--", "python3", "train.py"}, "", "-o FILE is required"}),
    [](const auto& info) { return std::string(info.param.name); });

// A calls file of a foreign format (OpInfo's recorded samples), one naming an operator the linked libtorch lacks,
// and a Python without torch.
TEST(CliCalls, ForeignFileUnknownOperatorAndNoTorchEachGiveOneLine) {
  REQUIRE_TORCH_PYTHON(python);
  TempDir dir;
  const std::string write = dir.write("write.py", R"(import sys
sys.path.insert(0, sys.argv[1])
import torch, mps_audit_record as m
m.save({"format": sys.argv[3], "calls": [{"op": sys.argv[4], "dtype": "float32", "args": {}, "count": 1}]}, sys.argv[2])
)");
  auto make = [&](const std::string& name, const std::string& format, const std::string& op) {
    const std::string path = dir.path() + "/" + name;
    const std::string cmd =
        "'" + python + "' " + write + " " + source_path("python") + " " + path + " " + format + " " + op;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return path;
  };
  const std::string foreign = make("samples.pt", "mps-audit-samples/1", "aten::abs");
  const std::string unknown = make("unknown.pt", "mps-audit-calls/1", "aten::no_such_operator");
  for (const auto& [file, message] : std::vector<std::pair<std::string, std::string>>{
           {foreign, "not a calls file in format mps-audit-calls/1"},
           {unknown, "call 0 is of aten::no_such_operator, an operator the linked libtorch"}}) {
    const auto r = run_mps_audit({"model", "--calls", file, "--target", "mps-emu", "--out", dir.path() + "/out"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // -S: the interpreter without its site packages, so without torch.
  const auto r = run_mps_audit({"record", "-o", dir.path() + "/c.pt", "--", python, "-S", source_path(kProgram)});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("cannot import torch"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(path_exists(dir.path() + "/c.pt"));
}

}  // namespace
}  // namespace mps_audit
