// End-to-end tests of `mps-audit model` and `mps-audit env`: small TorchScript modules made here, with operators
// that emulated PyTorch 1.13.1 runs natively on MPS (matmul, sin, relu, linear) and one it does not (cumsum falls
// back), audited forward and with --train; targets that crash or hang the audit's process (the emulator's injected
// faults); and the bad inputs that must give one line and exit 2.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ops/randn.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <torch/csrc/jit/api/module.h>
#include <map>
#include <nlohmann/json.hpp>

#include "common/paths.h"
#include "common/torch_compat.h"
#include "common/torch_info.h"
#include "results/results_file.h"
#include "test_support.h"

namespace mps_audit {
namespace {

using testing::run_mps_audit;
using testing::source_path;
using testing::TempDir;

// Saves a TorchScript module with one parameter per (name, shape) and `source` as its methods.
std::string save_module(const TempDir& dir, const std::string& name,
                        const std::vector<std::pair<std::string, std::vector<int64_t>>>& params,
                        const std::string& source) {
  torch::jit::Module m(c10::QualifiedName("__torch__." + name));
  for (const auto& [param, shape] : params) m.register_parameter(param, at::randn(shape), /*is_buffer=*/false);
  m.define(source);
  const std::string path = dir.path() + "/" + name + ".pt";
  m.save(path);
  return path;
}

// sin and matmul are MPS kernels in 1.13.1; cumsum is not (it falls back, or fails with the fallback off).
std::string cumsum_model(const TempDir& dir) {
  return save_module(dir, "Cumsum", {{"w", {8, 8}}}, R"(
def forward(self, x):
    return torch.cumsum(torch.sin(torch.matmul(x, self.w)), 1)
)");
}

// The tutorial's shape of model: conv, relu, max-pool, linear.
std::string cnn_model(const TempDir& dir) {
  return save_module(dir, "TinyCnn", {{"cw", {4, 3, 3, 3}}, {"cb", {4}}, {"fw", {5, 64}}, {"fb", {5}}}, R"(
def forward(self, x):
    y = torch.max_pool2d(torch.relu(torch.conv2d(x, self.cw, self.cb, [1, 1], [1, 1])), [2, 2])
    return torch.linear(torch.flatten(y, 1), self.fw, self.fb)
)");
}

struct ModelOutcome {
  testing::CommandResult result;
  nlohmann::json doc;
  std::string json_path;
  const nlohmann::json* op(const std::string& name, const std::string& phase) const {
    for (const auto& o : doc["ops"]) {
      if (o["op"] == name && o["phase"] == phase) return &o;
    }
    return nullptr;
  }
  const nlohmann::json* record(const std::string& name, const std::string& dtype) const {
    for (const auto& r : doc["results"]) {
      if (r["op"] == name && r["dtype"] == dtype) return &r;
    }
    return nullptr;
  }
};

// `release`: a shipped release's version, or a release folder.
ModelOutcome audit(const TempDir& dir, const std::string& model, std::vector<std::string> args,
                   const std::string& release = "1.13.1", const std::vector<std::string>& env = {}) {
  std::vector<std::string> all = {
      "model",         model,
      "--target",      "mps-emu",
      "--emu-release", release.find('/') == std::string::npos ? source_path("data/pytorch-" + release) : release,
      "--out",         dir.path() + "/out",
      "--format",      "json,md,html"};
  all.insert(all.end(), args.begin(), args.end());
  ModelOutcome o;
  o.result = run_mps_audit(all, env);
  o.json_path = dir.path() + "/out/model.json";
  if (path_exists(o.json_path)) o.doc = nlohmann::json::parse(testing::slurp(o.json_path));
  return o;
}

TEST(CliModel, ForwardNamesTheFallbackFirstWithItsCost) {
  TempDir dir;
  const ModelOutcome o = audit(dir, cumsum_model(dir), {"--input", "4x8"});
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  const nlohmann::json* cumsum = o.op("aten::cumsum", "forward");
  ASSERT_NE(cumsum, nullptr) << o.doc.dump(1);
  EXPECT_TRUE((*cumsum)["fallback"].get<bool>());
  EXPECT_EQ((*cumsum)["fallback_ops"], nlohmann::json({"aten::cumsum.out"}));
  EXPECT_EQ((*cumsum)["calls"], 1);
  // cumsum.out fell back: its float32[4, 8] input and its out= tensor went to the CPU, the out= tensor came back.
  EXPECT_EQ((*cumsum)["bytes_to_cpu"], 2 * 4 * 8 * 4);
  EXPECT_EQ((*cumsum)["bytes_from_cpu"], 4 * 8 * 4);
  EXPECT_EQ((*cumsum)["inputs"], nlohmann::json({"float32[4, 8]"}));
  EXPECT_EQ(o.doc["ops"][0]["op"], "aten::cumsum");  // fallbacks first
  const nlohmann::json* sin = o.op("aten::sin", "forward");
  ASSERT_NE(sin, nullptr);
  EXPECT_FALSE((*sin)["fallback"].get<bool>());
  EXPECT_EQ((*sin)["status"], "native");
  EXPECT_TRUE(o.doc["output_match"]["match"].get<bool>());
  EXPECT_EQ(o.doc["totals"]["fallback_calls"], 1);
  EXPECT_GT(o.doc["totals"]["fallback_time_share"].get<double>(), 0.0);
  EXPECT_NE(o.result.out.find("fallback aten::cumsum (forward, 1 call): CPU ran aten::cumsum.out"), std::string::npos)
      << o.result.out;
  EXPECT_TRUE(path_exists(dir.path() + "/out/model.md"));
  EXPECT_TRUE(path_exists(dir.path() + "/out/model.html"));
  EXPECT_EQ(o.doc["environment"]["target"], "mps-emu");
  EXPECT_EQ(o.doc["environment"]["mps"]["built"], false);
}

TEST(CliModel, ModelJsonReadsAsAResultsFile) {
  TempDir dir;
  const ModelOutcome o = audit(dir, cumsum_model(dir), {"--input", "4x8"});
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  const Results results = load_results(o.json_path);
  EXPECT_EQ(results.environment.emulator, "emulated MPS (PyTorch 1.13.1 registry, macOS 14 rules)");
  EXPECT_TRUE(results.run.complete());
  std::map<std::string, std::string> verdicts;
  for (const auto& r : results.records) verdicts[r.op + " " + r.dtype] = std::string(to_string(r.verdict));
  EXPECT_EQ(verdicts["aten::cumsum float32"], "fallback");
  EXPECT_EQ(verdicts["aten::sin float32"], "pass");
  EXPECT_EQ(verdicts["aten::matmul float32"], "pass");
}

TEST(CliModel, NewerReleaseRunsCumsumNatively) {
  TempDir dir;
  const ModelOutcome o = audit(dir, cumsum_model(dir), {"--input", "4x8"}, "2.11.0");
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  const nlohmann::json* cumsum = o.op("aten::cumsum", "forward");
  ASSERT_NE(cumsum, nullptr);
  EXPECT_EQ((*cumsum)["status"], "native");
  EXPECT_EQ(o.doc["totals"]["fallback_calls"], 0);
}

TEST(CliModel, FailureOnlyOnTheTargetIsAFinding) {
  TempDir dir;
  const ModelOutcome o = audit(dir, cumsum_model(dir), {"--input", "4x8", "--fallback", "off"});
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  EXPECT_NE(o.doc["target_error"].get<std::string>().find("is not currently implemented for the MPS device"),
            std::string::npos);
  EXPECT_EQ(o.doc["failed_phase"], "forward");
  const nlohmann::json* cumsum = o.op("aten::cumsum", "forward");
  ASSERT_NE(cumsum, nullptr);
  EXPECT_EQ((*cumsum)["status"], "failed");
  EXPECT_EQ((*o.record("aten::cumsum", "float32"))["verdict"], "unsupported");
  EXPECT_FALSE(o.doc["output_match"]["compared"].get<bool>());
}

TEST(CliModel, TrainingStepTracesBackwardFallbacksAndComparesGradients) {
  TempDir dir;
  const ModelOutcome o = audit(dir, cumsum_model(dir), {"--input", "4x8", "--train", "--lr", "0.1"});
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  // cumsum's backward is a cumsum too (on autograd's thread for the device): it falls back there as well.
  const nlohmann::json* backward = o.op("aten::cumsum", "backward");
  ASSERT_NE(backward, nullptr) << o.doc["ops"].dump(1);
  EXPECT_TRUE((*backward)["fallback"].get<bool>());
  EXPECT_NE(o.op("aten::cos", "backward"), nullptr);  // sin's derivative
  EXPECT_NE(o.op("aten::add_.Tensor", "optimizer"), nullptr);
  const auto& t = o.doc["training"];
  EXPECT_EQ(t["loss"], "sum");
  EXPECT_TRUE(t["loss_match"]["match"].get<bool>());
  ASSERT_EQ(t["gradients"].size(), 1u);
  EXPECT_EQ(t["gradients"][0]["name"], "w");
  EXPECT_TRUE(t["gradients_match"].get<bool>());
  EXPECT_TRUE(t["updated_parameters_match"].get<bool>());
  EXPECT_EQ(o.doc["totals"]["fallback_calls"], 2);
  // libtorch 2.x's autograd engine needs emulated MPS to be the process's accelerator, as MPS is on a Mac: the audit's
  // process has no CUDA then (Note [Emulated MPS as the accelerator]).
  if (MPS_AUDIT_TORCH_ACCELERATOR_HOOKS) EXPECT_EQ(o.doc["environment"]["cuda"]["available"], false);
}

// PyTorch's own expectations reach a training step (Note [Expected verdicts]): the forward call of an operator whose
// gradient the lists expect to fail carries that entry (and is expected to fail where it passed), and a forward
// expectation applies to its own calls.
TEST(CliModel, TrainingStepCarriesPyTorchsGradientExpectations) {
  TempDir dir;
  const std::string release = testing::release_with_expectations(
      dir,
      "aten::cumsum\tfloat32\tcrash\tgradient\t*\tXFAILLIST_GRAD\tcumsum\taten_name\tt.py:5\tbackward hangs\n"
      "aten::sin\tfloat32\twrong\tforward\t*\tON_MPS_XFAILLIST\tsin\taten_name\tt.py:9\tsin is off\n");
  const ModelOutcome o = audit(dir, cumsum_model(dir), {"--input", "4x8", "--train"}, release);
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  const nlohmann::json* cumsum = o.record("aten::cumsum", "float32");
  ASSERT_NE(cumsum, nullptr);
  // cumsum falls back in 1.13.1: what was observed stays, and carries the entry (Note [Expected verdicts]).
  EXPECT_EQ((*cumsum)["verdict"], "fallback");
  EXPECT_FALSE(cumsum->contains("observed"));
  EXPECT_EQ((*cumsum)["expectation"]["scope"], "gradient");
  EXPECT_FALSE((*cumsum)["expectation"].contains("decided"));
  EXPECT_EQ((*o.op("aten::cumsum", "forward"))["expectation"]["list"], "XFAILLIST_GRAD");
  EXPECT_EQ((*o.record("aten::sin", "float32"))["verdict"], "known_failure");
  EXPECT_EQ((*o.record("aten::sin", "float32"))["expectation"]["scope"], "forward");
  EXPECT_EQ((*o.record("aten::matmul", "float32"))["verdict"], "pass");
  EXPECT_EQ(o.doc["environment"]["expectations"]["mode"], "predict");
  EXPECT_NE(o.result.out.find("expected to fail on real MPS: aten::cumsum (forward, float32): PyTorch 1.13.1's "
                              "XFAILLIST_GRAD (t.py:5) expects crash of its gradient"),
            std::string::npos)
      << o.result.out;
  const std::string md = testing::slurp(dir.path() + "/out/model.md");
  EXPECT_NE(md.find("## Expected to fail on real MPS"), std::string::npos) << md;
  EXPECT_NE(md.find("| `aten::cumsum` | forward | float32 | crash (its gradient) | XFAILLIST_GRAD | t.py:5 |"),
            std::string::npos)
      << md;
}

// Adam and AdamW, the optimizers people train with, run operators SGD does not: their step is traced on the target
// (the optimizer phase) and the parameters it updates are compared with the CPU's.
TEST(CliModel, AdamAndAdamWStepsAreTracedAndCompared) {
  std::map<std::string, int64_t> scalings;  // calls of mul_.Scalar in each optimizer's step
  for (const std::string optimizer : {"adam", "adamw"}) {
    TempDir dir;
    const ModelOutcome o = audit(dir, cumsum_model(dir), {"--input", "4x8", "--train", "--optimizer", optimizer});
    ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
    EXPECT_EQ(o.doc["training"]["optimizer"], optimizer == "adam" ? "Adam" : "AdamW");
    EXPECT_EQ(o.doc["training"]["lr"], 1e-3);  // torch.optim's default
    EXPECT_TRUE(o.doc["training"]["updated_parameters_match"].get<bool>());
    for (const char* op : {"aten::addcdiv_", "aten::addcmul_", "aten::sqrt", "aten::zeros_like"}) {
      EXPECT_NE(o.op(op, "optimizer"), nullptr) << optimizer << " " << op;
    }
    const nlohmann::json* scaled = o.op("aten::mul_.Scalar", "optimizer");
    ASSERT_NE(scaled, nullptr);
    scalings[optimizer] = (*scaled)["calls"].get<int64_t>();
  }
  // AdamW's decoupled weight decay scales the parameter once more, before the step.
  EXPECT_EQ(scalings["adamw"], scalings["adam"] + 1);
  TempDir dir;
  const auto bad = run_mps_audit({"model", cumsum_model(dir), "--input", "4x8", "--train", "--optimizer", "rmsprop"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("error: --optimizer rmsprop: expected sgd, adam or adamw"), std::string::npos) << bad.err;
}

// The emulator's fault injection makes the target's sin (forward) or cos (sin's derivative) wrong: the model's
// results differ, and the first call whose outputs differ from the CPU's same call is named.
TEST(CliModel, WrongResultsOnTheTargetAreMismatches) {
  TempDir dir;
  const std::string model = cumsum_model(dir);
  const ModelOutcome forward =
      audit(dir, model, {"--input", "4x8"}, "1.13.1", {"MPS_AUDIT_EMU_FAULTS=aten::sin=wrong"});
  ASSERT_EQ(forward.result.exit_code, 0) << forward.result.err;
  EXPECT_FALSE(forward.doc["output_match"]["match"].get<bool>());
  EXPECT_GT(forward.doc["output_match"]["max_abs_error"].get<double>(), 0.0);
  EXPECT_NE(forward.result.out.find("OUTPUT DIFFERS"), std::string::npos) << forward.result.out;
  // The first call whose outputs differ is named: sin, not cumsum, which only carried the difference on.
  ASSERT_NE(forward.op("aten::sin", "forward"), nullptr);
  EXPECT_TRUE((*forward.op("aten::sin", "forward"))["mismatch"].get<bool>());
  EXPECT_FALSE((*forward.op("aten::cumsum", "forward"))["mismatch"].get<bool>());
  EXPECT_EQ((*forward.record("aten::sin", "float32"))["verdict"], "mismatch");
  EXPECT_EQ((*forward.record("aten::cumsum", "float32"))["verdict"], "fallback");

  const ModelOutcome train =
      audit(dir, model, {"--input", "4x8", "--train"}, "1.13.1", {"MPS_AUDIT_EMU_FAULTS=aten::cos=wrong"});
  ASSERT_EQ(train.result.exit_code, 0) << train.result.err;
  const auto& t = train.doc["training"];
  EXPECT_TRUE(train.doc["output_match"]["match"].get<bool>());  // cos runs only in the backward pass
  EXPECT_TRUE(t["loss_match"]["match"].get<bool>());
  EXPECT_FALSE(t["gradients_match"].get<bool>());
  EXPECT_FALSE(t["gradients"][0]["match"]["match"].get<bool>());
  EXPECT_FALSE(t["updated_parameters_match"].get<bool>());
  ASSERT_NE(train.op("aten::cos", "backward"), nullptr);
  EXPECT_TRUE((*train.op("aten::cos", "backward"))["mismatch"].get<bool>());
  EXPECT_FALSE((*train.op("aten::sin", "forward"))["mismatch"].get<bool>());
}

TEST(CliModel, TrainingStepOfACnnWithCrossEntropy) {
  TempDir dir;
  const ModelOutcome o = audit(dir, cnn_model(dir), {"--input", "2x3x8x8", "--train", "--target-classes", "5"});
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  EXPECT_EQ(o.doc["training"]["loss"], "cross_entropy (5 classes)");
  EXPECT_TRUE(o.doc["training"]["gradients_match"].get<bool>()) << o.doc["training"].dump(1);
  EXPECT_EQ(o.doc["training"]["gradients"].size(), 4u);
  for (const char* op : {"aten::convolution_backward", "aten::max_pool2d_with_indices_backward",
                         "aten::threshold_backward", "aten::linear_backward"}) {
    const nlohmann::json* b = o.op(op, "backward");
    ASSERT_NE(b, nullptr) << op << ": " << o.doc["ops"].dump(1);
    EXPECT_EQ((*b)["status"], "native") << op;
  }
  EXPECT_EQ(o.doc["totals"]["fallback_calls"], 0);
}

// On the libtorch of the release it emulates, a CNN's training step runs as on a Mac: 2.x implements max_pool2d for
// MPS with a derivative of its own, max_pool2d_backward, an MPS-only operator that the emulator computes with the
// CPU's max-pooling (model/mps_only_kernels.cc).
TEST(CliModel, TrainingStepOfACnnOnItsOwnReleasesEmulation) {
  if (!MPS_AUDIT_TORCH_AT_LEAST(2, 11)) GTEST_SKIP() << "needs the libtorch of the emulated release, 2.11";
  TempDir dir;
  const ModelOutcome o =
      audit(dir, cnn_model(dir), {"--input", "2x3x8x8", "--train", "--target-classes", "5"}, "2.11.0");
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  EXPECT_TRUE(o.doc["training"]["gradients_match"].get<bool>()) << o.doc["training"].dump(1);
  for (const char* op : {"aten::max_pool2d_backward", "aten::convolution_backward", "aten::linear_backward"}) {
    const nlohmann::json* b = o.op(op, "backward");
    ASSERT_NE(b, nullptr) << op << ": " << o.doc["ops"].dump(1);
    EXPECT_EQ((*b)["status"], "native") << op;
  }
}

void expect_one_line_error(const testing::CommandResult& r, const std::string& part) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(part), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST(CliModel, BadInputsGiveOneLineAndExit2) {
  TempDir dir;
  const std::string model = cumsum_model(dir);
  const std::string not_script = dir.write("notes.pt", "not a model\n");
  const std::string raises = save_module(dir, "Raises", {}, R"(
def forward(self, x):
    assert bool(x.sum() < -1.0e30), "refuses every input"
    return x
)");
  expect_one_line_error(audit(dir, not_script, {"--input", "4x8"}).result, "not a TorchScript file");
  expect_one_line_error(audit(dir, dir.path() + "/absent.pt", {"--input", "4x8"}).result, "no such file");
  expect_one_line_error(audit(dir, model, {}).result, "forward(x) takes 1 input, given 0 --input");
  expect_one_line_error(audit(dir, model, {"--input", "4x9"}).result, "the model fails on the CPU");
  expect_one_line_error(audit(dir, raises, {"--input", "4x8"}).result, "refuses every input");
  expect_one_line_error(audit(dir, model, {"--input", "4by8"}).result, "--input '4by8'");
  expect_one_line_error(audit(dir, model, {"--input", "4x8:flaot32"}).result, "unknown dtype 'flaot32'");
  EXPECT_FALSE(path_exists(dir.path() + "/out/model.json"));
}

// --target takes a run's names, checked as a run checks them, except meta: a model audit compares values.
TEST(CliModel, TargetsAreThoseOfARunExceptMeta) {
  TempDir dir;
  const std::string model = cumsum_model(dir);
  auto on = [&](const std::string& target) {
    return run_mps_audit({"model", model, "--input", "4x8", "--target", target, "--out", dir.path() + "/out"});
  };
  expect_one_line_error(on("mps_emu"), "--target mps_emu: expected one of auto, mps, mps-emu, cuda, cpu, meta");
  expect_one_line_error(on("mps_emu"), "(did you mean 'mps-emu'?)");
  expect_one_line_error(on("meta"), "--target meta: expected auto, mps, mps-emu, cuda or cpu (a model audit compares");
  if (!linked_torch_info().has_cuda) {
    expect_one_line_error(on("cuda"), "--target cuda: this libtorch was built without CUDA");
  }
  EXPECT_FALSE(path_exists(dir.path() + "/out/model.json"));
}

// The reports of an audit whose target crashed or hung its process: the parent wrote them whole, and nothing else
// is in the folder (no temporary file of a report cut short).
void expect_whole_reports(const TempDir& dir) {
  std::vector<std::string> files = list_directory(dir.path() + "/out");
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"model.html", "model.json", "model.md"}));
  const std::string md = testing::slurp(dir.path() + "/out/model.md");
  EXPECT_NE(md.find("\ntorch "), std::string::npos) << md;  // its last line
  EXPECT_NE(testing::slurp(dir.path() + "/out/model.html").find("</html>"), std::string::npos);
}

