// Golden-file tests of the model audit's and a program replay's reports (report/model_reports.h;
// tests/data/golden/model/, MPS_AUDIT_UPDATE_GOLDEN=1 rewrites them): every format, from audits that hold each kind of
// call, with the records model.json holds (model/model_records.h) and the replay's grouping (analyse_calls).
#include <gtest/gtest.h>

#include <limits>

#include "model/calls_replay.h"
#include "model/model_records.h"
#include "report/model_reports.h"
#include "test_support.h"

namespace mps_audit {
namespace {

RunEnvironment emulated_environment() {
  RunEnvironment env;
  env.torch_version = "2.11.0";
  env.target = "mps-emu";
  env.requested = "mps-emu";
  env.device = "mps:0 (emulated MPS (PyTorch 2.11.0 registry, macOS 15 rules))";
  env.os = "Linux 6.1.0";
  env.fallback_mode = "on";
  env.emulator = "emulated MPS (PyTorch 2.11.0 registry, macOS 15 rules)";
  env.expectations = "data/pytorch-2.11.0/mps_expectations.tsv";
  env.expectations_release = "2.11.0";
  env.expectations_mode = "predict";
  env.expectations_macos = "15.0";
  env.expectations_mac = "macOS 15.0, any chip";
  env.known_bugs = "data/mps_known_bugs.yaml";
  return env;
}

ExpectationNote expectation(const std::string& kind, const std::string& scope) {
  ExpectationNote n;
  n.kind = kind;
  n.scope = scope;
  n.release = "2.11.0";
  n.list = "XFAILLIST";
  n.opinfo = "erfinv";
  n.source = "torch/testing/_internal/common_mps.py:412";
  n.reason = "wrong | results <on> MPS";
  n.macos = "*";
  return n;
}

KnownBugNote known_bug(const std::string& fixed_in, bool decided) {
  KnownBugNote b;
  b.id = "pytorch-154881";
  b.kind = "wrong_result";
  b.when = "rank_ge:5";
  b.seen_in = "2.0.0";
  b.fixed_in = fixed_in;
  b.source = "https://github.com/pytorch/pytorch/issues/154881";
  b.summary = "a rank-5 reduction";
  b.decided = decided;
  return b;
}

ModelOpCall op_call(const std::string& op, const std::string& phase, CallStatus status, int64_t calls, double seconds) {
  ModelOpCall c;
  c.op = op;
  c.phase = phase;
  c.dtype = "float32";
  c.calls = calls;
  c.status = status;
  c.seconds = seconds;
  c.input_signatures = {"float32[4, 3]", "float32[4, 3], float32[3] | <x>"};
  return c;
}

Match matching(double abs_error) {
  return {true, true, abs_error, abs_error / 2, ""};
}

// One training step on emulated MPS with a call of each status: fallback, failed, crashed, timeout, native with the
// first mismatch, native with PyTorch's expectation and known bugs.
ModelAudit training_audit() {
  ModelAudit a;
  a.environment = emulated_environment();
  a.model = "net.pt";
  a.inputs = {"4x3:float32"};
  a.train = true;
  a.loss = "cross_entropy (3 classes)";
  a.optimizer = "SGD";
  a.lr = 0.01;
  a.warnings = {"a | warning <b>", "another"};
  a.output = {true, false, 0.5, 0.25, "values differ at [0, 1]"};
  a.loss_match = matching(1e-7);
  a.gradients = {{"fc.weight", matching(0)}, {"fc.bias", {true, false, 0.125, 1, "values differ"}}};
  a.updated = {{"fc.weight", matching(0)}, {"fc.bias", matching(1e-8)}};
  a.cpu_seconds = 0.5;
  a.target_seconds = 1.25;
  ModelOpCall fallback = op_call("aten::cumsum", "forward", CallStatus::kFallback, 2, 0.25);
  fallback.fallback_ops = {"aten::cumsum.out", "aten::_cumsum"};
  fallback.bytes_to_cpu = 2048;
  fallback.bytes_from_cpu = 3 << 20;
  fallback.known_bugs = {known_bug("2.5.0", false)};
  ModelOpCall failed = op_call("aten::erfinv", "backward", CallStatus::kFailed, 1, 0.001);
  failed.message = "not | implemented";
  failed.unsupported = true;
  ModelOpCall crashed = op_call("aten::relu", "loss", CallStatus::kCrash, 1, 0.002);
  crashed.message = "crashed the process: SIGABRT";
  ModelOpCall timeout = op_call("aten::tan", "optimizer", CallStatus::kTimeout, 1, 0);
  timeout.message = "did not finish within 5 s (--timeout)";
  ModelOpCall mismatch = op_call("aten::sin", "forward", CallStatus::kNative, 3, 0.125);
  mismatch.mismatch = true;
  mismatch.mismatch_message = "values | differ";
  mismatch.max_abs_error = 0.5;
  mismatch.max_rel_error = std::numeric_limits<double>::infinity();
  ModelOpCall expected = op_call("aten::linear", "forward", CallStatus::kNative, 4, 0.0625);
  expected.expectation = expectation("wrong", "gradient");
  expected.known_bugs = {known_bug("unknown", false)};
  expected.bytes_to_cpu = 100;
  ModelOpCall plain = op_call("aten::add", "backward", CallStatus::kNative, 5, 0.03125);
  plain.dtype = "int64";
  a.ops = {fallback, failed, crashed, timeout, mismatch, expected, plain};
  return a;
}

// A forward pass whose process crashed on the target.
ModelAudit crashed_audit() {
  ModelAudit a;
  a.environment = emulated_environment();
  a.environment.expectations_mode = "";
  a.environment.emulator = "";
  a.model = "cnn.pt";
  a.inputs = {"1x3x8x8:float32", "2:int64"};
  a.target_error = "aten::relu (forward) crashed the process: SIGABRT";
  a.failed_phase = "forward";
  a.target_ended = "crash";
  a.target_unsupported = false;
  ModelOpCall c = op_call("aten::relu", "forward", CallStatus::kCrash, 1, 0);
  c.message = "crashed the process: SIGABRT";
  a.ops = {c};
  return a;
}

TEST(ModelReportsGolden, ATrainingStepInEveryFormat) {
  const ModelAudit a = training_audit();
  testing::expect_golden("model/train.json", render_model_json(a, model_records(a)));
  testing::expect_golden("model/train.md", render_model_markdown(a));
  testing::expect_golden("model/train.html", render_model_html(a));
  testing::expect_golden("model/train.summary.txt", render_model_summary(a));
}

TEST(ModelReportsGolden, AForwardPassThatCrashedTheTarget) {
  const ModelAudit a = crashed_audit();
  testing::expect_golden("model/crash.json", render_model_json(a, model_records(a)));
  testing::expect_golden("model/crash.md", render_model_markdown(a));
  testing::expect_golden("model/crash.html", render_model_html(a));
  testing::expect_golden("model/crash.summary.txt", render_model_summary(a));
}

RecordedCall recorded(size_t index, const std::string& op, const std::string& dtype, int64_t count,
                      std::map<std::string, std::map<std::string, int64_t>> sites) {
  RecordedCall c;
  c.index = index;
  c.op = op;
  c.dtype = dtype;
  c.count = count;
  c.seconds = 0.001 * static_cast<double>(count);
  c.in_bytes = 1000;
  c.out_bytes = 3000;
  c.sites = std::move(sites);
  for (const auto& [site, phases] : c.sites) {
    for (const auto& [phase, n] : phases) c.phases[phase] += n;
  }
  return c;
}

ProbeResult record(const std::string& op, const std::string& dtype, Verdict v) {
  ProbeResult r;
  r.op = op;
  r.dtype = dtype;
  r.verdict = v;
  return r;
}

// A test suite's recording, incomplete, with calls of every verdict, one not probed, one dropped by the recorder.
CallsAudit replay_audit(bool tests) {
  CallsFile f;
  f.path = "calls.pt";
  f.torch = "2.11.0";
  if (!tests) f.program = {"python3", "train.py", "--epochs", "1"};
  f.complete = false;
  f.error = "KeyboardInterrupt";
  f.seconds = 2.5;
  f.total = 40;
  f.dropped = {{"aten::foo: an argument of an unknown type", 2}};
  f.sources = {{"train.py:10", "y = torch.cumsum(x, 0) | z"}, {"train.py:20", "loss.backward()"}};
  f.calls.push_back(recorded(0, "aten::cumsum", "float32", 6, {{"train.py:10", {{"forward", 6}}}}));
  f.calls.push_back(
      recorded(1, "aten::sin", "float32", 3, {{"train.py:10", {{"forward", 1}}}, {"train.py:20", {{"backward", 2}}}}));
  f.calls.push_back(recorded(2, "aten::erfinv", "float16", 2, {{"train.py:20", {{"backward", 2}}}}));
  f.calls.push_back(recorded(3, "aten::relu", "float32", 4, {{"train.py:30", {{"forward", 4}}}}));
  f.calls.push_back(recorded(4, "aten::tan", "float32", 1, {{"train.py:30", {{"forward", 1}}}}));
  f.calls.push_back(recorded(5, "aten::linear", "float32", 5, {{"train.py:40", {{"forward", 5}}}}));
  f.calls.push_back(recorded(6, "aten::add", "complex64", 7, {{"train.py:40", {{"forward", 7}}}}));
  f.calls.push_back(recorded(7, "aten::mul", "float32", 2, {{"train.py:40", {{"forward", 2}}}}));
  f.calls.push_back(recorded(8, "aten::exp", "float32", 1, {{"train.py:50", {{"optimizer", 1}}}}));
  f.calls.push_back(recorded(9, "aten::sum", "float32", 1, {{"train.py:50", {{"loss", 1}}}}));
  f.calls[1].recorded_as = "aten::sin.out";
  if (tests) {
    f.calls[0].tests = {{"test_a.py::test_cumsum", {{"call", {{"train.py:10", 6}}}}}};
    f.calls[1].tests = {{"test_a.py::test_sin", {{"setup", {{"train.py:10", 1}}}, {"teardown", {{"train.py:20", 2}}}}}};
    f.calls[3].tests = {{"test_b.py::test_relu | x", {{"call", {{"train.py:30", 4}}}}}};
  }
  Results results;
  results.environment = emulated_environment();
  ProbeResult cumsum = record("aten::cumsum", "float32", Verdict::kFallback);
  cumsum.fallback_ops = {"aten::cumsum.out"};
  cumsum.message = "ran on the CPU: aten::cumsum.out";
  cumsum.sample = "call:0";
  ProbeResult sin = record("aten::sin", "float32", Verdict::kPass);
  sin.expectation = expectation("flaky", "forward");
  ProbeResult erfinv = record("aten::erfinv", "float16", Verdict::kUnsupported);
  erfinv.message = "erfinv is not | implemented for Half";
  erfinv.sample = "call:2";
  ProbeResult relu = record("aten::relu", "float32", Verdict::kCrash);
  relu.message = "the worker died: SIGSEGV";
  ProbeResult tan = record("aten::tan", "float32", Verdict::kTimeout);
  tan.message = "did not finish within 60 s";
  ProbeResult linear = record("aten::linear", "float32", Verdict::kKnownFailure);
  linear.observed = "pass";
  linear.expectation = expectation("wrong", "forward");
  linear.expectation->decided = true;
  linear.message = "PyTorch expects a wrong result";
  ProbeResult mul = record("aten::mul", "float32", Verdict::kMismatch);
  mul.message = "values differ";
  ProbeResult exp = record("aten::exp", "float32", Verdict::kSkip);
  exp.message = "no sample fits";
  results.records = {cumsum, sin, erfinv, relu, tan, linear, mul, exp};
  // Note [Known bugs a call meets]: mul's call meets one bug and may meet another.
  return analyse_calls(std::move(f), std::move(results),
                       [](const std::string& op, const std::string&, const SampleTraits*) {
                         std::vector<KnownBugNote> notes;
                         if (op != "aten::mul") return notes;
                         notes = {known_bug("2.5.0", false), known_bug("unknown", false)};
                         notes[0].applies = true;
                         notes[0].met_by = "a rank-5 argument";
                         notes[1].maybe = true;
                         notes[1].met_by = "whether a NaN is among the values";
                         return notes;
                       });
}

TEST(ModelReportsGolden, AReplayInEveryFormat) {
  const CallsAudit a = replay_audit(/*tests=*/false);
  testing::expect_golden("model/replay.json", render_calls_json(a));
  testing::expect_golden("model/replay.md", render_calls_markdown(a));
  testing::expect_golden("model/replay.html", render_calls_html(a));
  testing::expect_golden("model/replay.summary.txt", render_calls_summary(a));
}

TEST(ModelReportsGolden, ATestSuitesReplayInEveryFormat) {
  const CallsAudit a = replay_audit(/*tests=*/true);
  testing::expect_golden("model/suite.json", render_calls_json(a));
  testing::expect_golden("model/suite.md", render_calls_markdown(a));
  testing::expect_golden("model/suite.html", render_calls_html(a));
  testing::expect_golden("model/suite.summary.txt", render_calls_summary(a));
}

}  // namespace
}  // namespace mps_audit