// A target that kills the process is a finding, reported with the call and phase it happened in (exit 0), and
// model.json stays a results file with a crash record. The emulator's fault injection aborts in relu's kernel.
TEST(CliModel, CrashOnTheTargetNamesTheCallAndItsPhase) {
  TempDir dir;
  const ModelOutcome o =
      audit(dir, cnn_model(dir), {"--input", "2x3x8x8"}, "1.13.1", {"MPS_AUDIT_EMU_FAULTS=aten::relu=crash"});
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  EXPECT_EQ(o.doc["target_error"], "aten::relu (forward) crashed the process: SIGABRT");
  EXPECT_EQ(o.doc["failed_phase"], "forward");
  EXPECT_EQ(o.doc["target_ended"], "crash");
  const nlohmann::json* relu = o.op("aten::relu", "forward");
  ASSERT_NE(relu, nullptr) << o.doc.dump(1);
  EXPECT_EQ((*relu)["status"], "crash");
  EXPECT_EQ((*relu)["inputs"], nlohmann::json({"float32[2, 4, 8, 8]"}));
  EXPECT_NE(o.result.out.find("crash    aten::relu (forward, 1 call): crashed the process: SIGABRT"), std::string::npos)
      << o.result.out;
  const Results results = load_results(o.json_path);
  ASSERT_EQ(results.records.size(), 1u);
  EXPECT_EQ(results.records[0].op, "aten::relu");
  EXPECT_EQ(results.records[0].verdict, Verdict::kCrash);
  EXPECT_EQ(results.environment.emulator, "emulated MPS (PyTorch 1.13.1 registry, macOS 14 rules)");
  EXPECT_FALSE(results.run.complete());
  EXPECT_NE(testing::slurp(dir.path() + "/out/model.md").find("| `aten::relu` | forward | float32 | 1 | **crash**"),
            std::string::npos);
  expect_whole_reports(dir);
}

// A call that meets a limit of MPS at which a Mac's process aborts (a scan along the first of five dimensions, from
// 2.7.0) is the model's crash there, with the limit named, though the emulated process went on to write the reports.
TEST(CliModel, ALimitOfMpsThatAbortsIsTheModelsCrash) {
  TempDir dir;
  const std::string model = save_module(dir, "Scan", {}, R"(
def forward(self, x):
    return torch.cumsum(torch.sin(x), 0)
)");
  const ModelOutcome o = audit(dir, model, {"--input", "2x2x2x2x2"}, "2.14.1");
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  EXPECT_EQ(o.doc["target_ended"], "crash");
  EXPECT_EQ(o.doc["failed_phase"], "forward");
  EXPECT_NE(o.doc["target_error"].get<std::string>().find("emulated MPS limit ndarray-scan-sort-axis: dim 0 of a "
                                                          "rank-5 tensor"),
            std::string::npos)
      << o.doc["target_error"];
  const nlohmann::json* cumsum = o.op("aten::cumsum", "forward");
  ASSERT_NE(cumsum, nullptr) << o.doc.dump(1);
  EXPECT_EQ((*cumsum)["status"], "crash");
  EXPECT_EQ((*o.op("aten::sin", "forward"))["status"], "native");
  const TempDir older;
  const ModelOutcome before = audit(older, model, {"--input", "2x2x2x2x2"}, "2.6.0");
  ASSERT_EQ(before.result.exit_code, 0) << before.result.err;
  EXPECT_TRUE(before.doc["target_ended"].is_null()) << before.doc.dump(1);
}

// The same in the backward pass of a training step (relu's derivative), with the audit process executed rather than
// forked, as on macOS.
TEST(CliModel, CrashInTheBackwardPassOfAnExecutedAuditProcess) {
  TempDir dir;
  const ModelOutcome o =
      audit(dir, cnn_model(dir), {"--input", "2x3x8x8", "--train", "--target-classes", "5"}, "1.13.1",
            {"MPS_AUDIT_EMU_FAULTS=aten::threshold_backward=crash", "MPS_AUDIT_WORKERS=exec"});
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  EXPECT_EQ(o.doc["target_error"], "aten::threshold_backward (backward) crashed the process: SIGABRT");
  EXPECT_EQ(o.doc["failed_phase"], "backward");
  EXPECT_EQ((*o.record("aten::threshold_backward", "float32"))["verdict"], "crash");
  EXPECT_EQ(o.doc["training"]["loss"], "cross_entropy (5 classes)");
  expect_whole_reports(dir);
}

// A target that never returns is killed after --timeout seconds and reported as a timeout of the call it hung in.
TEST(CliModel, HangOnTheTargetIsATimeoutOfTheCall) {
  TempDir dir;
  const auto started = std::chrono::steady_clock::now();
  const ModelOutcome o = audit(dir, cnn_model(dir), {"--input", "2x3x8x8", "--timeout", "2"}, "1.13.1",
                               {"MPS_AUDIT_EMU_FAULTS=aten::relu=hang"});
  ASSERT_EQ(o.result.exit_code, 0) << o.result.err;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(60));
  EXPECT_EQ(o.doc["target_error"], "aten::relu (forward) did not finish within 2 s (--timeout)");
  EXPECT_EQ(o.doc["target_ended"], "timeout");
  EXPECT_EQ((*o.record("aten::relu", "float32"))["verdict"], "timeout");
  EXPECT_EQ((*o.op("aten::relu", "forward"))["status"], "timeout");
  expect_whole_reports(dir);
}

// A model that hangs on the CPU is the model's fault, not the target's: one line, exit 2, no report.
TEST(CliModel, HangOnTheCpuIsOneLineAndExit2) {
  TempDir dir;
  const std::string loops = save_module(dir, "Loops", {}, R"(
def forward(self, x):
    while bool(x.sum() > -1.0e30):
        x = x + 0.0
    return x
)");
  const testing::CommandResult r = audit(dir, loops, {"--input", "4x8", "--timeout", "1"}).result;
  expect_one_line_error(r, "on the CPU, ");
  EXPECT_NE(r.err.find("did not finish within 1 s (--timeout)"), std::string::npos) << r.err;
  EXPECT_FALSE(path_exists(dir.path() + "/out/model.json"));
}

TEST(CliModel, TimeoutMustBeAPositiveNumberOfSeconds) {
  TempDir dir;
  const std::string model = cumsum_model(dir);
  for (const char* bad : {"0", "-3", "nan", "inf"}) {
    expect_one_line_error(audit(dir, model, {"--input", "4x8", "--timeout", bad}).result,
                          fmt::format("--timeout {}: expected a positive number of seconds", bad));
  }
  EXPECT_FALSE(path_exists(dir.path() + "/out/model.json"));
}

TEST(CliModel, IntegerInputsAreIdsBelowInputHigh) {
  TempDir dir;
  const std::string model = save_module(dir, "Embed", {{"table", {7, 3}}}, R"(
def forward(self, ids):
    return torch.embedding(self.table, ids)
)");
  // Ids from [0, 7) are valid rows; the CPU would reject an id of 7 or more.
  EXPECT_EQ(audit(dir, model, {"--input", "2x16:int64", "--input-high", "7"}).result.exit_code, 0);
  expect_one_line_error(audit(dir, model, {"--input", "2x16:int64", "--input-high", "1000"}).result,
                        "the model fails on the CPU");
}

// Each release the emulator can take, by the name --emu-release also takes, with its folder; and one that is not
// shipped is one line naming what is.
TEST(CliEnv, ListsTheEmulatedReleasesByNameWithTheirFolders) {
  const testing::CommandResult r = run_mps_audit({"env"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2.6.0 (" + source_path("data/pytorch-2.6.0") + ")"), std::string::npos) << r.out;
  TempDir dir;
  const auto by_name = run_mps_audit({"run", "--target", "mps-emu", "--emu-release", "2.11.0", "--ops", "^aten::sin$",
                                      "--dtypes", "float32", "--out", dir.path() + "/named", "--no-progress"});
  ASSERT_EQ(by_name.exit_code, 0) << by_name.err;
  EXPECT_NE(by_name.out.find("emulated MPS (PyTorch 2.11.0 registry"), std::string::npos) << by_name.out;
  const auto unknown = run_mps_audit({"run", "--target", "mps-emu", "--emu-release", "2.7.0", "--out", dir.path()});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("error: --emu-release 2.7.0: no pytorch-2.7.0 folder in "), std::string::npos)
      << unknown.err;
  EXPECT_NE(unknown.err.find("shipped: 1.13.1, 2.6.0, 2.11.0"), std::string::npos) << unknown.err;
  const auto nowhere = run_mps_audit({"run", "--target", "mps-emu", "--out", dir.path()}, {"MPS_AUDIT_DATA=/nowhere"});
  EXPECT_EQ(nowhere.exit_code, 2);
  EXPECT_NE(nowhere.err.find("error: $MPS_AUDIT_DATA=/nowhere: no such folder"), std::string::npos) << nowhere.err;
}

TEST(CliEnv, JsonDescribesThisLinuxMachine) {
  const testing::CommandResult r = run_mps_audit({"env", "--format", "json"}, {"PYTORCH_ENABLE_MPS_FALLBACK=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json env = nlohmann::json::parse(r.out);
  EXPECT_FALSE(env["torch_version"].get<std::string>().empty());
  EXPECT_EQ(env["mps"]["built"], false);
  EXPECT_EQ(env["mps"]["available"], false);
  EXPECT_TRUE(env["mps"]["macos"].is_null());
  EXPECT_FALSE(env["mps"]["why_not"].get<std::string>().empty());
  // This libtorch decides whether CUDA is built in; whether a device is there, the machine.
  const bool cuda_built = linked_torch_info().has_cuda;
  EXPECT_EQ(env["cuda"]["built"], cuda_built);
  const bool cuda_available = env["cuda"]["available"].get<bool>();
  if (!cuda_built) EXPECT_FALSE(cuda_available);
  EXPECT_EQ(env["PYTORCH_ENABLE_MPS_FALLBACK"]["value"], "1");
  EXPECT_NE(env["PYTORCH_ENABLE_MPS_FALLBACK"]["meaning"].get<std::string>().find("run on the CPU"), std::string::npos);
  std::vector<std::string> names, releases;
  for (const auto& t : env["targets"]) {
    names.push_back(t["name"]);
    if (t["name"] == "mps-emu") releases = t["releases"].get<std::vector<std::string>>();
  }
  std::vector<std::string> expected = {"mps-emu", "cpu", "meta"};
  if (cuda_available) expected.insert(expected.begin() + 1, "cuda");
  EXPECT_EQ(names, expected);
  EXPECT_EQ(releases, testing::source_tree_releases());  // oldest first
  EXPECT_GE(releases.size(), 4u) << "1.13.1, 2.6.0, 2.11.0 and 2.14.1 at least";
}

// Note [The pytest plugin and the Python on PATH]: the line names the plugin module and says whether the python3 on
// PATH finds it, and how to make it.
TEST(CliEnv, SaysWhetherThePythonOnPathFindsThePytestPlugin) {
  TempDir bin;
  ASSERT_EQ(::symlink("/usr/bin/python3", (bin.path() + "/python3").c_str()), 0);
  const std::string path = "PATH=" + bin.path(), plugin = source_path("python");
  const auto without = run_mps_audit({"env", "--format", "json"}, {path, "PYTHONPATH="});
  ASSERT_EQ(without.exit_code, 0) << without.err;
  const nlohmann::json python = nlohmann::json::parse(without.out)["pytest_plugin"]["python"];
  ASSERT_TRUE(python.is_object()) << without.out;
  if (!python["pytest"].is_string()) {
    if (std::getenv("CI")) FAIL() << "CI installs pytest for /usr/bin/python3 (python3-pytest)";
    GTEST_SKIP() << "/usr/bin/python3 has no pytest";
  }
  EXPECT_TRUE(python["plugin"].is_null()) << python.dump();
  const auto text = run_mps_audit({"env"}, {path, "PYTHONPATH="});
  EXPECT_NE(text.out.find("pytest plugin: " + plugin + "/mps_audit.py (pytest -p mps_audit --mps-audit)\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("does not find the plugin: PYTHONPATH=" + plugin + " pytest -p mps_audit --mps-audit"),
            std::string::npos)
      << text.out;
  const auto with = run_mps_audit({"env"}, {path, "PYTHONPATH=" + plugin});
  EXPECT_NE(with.out.find(": finds the plugin (pytest -p mps_audit)"), std::string::npos) << with.out;
  const auto none = run_mps_audit({"env"}, {"PATH=" + bin.path() + "/nowhere"});
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_NE(none.out.find("python3 on PATH: none that runs"), std::string::npos) << none.out;
}

TEST(CliEnv, FallbackVariableZeroMeansErrors) {
  const testing::CommandResult r = run_mps_audit({"env"}, {"PYTORCH_ENABLE_MPS_FALLBACK=0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("PYTORCH_ENABLE_MPS_FALLBACK=0: operators MPS lacks raise NotImplementedError"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("mps-emu"), std::string::npos);
}

// The environment block round-trips through JSON, and a block written before the host fields existed still reads.
TEST(RunEnvironmentJson, HostFieldsRoundTripAndOldBlocksRead) {
  RunEnvironment env;
  env.target = "mps";
  env.mps_built = env.mps_available = true;
  env.macos = "14.5";
  env.cuda_devices = {"cuda:0 NVIDIA H100"};
  env.fallback_variable = "1";
  env.targets = {{"mps", {}, {}}, {"mps-emu", {"1.13.1"}, {"data/pytorch-1.13.1"}}};
  const RunEnvironment back = run_environment_from_json(to_json(env));
  EXPECT_TRUE(back.mps_built);
  EXPECT_TRUE(back.mps_available);
  EXPECT_EQ(back.macos, "14.5");
  EXPECT_EQ(back.cuda_devices, env.cuda_devices);
  EXPECT_EQ(back.fallback_variable, std::optional<std::string>("1"));
  ASSERT_EQ(back.targets.size(), 2u);
  EXPECT_EQ(back.targets[1].releases, std::vector<std::string>{"1.13.1"});
  EXPECT_EQ(to_json(env)["mps"]["macos"], "14.5");

  const RunEnvironment old = run_environment_from_json(
      nlohmann::json::parse(R"({"torch_version": "1.13.0", "target": "mps-emu", "fallback_mode": "on"})"));
  EXPECT_EQ(old.target, "mps-emu");
  EXPECT_FALSE(old.mps_built);
  EXPECT_FALSE(old.fallback_variable.has_value());
  EXPECT_TRUE(old.targets.empty());
  EXPECT_TRUE(to_json(old)["mps"]["macos"].is_null());
  EXPECT_TRUE(to_json(old)["PYTORCH_ENABLE_MPS_FALLBACK"]["value"].is_null());
}

}  // namespace
}  // namespace mps_audit
