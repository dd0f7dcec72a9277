// End-to-end tests of `mps-audit run`: every verdict, the results.json contract, the emulator's interface, and
// bad input. They run the real binary on the emulated MPS target of PyTorch 1.13.1's registry.
#include <algorithm>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/output_file.h"
#include "common/paths.h"
#include "common/torch_compat.h"
#include "test_support.h"

namespace mps_audit {
namespace {

using testing::run_mps_audit;
using testing::source_path;
using testing::TempDir;

struct RunOutcome {
  testing::CommandResult result;
  nlohmann::json doc;
  const nlohmann::json* find(const std::string& op, const std::string& dtype) const {
    for (const auto& r : doc["results"]) {
      if (r["op"] == op && r["dtype"] == dtype) return &r;
    }
    return nullptr;
  }
};

RunOutcome run_emulated(const TempDir& dir, std::vector<std::string> args, const std::vector<std::string>& env = {}) {
  const std::vector<std::string> all = testing::emulated_run_args(dir.path(), args);
  RunOutcome run;
  run.result = run_mps_audit(all, env);
  const std::string results = dir.path() + "/results.json";
  if (path_exists(results)) run.doc = nlohmann::json::parse(testing::slurp(results));
  return run;
}

std::string verdict(const RunOutcome& run, const std::string& op, const std::string& dtype) {
  const nlohmann::json* r = run.find(op, dtype);
  return r ? (*r)["verdict"].get<std::string>() : "absent";
}

// The interface the emulator promises the prober, for PyTorch 1.13.1's registry.
TEST(CliRun, EmulatedMpsOf1131WithFallbackOn) {
  TempDir dir;
  const RunOutcome run = run_emulated(dir, {"--ops", "^aten::(add\\.Tensor|sin|relu|nonzero|cumsum)$", "--dtypes",
                                            "float32,float64", "--fallback", "on"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(verdict(run, "aten::add.Tensor", "float32"), "pass");
  EXPECT_EQ(verdict(run, "aten::sin", "float32"), "pass");
  EXPECT_EQ(verdict(run, "aten::relu", "float32"), "pass");
  // PyTorch 1.13.1's own MPS tests block nonzero as flaky (Note [Expected verdicts]): a note on what was observed, the
  // fallback, which stays the verdict.
  EXPECT_EQ(verdict(run, "aten::nonzero", "float32"), "fallback");
  EXPECT_FALSE(run.find("aten::nonzero", "float32")->contains("observed"));
  EXPECT_EQ((*run.find("aten::nonzero", "float32"))["basis"], "registry");
  EXPECT_EQ((*run.find("aten::nonzero", "float32"))["expectation"]["kind"], "flaky");
  EXPECT_EQ((*run.find("aten::nonzero", "float32"))["fallback_ops"], nlohmann::json({"aten::nonzero"}));
  EXPECT_EQ((*run.find("aten::sin", "float32"))["basis"], "registry");
  EXPECT_EQ((*run.find("aten::nonzero", "float32"))["registry_status"], "cpu_fallback");
  // MPS's fallback warning, captured with warn-always on (a user sees it once per process at most)
  EXPECT_NE((*run.find("aten::nonzero", "float32"))["warnings"].dump().find("will fall back to run on the CPU"),
            std::string::npos);
  EXPECT_EQ(verdict(run, "aten::cumsum", "float32"), "fallback");
  // cumsum decomposes into cumsum.out, which is what has no MPS kernel
  EXPECT_EQ((*run.find("aten::cumsum", "float32"))["fallback_ops"], nlohmann::json({"aten::cumsum.out"}));
  for (const char* op : {"aten::add.Tensor", "aten::sin", "aten::relu", "aten::nonzero", "aten::cumsum"}) {
    EXPECT_EQ(verdict(run, op, "float64"), "unsupported") << op;
    EXPECT_NE((*run.find(op, "float64"))["message"].get<std::string>().find("float64"), std::string::npos);
  }
  // The contract of results.json (ARCHITECTURE.md), and that an emulated run says so everywhere.
  EXPECT_EQ(run.doc["schema_version"], 3);
  EXPECT_EQ(run.doc["run"]["planned"], 10);
  EXPECT_EQ(run.doc["run"]["finished"], 10);
  EXPECT_EQ(run.doc["run"]["lost"], 0);
  EXPECT_EQ(run.doc["run"]["complete"], true);
  EXPECT_EQ(run.doc["environment"]["target"], "mps-emu");
  EXPECT_EQ(run.doc["environment"]["fallback_mode"], "on");
  EXPECT_EQ(run.doc["environment"]["emulated"], true);
  EXPECT_EQ(run.doc["environment"]["emulator"], "emulated MPS (PyTorch 1.13.1 registry, macOS 14 rules)");
  EXPECT_EQ(run.doc["summary"]["total"], 10);
  EXPECT_EQ(run.doc["summary"]["pass"], 3);
  for (const auto& r : run.doc["results"]) {
    for (const char* key : {"op", "dtype", "verdict", "fallback_ops", "message"}) EXPECT_TRUE(r.contains(key)) << key;
  }
  const std::string label = "emulated MPS (PyTorch 1.13.1 registry, macOS 14 rules)";
  EXPECT_NE(run.result.out.find(label), std::string::npos);
  EXPECT_NE(run.result.err.find("probing 10 op x dtype pairs on mps-emu — " + label + " on libtorch " +
                                compat::kTorchVersion + " with "),
            std::string::npos)
      << run.result.err;
  EXPECT_NE(testing::slurp(dir.path() + "/workers.log").find(label), std::string::npos);
  EXPECT_NE(testing::slurp(dir.path() + "/results.md").find("not from a real Mac"), std::string::npos);
}

// Note [Kernels the linked libtorch lacks]: a release emulated on another release's libtorch. 2.11.0 runs _foreach_sqrt
// through CompositeExplicitAutograd where 1.13.1 has only a CPU kernel, so each side of the pair lacks what the other
// runs: emulated 2.11.0 on libtorch 1.13, emulated 1.13.1 on libtorch 2.x. Those records (and _foreach_sqrt.out,
// whose composite kernel runs _foreach_sqrt) are not probed, say why, and no baseline diff calls them a regression;
// the linked release's own emulation probes them.
TEST(CliRun, AReleaseOnAnotherLibtorchSaysWhatItCannotShow) {
  const bool newer_linked = MPS_AUDIT_TORCH_AT_LEAST(2, 0);
  const std::string other = newer_linked ? "1.13.1" : "2.11.0";
  const std::string ops = "^aten::(_foreach_sqrt|_foreach_sqrt\\.out|sin)$";
  TempDir across, own;
  const auto emulated = [&](const TempDir& dir, const std::string& release) {
    RunOutcome run;
    run.result = run_mps_audit({"run", "--target", "mps-emu", "--emu-release", release, "--ops", ops, "--dtypes",
                                "float32", "--out", dir.path(), "--no-progress", "--format", "json"});
    if (path_exists(dir.path() + "/results.json")) {
      run.doc = nlohmann::json::parse(testing::slurp(dir.path() + "/results.json"));
    }
    return run;
  };
  const RunOutcome run = emulated(across, other);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(verdict(run, "aten::sin", "float32"), "pass");
  if (newer_linked) {
    // 1.13.1 has only a CPU kernel, the linked libtorch a CompositeExplicitAutograd one: the emulator gives the
    // operator MPS's fallback, as a Mac with 1.13.1 runs it, and the out= variant's composite meets that fallback.
    for (const char* op : {"aten::_foreach_sqrt", "aten::_foreach_sqrt.out"}) {
      EXPECT_EQ(verdict(run, op, "float32"), "fallback") << op;
      EXPECT_EQ((*run.find(op, "float32"))["fallback_ops"], nlohmann::json({"aten::_foreach_sqrt"})) << op;
    }
  } else {
    // 2.11.0 runs a CompositeExplicitAutograd kernel 1.13.1 lacks: not probed, and saying why.
    for (const char* op : {"aten::_foreach_sqrt", "aten::_foreach_sqrt.out"}) {
      const nlohmann::json& r = *run.find(op, "float32");
      EXPECT_EQ(r["verdict"], "skip") << r.dump();
      EXPECT_EQ(r["skip_reason"], "linked_libtorch") << r.dump();
      const std::string message = r["message"];
      EXPECT_EQ(message.rfind("not probed: ", 0), 0u) << message;
      EXPECT_NE(message.find("libtorch " + std::string(compat::kTorchVersion)), std::string::npos) << message;
      EXPECT_NE(message.find("PyTorch " + other), std::string::npos) << message;
    }
    EXPECT_NE(run.result.err.find(" not probed: the linked libtorch " + std::string(compat::kTorchVersion)),
              std::string::npos)
        << run.result.err;
  }

  // On its own libtorch the release has every record probed; from there to the other release the diff gates only on
  // what a Mac with that release would do.
  const std::string linked = newer_linked ? testing::source_tree_releases().back() : "1.13.1";
  const RunOutcome mine = emulated(own, linked);
  ASSERT_EQ(mine.result.exit_code, 0) << mine.result.err;
  for (const auto& r : mine.doc["results"]) EXPECT_NE(r["verdict"], "skip") << r.dump();
  const auto diff = run_mps_audit({"diff", own.path() + "/results.json", across.path() + "/results.json"});
  EXPECT_EQ(diff.exit_code, newer_linked ? 1 : 0) << diff.out << diff.err;
}

// A known failure in the spec turns the failure into xfail (and a pass into xpass).
// Workers replace libtorch's stack-trace fetcher (common/torch_compat.h); MPS_AUDIT_TORCH_BACKTRACES=1 keeps it.
// Operators whose inputs the CPU refuses in some dtypes (skips after several synthesis attempts) and that fail on
// the target: every record must read the same either way.
// A result the emulator cannot hold on emulated MPS (its memory holds strided tensors; 2.14.1 runs _to_sparse on MPS)
// is not judged, with why: never an error of the operator's.
TEST(CliRun, AResultTheEmulatorCannotHoldIsNotJudged) {
  if (!MPS_AUDIT_TORCH_AT_LEAST(2, 0)) GTEST_SKIP() << "libtorch 1.13 lacks aten::_to_sparse";
  TempDir dir;
  const testing::CommandResult r =
      run_mps_audit({"run", "--target", "mps-emu", "--emu-release", "2.14.1", "--ops", "^aten::_to_sparse$", "--dtypes",
                     "float32", "--out", dir.path(), "--no-progress", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(testing::slurp(dir.path() + "/results.json"));
  ASSERT_EQ(doc["results"].size(), 1u);
  const auto& rec = doc["results"][0];
  EXPECT_EQ(rec["verdict"], "skip");
  EXPECT_EQ(rec["message"],
            "not judged: the emulator cannot hold the sparse result of aten::_to_sparse on emulated MPS");
}

TEST(CliRun, RecordsAreTheSameWithoutTorchBacktraces) {
  const std::vector<std::string> args = {"--ops", "^aten::(adaptive_max_pool2d|bitwise_xor\\.Tensor|nonzero|sin)$",
                                         "--dtypes", "float32,float16,float64,int32,bool"};
  TempDir cheap, full;
  const RunOutcome a = run_emulated(cheap, args);
  const RunOutcome b = run_emulated(full, args, {"MPS_AUDIT_TORCH_BACKTRACES=1"});
  ASSERT_EQ(a.result.exit_code, 0) << a.result.err;
  ASSERT_EQ(b.result.exit_code, 0) << b.result.err;
  ASSERT_EQ(a.doc["results"].size(), 20u);
  ASSERT_EQ(a.doc["results"].size(), b.doc["results"].size());
  std::map<std::string, int> verdicts;
  for (size_t i = 0; i < a.doc["results"].size(); ++i) {
    const auto &x = a.doc["results"][i], &y = b.doc["results"][i];
    const std::string what = x["op"].get<std::string>() + " " + x["dtype"].get<std::string>();
    EXPECT_EQ(x["op"], y["op"]);
    EXPECT_EQ(x["dtype"], y["dtype"]);
    EXPECT_EQ(x["verdict"], y["verdict"]) << what;
    EXPECT_EQ(x["message"], y["message"]) << what;
    EXPECT_EQ(x["message"].get<std::string>().find("Exception raised from"), std::string::npos) << what;
    ++verdicts[x["verdict"].get<std::string>()];
  }
  // thrown errors were met: CPU refusals (skips) and target failures
  EXPECT_GT(verdicts["skip"] + verdicts["unsupported"] + verdicts["error"], 0);
}

TEST(CliRun, SpecKnownFailuresBecomeXfailAndXpass) {
  TempDir dir;
  const std::string spec = dir.write("spec.yaml", R"(version: 1
ops:
  aten::cumsum: {xfail: [{reason: "no MPS kernel in 1.13", targets: [mps-emu], torch: {max: "1.99"}}]}
  aten::sin: {xfail: [{reason: "pretend", targets: [mps-emu]}]}
)");
  auto r = run_mps_audit({"run", "--target", "mps-emu", "--emu-release", source_path("data/pytorch-1.13.1"), "--spec",
                          spec, "--out", dir.path() + "/out", "--no-progress", "--ops", "^aten::(cumsum|sin)$",
                          "--dtypes", "float32", "--fallback", "off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(testing::slurp(dir.path() + "/out/results.json"));
  std::map<std::string, std::string> verdicts;
  for (const auto& x : doc["results"]) verdicts[x["op"].get<std::string>()] = x["verdict"].get<std::string>();
  const bool old_torch = doc["environment"]["torch_version"].get<std::string>().rfind("1.", 0) == 0;
  EXPECT_EQ(verdicts["aten::cumsum"], old_torch ? "xfail" : "unsupported");  // the torch range decides
  EXPECT_EQ(verdicts["aten::sin"], "xpass");
}

TEST(CliRun, ErrorFallbackMakesMissingKernelsUnsupported) {
  TempDir dir;
  const RunOutcome run =
      run_emulated(dir, {"--ops", "^aten::(cumsum|sin)$", "--dtypes", "float32", "--fallback", "off"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(verdict(run, "aten::cumsum", "float32"), "unsupported");
  EXPECT_NE((*run.find("aten::cumsum", "float32"))["message"].get<std::string>().find(
                "is not currently implemented for the MPS device"),
            std::string::npos);
  EXPECT_EQ(verdict(run, "aten::sin", "float32"), "pass");
}

// Each injected fault ends as its own verdict; a crash or a hang costs one probe, not the run.
TEST(CliRun, EveryFailureKindIsCaught) {
  TempDir dir;
  const RunOutcome run =
      run_emulated(dir,
                   {"--ops", "^aten::(sin|cos|tan|exp|relu)$", "--dtypes", "float32", "--timeout", "3", "--fail-on",
                    "mismatch", "-j", "1", "--samples", "none"},  // the synthesized 3x4 inputs
                   {"MPS_AUDIT_EMU_FAULTS=aten::sin=wrong,aten::cos=crash,aten::tan=hang,aten::exp=throw"});
  EXPECT_EQ(run.result.exit_code, 1) << run.result.err;  // --fail-on mismatch
  EXPECT_EQ(verdict(run, "aten::sin", "float32"), "mismatch");
  EXPECT_EQ(verdict(run, "aten::cos", "float32"), "crash");
  EXPECT_EQ(verdict(run, "aten::tan", "float32"), "timeout");
  EXPECT_EQ(verdict(run, "aten::exp", "float32"), "error");
  EXPECT_EQ(verdict(run, "aten::relu", "float32"), "pass");  // probed after the crash and the hang
  const nlohmann::json& sin = *run.find("aten::sin", "float32");
  EXPECT_EQ(sin["mismatches"], 12);
  EXPECT_NEAR(sin["max_abs_error"].get<double>(), 1.0, 1e-6);  // the fault adds 1 (in float32)
  EXPECT_EQ(sin["first_mismatch"], "[0, 0]");
}

// A probe after which the device no longer works (as CUDA after an illegal memory access) gets its record, saying
// so, and a new worker takes the probes after it, which would otherwise all fail the same way.
TEST(CliRun, AWorkerWhoseDeviceBecameUnusableIsReplaced) {
  TempDir dir;
  const RunOutcome run = run_emulated(
      dir, {"--ops", "^aten::(abs|cos|sin)$", "--dtypes", "float32,float16", "-j", "1", "--samples", "none"},
      {"MPS_AUDIT_EMU_FAULTS=aten::abs=poison"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  for (const char* dtype : {"float32", "float16"}) {
    EXPECT_EQ(verdict(run, "aten::abs", dtype), "error");
    EXPECT_NE((*run.find("aten::abs", dtype))["message"].get<std::string>().find("the device was unusable after it"),
              std::string::npos)
        << (*run.find("aten::abs", dtype))["message"];
    EXPECT_EQ(verdict(run, "aten::cos", dtype), "pass");
    EXPECT_EQ(verdict(run, "aten::sin", dtype), "pass");
  }
}

// An operator that crashes its worker in every dtype: each probe is a crash of its own (Note [Probes that end their
// worker], Note [Spare workers] in run/scheduler.cc), and every other probe still gets its verdict.
// Workers forked from the run (Note [Forked workers]) and workers spawned from the binary (MPS_AUDIT_WORKERS=exec,
// as on macOS) alike.
TEST(CliRun, AnOperatorThatCrashesInEveryDtypeCostsOneProbeEach) {
  for (const char* workers : {"MPS_AUDIT_WORKERS=fork", "MPS_AUDIT_WORKERS=exec"}) {
    SCOPED_TRACE(workers);
    TempDir dir;
    const RunOutcome run = run_emulated(dir,
                                        {"--ops", "^aten::(abs|cos|tanh|relu|sin)$", "--dtypes",
                                         "float32,float16,int32", "-j", "2", "--samples", "none", "--timeout", "2"},
                                        {"MPS_AUDIT_EMU_FAULTS=aten::cos=crash,aten::relu=hang", workers});
    ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
    for (const char* dtype : {"float32", "float16", "int32"}) {
      EXPECT_EQ(verdict(run, "aten::cos", dtype), "crash") << dtype;
      EXPECT_EQ(verdict(run, "aten::relu", dtype), "timeout") << dtype;
      for (const char* op : {"aten::abs", "aten::tanh", "aten::sin"}) EXPECT_EQ(verdict(run, op, dtype), "pass") << op;
    }
    const auto doc = nlohmann::json::parse(testing::slurp(dir.path() + "/results.json"));
    EXPECT_EQ(doc["run"]["finished"], 15);
  }
}

// A worker that cannot start (here, the fault plan it is given cannot be read) stops the run with the worker's own
// reason once its exit status says so (Note [Workers that end] in run/pool.cc), and no report is written. Forked
// workers find the emulator registered by the run (Note [Kernels registered before the fork]): there the run reads
// the plan, and stops with the same reason before any worker starts.
TEST(CliRun, AWorkerThatCannotStartStopsTheRunWithItsReason) {
  for (const char* workers : {"MPS_AUDIT_WORKERS=fork", "MPS_AUDIT_WORKERS=exec"}) {
    SCOPED_TRACE(workers);
    TempDir dir;
    const RunOutcome run =
        run_emulated(dir, {"--ops", "^aten::(cos|sin)$", "--samples", "none"}, {"MPS_AUDIT_EMU_FAULTS=bogus", workers});
    EXPECT_EQ(run.result.exit_code, 2) << run.result.err;
    const std::string reason = "error: MPS_AUDIT_EMU_FAULTS: expected 'operator=kind', got 'bogus'";
    const bool forked = std::string(workers) == "MPS_AUDIT_WORKERS=fork";
    EXPECT_NE(run.result.err.find(forked ? reason : "error: a worker could not start: " + reason), std::string::npos)
        << run.result.err;
    EXPECT_TRUE(run.doc.is_null());  // no results.json
  }
}

// Code on the CPU that reads an argument's device memory faults (Note [Caught faults] in probe/caught_faults.cc):
// the worker catches it, records the crash with what was read, and probes the operator's other dtypes, and then no
// other operator: the emulated fault makes every other operator's results wrong in that process.
TEST(CliRun, AFaultOnDeviceMemoryIsCaughtAndNoOtherOperatorRunsAfterIt) {
#ifndef __linux__
  GTEST_SKIP() << "faults are caught on Linux only";
#endif
  for (const char* jobs : {"1", "2"}) {
    TempDir dir;
    const RunOutcome run = run_emulated(dir,
                                        {"--ops", "^aten::(abs|cos|neg|sin)(\\.out)?$", "--dtypes",
                                         "float32,float16,int32", "-j", jobs, "--samples", "none"},
                                        {"MPS_AUDIT_EMU_FAULTS=aten::neg=touch"});
    ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
    for (const char* dtype : {"float32", "float16", "int32"}) {
      for (const char* op : {"aten::neg", "aten::neg.out"}) {
        ASSERT_EQ(verdict(run, op, dtype), "crash") << op << " " << dtype << " -j " << jobs;
        EXPECT_EQ((*run.find(op, dtype))["message"],
                  "signal 11 (Segmentation fault): code on the CPU read argument 'self', which is in mps:0 memory");
      }
      for (const char* op :
           {"aten::abs", "aten::abs.out", "aten::cos", "aten::cos.out", "aten::sin", "aten::sin.out"}) {
        EXPECT_EQ(verdict(run, op, dtype), "pass") << op << " " << dtype << " -j " << jobs;
      }
    }
    EXPECT_EQ(run.doc["run"]["finished"], 24);
  }
}

// A worker that caught a fault is not trusted with a hang: a probe of the operator that hangs after the fault runs
// again in a new worker (Note [Probes after a caught fault] in run/pool.cc), where the emulated operator faults
// again, as it would in a process of its own, instead of hanging on what the first fault left behind.
TEST(CliRun, AProbeThatHangsAfterACaughtFaultRunsAgainInANewWorker) {
#ifndef __linux__
  GTEST_SKIP() << "faults are caught on Linux only";
#endif
  TempDir dir;
  const RunOutcome run = run_emulated(dir,
                                      {"--ops", "^aten::(abs|neg)$", "--dtypes", "float32,float16,int32", "-j", "1",
                                       "--samples", "none", "--timeout", "2"},
                                      {"MPS_AUDIT_EMU_FAULTS=aten::neg=touch-then-hang"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  for (const char* dtype : {"float32", "float16", "int32"}) {
    EXPECT_EQ(verdict(run, "aten::neg", dtype), "crash") << dtype;
    EXPECT_EQ((*run.find("aten::neg", dtype))["message"],
              "signal 11 (Segmentation fault): code on the CPU read argument 'self', which is in mps:0 memory")
        << dtype;
    EXPECT_EQ(verdict(run, "aten::abs", dtype), "pass") << dtype;
  }
  EXPECT_EQ(run.doc["run"]["finished"], 6);
}

// Note [Emulated MPS memory]: code on the CPU that reads or writes an MPS tensor's memory faults on emulated MPS, as it
// crashes on a Mac (a conformance run on an M3 Max lists these operators' crashes): CPU kernels that PyTorch registers
// for every backend, caught and named as on CUDA. The commonest training operators, forward and backward, and the
// optimizers' element-wise ones, which the emulator's kernels and copies compute, do not fault.
TEST(CliRun, CpuKernelsThatReadEmulatedMpsMemoryCrashAndTrainingOperatorsDoNot) {
#ifndef __linux__
  GTEST_SKIP() << "emulated MPS memory is kept from the CPU on Linux only";
#endif
  const std::string ops =
      "^aten::(_grid_sampler_2d_cpu_fallback|_grid_sampler_2d_cpu_fallback_backward|range|conv2d|convolution|"
      "convolution_backward|linear|addmm|mm|bmm|relu|gelu|gelu_backward|silu|silu_backward|threshold_backward|_softmax|"
      "_softmax_backward_data|_log_softmax|_log_softmax_backward_data|native_batch_norm|native_batch_norm_backward|"
      "native_layer_norm|native_layer_norm_backward|nll_loss_forward|nll_loss_backward|mse_loss|mse_loss_backward|"
      "embedding|embedding_dense_backward|native_dropout|native_dropout_backward|max_pool2d_with_indices|"
      "max_pool2d_with_indices_backward|avg_pool2d|avg_pool2d_backward|add_|mul_|addcmul_|addcdiv_|lerp_|sqrt|div)"
      "(\\..*)?$";
  const std::vector<std::string> training = {"aten::convolution",
                                             "aten::convolution_backward",
                                             "aten::addmm",
                                             "aten::mm",
                                             "aten::bmm",
                                             "aten::relu",
                                             "aten::threshold_backward",
                                             "aten::gelu",
                                             "aten::gelu_backward",
                                             "aten::silu",
                                             "aten::silu_backward",
                                             "aten::_softmax",
                                             "aten::_softmax_backward_data",
                                             "aten::_log_softmax",
                                             "aten::_log_softmax_backward_data",
                                             "aten::native_batch_norm",
                                             "aten::native_batch_norm_backward",
                                             "aten::native_layer_norm",
                                             "aten::native_layer_norm_backward",
                                             "aten::nll_loss_forward",
                                             "aten::nll_loss_backward",
                                             "aten::mse_loss",
                                             "aten::mse_loss_backward",
                                             "aten::embedding",
                                             "aten::embedding_dense_backward",
                                             "aten::native_dropout",
                                             "aten::native_dropout_backward",
                                             "aten::max_pool2d_with_indices",
                                             "aten::max_pool2d_with_indices_backward",
                                             "aten::avg_pool2d",
                                             "aten::avg_pool2d_backward",
                                             "aten::add_.Tensor",
                                             "aten::mul_.Tensor",
                                             "aten::addcmul_",
                                             "aten::addcdiv_",
                                             "aten::lerp_.Scalar",
                                             "aten::sqrt",
                                             "aten::div.Tensor"};
  const std::vector<std::string> grid_sampler = {"aten::_grid_sampler_2d_cpu_fallback",
                                                 "aten::_grid_sampler_2d_cpu_fallback.out",
                                                 "aten::_grid_sampler_2d_cpu_fallback_backward"};
  for (const char* release : {"2.11.0", "2.14.1"}) {
    TempDir dir;
    RunOutcome run;
    run.result = run_mps_audit({"run", "--target", "mps-emu", "--emu-release", release, "--ops", ops, "--dtypes",
                                "float32,int64", "--out", dir.path(), "--no-progress", "--format", "json"});
    ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
    run.doc = nlohmann::json::parse(testing::slurp(dir.path() + "/results.json"));
    for (const std::string& op : grid_sampler) {
      ASSERT_EQ(verdict(run, op, "float32"), "crash") << op << " " << release;
      EXPECT_EQ((*run.find(op, "float32"))["message"],
                "signal 11 (Segmentation fault): code on the CPU read argument 'grid', which is in mps:0 memory")
          << op << " " << release;
    }
    for (const char* dtype : {"float32", "int64"}) {
      ASSERT_EQ(verdict(run, "aten::range.out_", dtype), "crash") << dtype << " " << release;
      const std::string message = (*run.find("aten::range.out_", dtype))["message"];
      EXPECT_EQ(message.rfind("signal 11 (Segmentation fault): code on the CPU wrote to ", 0), 0u) << message;
      EXPECT_NE(message.find("mps:0 memory"), std::string::npos) << message;
    }
    for (const auto& r : run.doc["results"]) {
      const std::string op = r["op"];
      if (op == "aten::range.out_" || std::find(grid_sampler.begin(), grid_sampler.end(), op) != grid_sampler.end()) {
        continue;
      }
      EXPECT_NE(r["verdict"], "crash") << r.dump();
    }
    // No training operator touches MPS memory from the CPU: each passes or falls back, or is a known MPS bug that a
    // sample built for its condition met (conv2d on chunk() views, pytorch-169342), which is not a crash.
    for (const std::string& op : training) {
      const std::string v = verdict(run, op, "float32");
      EXPECT_TRUE(v == "pass" || v == "fallback" || v == "known_failure") << op << " " << release << ": " << v;
    }
  }
}

// The same probe's record in two runs' results: the same verdict, message and sample.
void expect_same_record(const nlohmann::json& x, const nlohmann::json& y) {
  EXPECT_EQ(x["op"], y["op"]);
  EXPECT_EQ(x["dtype"], y["dtype"]);
  EXPECT_EQ(x["verdict"], y["verdict"]) << x["op"] << " " << x["dtype"];
  EXPECT_EQ(x["message"], y["message"]) << x["op"] << " " << x["dtype"];
  EXPECT_EQ(x["sample"], y["sample"]) << x["op"] << " " << x["dtype"];
}

// Probes run in turns (Note [Probes in one turn] in probe/probe_op.cc, on CUDA; MPS_AUDIT_IN_TURNS=1 here) get the
// records they get one at a time, whatever fails in a turn: a crash, a hang and a fault caught are the probe's own
// (bool, which the CPU rejects for these operators, comes first in each turn, so they fail in its second probe),
// and a device left unusable in a turn makes its failed probes run again, each alone, where the one that broke the
// device is found out (Note [Turns that fail] in run/pool.cc).
TEST(CliRun, FailuresInATurnAreThoseOfTheProbesOneAtATime) {
  std::string faults =
      "MPS_AUDIT_EMU_FAULTS=aten::floor=crash,aten::ceil=hang,aten::abs=poison,aten::round=throw,aten::trunc=wrong";
#ifdef __linux__
  faults += ",aten::neg=touch";
#endif
  const std::vector<std::string> args = {"--ops",     "^aten::(abs|ceil|floor|neg|relu|round|sigmoid|trunc)$",
                                         "--dtypes",  "bool,float32,float16,int32",
                                         "-j",        "2",
                                         "--samples", "none",
                                         "--timeout", "2"};
  TempDir one_at_a_time, turns;
  const RunOutcome a = run_emulated(one_at_a_time, args, {faults, "MPS_AUDIT_IN_TURNS=0"});
  const RunOutcome b = run_emulated(turns, args, {faults, "MPS_AUDIT_IN_TURNS=1"});
  ASSERT_EQ(a.result.exit_code, 0) << a.result.err;
  ASSERT_EQ(b.result.exit_code, 0) << b.result.err;
  ASSERT_EQ(a.doc["results"].size(), 32u);
  ASSERT_EQ(b.doc["results"].size(), 32u);
  for (size_t i = 0; i < a.doc["results"].size(); ++i) {
    expect_same_record(a.doc["results"][i], b.doc["results"][i]);
  }
  for (const char* op : {"aten::abs", "aten::ceil", "aten::floor", "aten::relu", "aten::trunc"}) {
    EXPECT_EQ(verdict(b, op, "bool"), "skip") << op;
  }
  for (const char* dtype : {"float32", "float16", "int32"}) {
    EXPECT_EQ(verdict(b, "aten::floor", dtype), "crash") << dtype;
    EXPECT_EQ(verdict(b, "aten::ceil", dtype), "timeout") << dtype;
    EXPECT_EQ(verdict(b, "aten::abs", dtype), "error") << dtype;
    EXPECT_NE((*b.find("aten::abs", dtype))["message"].get<std::string>().find("the device was unusable after it"),
              std::string::npos);
    EXPECT_EQ(verdict(b, "aten::trunc", dtype), "mismatch") << dtype;
    EXPECT_EQ(verdict(b, "aten::relu", dtype), "pass") << dtype;
    EXPECT_EQ(verdict(b, "aten::sigmoid", dtype), "pass") << dtype;
  }
}

// However the probes are spread over workers, an idle one taking overloads from a busy one at the end (Note
// [Overloads for idle workers] in run/scheduler.cc), every record is the one a single worker makes: the memory of
// what the CPU took in an earlier dtype shows in messages ("the CPU takes this operator's inputs in float32 but not
// in bool"). Two workers: one takes sub, slowed down, and the other, done with abs, takes sub's overloads from it.
TEST(CliRun, RecordsAreTheSameWithOneWorkerOrTwo) {
  const std::vector<std::string> env = {"MPS_AUDIT_EMU_FAULTS=aten::sub=slow"};
  TempDir one, two;
  const RunOutcome a = run_emulated(one, {"--ops", "^aten::(abs|sub)(\\.|_|$)", "-j", "1"}, env);
  const RunOutcome b = run_emulated(two, {"--ops", "^aten::(abs|sub)(\\.|_|$)", "-j", "2"}, env);
  ASSERT_EQ(a.result.exit_code, 0) << a.result.err;
  ASSERT_EQ(b.result.exit_code, 0) << b.result.err;
  ASSERT_EQ(a.doc["results"].size(), b.doc["results"].size());
  size_t remembered = 0;
  for (size_t i = 0; i < a.doc["results"].size(); ++i) {
    const auto& x = a.doc["results"][i];
    expect_same_record(x, b.doc["results"][i]);
    remembered += x["message"].get<std::string>().find("the CPU takes this operator's inputs in") != std::string::npos;
  }
  EXPECT_GT(remembered, 0u);
}

// The operators of a journal, in the order their first records arrived.
std::vector<std::string> operators_in_arrival_order(const std::string& dir) {
  std::vector<std::string> ops;
  std::istringstream lines(testing::slurp(dir + "/journal.jsonl"));
  std::string line;
  while (std::getline(lines, line)) {
    const auto j = nlohmann::json::parse(line);
    if (!j.contains("op")) continue;
    const std::string op = j["op"];
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
  }
  return ops;
}

// In a folder with figures, the operators that crash their workers come last, and the work left there pays for no
// new worker while two others can take it (Note [Starts that pay] in run/scheduler.cc): one worker, or two, still
// record every probe as a run in a new folder does, and a worker starts whenever fewer than two are left. Records
// arrive in the order the work is handed out only with one worker: with two, the crashing operator, handed out last,
// may still report before the one handed out just before it, whose worker is slower (the Scheduler tests check the
// order of the work itself).
TEST(CliRun, WorkersThatDieAtTheEndAreReplacedOnlyWhenNoneIsLeft) {
  for (const char* jobs : {"1", "2"}) {
    SCOPED_TRACE(jobs);
    TempDir dir;
    const std::vector<std::string> args = {
        "--ops", "^aten::(abs|cos|tanh|sin)$", "--dtypes", "float32,float16,int32", "-j", jobs, "--samples", "none"};
    const std::vector<std::string> env = {"MPS_AUDIT_EMU_FAULTS=aten::cos=crash"};
    const RunOutcome first = run_emulated(dir, args, env);
    ASSERT_EQ(first.result.exit_code, 0) << first.result.err;
    const RunOutcome second = run_emulated(dir, args, env);  // ordered by the first run's figures
    ASSERT_EQ(second.result.exit_code, 0) << second.result.err;
    if (std::string(jobs) == "1") EXPECT_EQ(operators_in_arrival_order(dir.path()).back(), "aten::cos");
    for (const char* dtype : {"float32", "float16", "int32"}) {
      EXPECT_EQ(verdict(second, "aten::cos", dtype), "crash") << dtype;
      for (const char* op : {"aten::abs", "aten::tanh", "aten::sin"}) {
        EXPECT_EQ(verdict(second, op, dtype), "pass") << op << " " << dtype;
      }
    }
    EXPECT_EQ(second.doc["run"]["finished"], 12);
    ASSERT_EQ(first.doc["results"].size(), second.doc["results"].size());
    for (size_t i = 0; i < first.doc["results"].size(); ++i) {
      EXPECT_EQ(first.doc["results"][i]["verdict"], second.doc["results"][i]["verdict"]);
      EXPECT_EQ(first.doc["results"][i]["message"], second.doc["results"][i]["message"]);
    }
  }
}

// A run keeps every probe's seconds in its folder, and the next run there hands out the operators that took longest
// first (Note [Slowest operators first] in probe/probe_costs.cc); the records are the same.
TEST(CliRun, TheNextRunInAFolderBeginsWithTheOperatorsThatTookLongest) {
  TempDir dir;
  const std::vector<std::string> args = {"--ops", "^aten::(abs|neg|sub\\.Tensor)$", "--dtypes", "float32,int32", "-j",
                                         "1"};
  const std::vector<std::string> env = {"MPS_AUDIT_EMU_FAULTS=aten::sub=slow"};
  const RunOutcome first = run_emulated(dir, args, env);
  ASSERT_EQ(first.result.exit_code, 0) << first.result.err;
  // Without figures, plan order among operators with as many probes.
  EXPECT_EQ(operators_in_arrival_order(dir.path()),
            (std::vector<std::string>{"aten::abs", "aten::neg", "aten::sub.Tensor"}));
  const std::string costs = testing::slurp(dir.path() + "/.mps-audit-costs");
  EXPECT_EQ(costs.rfind("mps-audit probe costs 1 mps-emu\n", 0), 0u) << costs;
  EXPECT_NE(costs.find("aten::sub.Tensor\tint32\t"), std::string::npos) << costs;

  const RunOutcome second = run_emulated(dir, args, env);
  ASSERT_EQ(second.result.exit_code, 0) << second.result.err;
  EXPECT_EQ(operators_in_arrival_order(dir.path()).front(), "aten::sub.Tensor");
  // A new folder takes a baseline's figures (its records' seconds), as a clean clone in CI does.
  TempDir clean;
  std::vector<std::string> gated = args;
  gated.insert(gated.end(), {"--baseline", dir.path() + "/results.json"});
  const RunOutcome third = run_emulated(clean, gated, env);
  ASSERT_EQ(third.result.exit_code, 0) << third.result.err;
  EXPECT_EQ(operators_in_arrival_order(clean.path()).front(), "aten::sub.Tensor");
  ASSERT_EQ(first.doc["results"].size(), second.doc["results"].size());
  for (size_t i = 0; i < first.doc["results"].size(); ++i) {
    EXPECT_EQ(first.doc["results"][i]["op"], second.doc["results"][i]["op"]);  // reports keep plan order
    EXPECT_EQ(first.doc["results"][i]["verdict"], second.doc["results"][i]["verdict"]);
    EXPECT_EQ(first.doc["results"][i]["message"], second.doc["results"][i]["message"]);
  }
}

// A run in a new folder, without a baseline, takes the figures that come with the linked release's data folder for
// its target (Note [Slowest operators first] in probe/probe_costs.cc); another target's are not its.
TEST(CliRun, ANewFolderTakesTheFiguresThatComeWithTheRelease) {
  const std::string version = compat::kTorchVersion;
  const std::string release = "pytorch-" + version.substr(0, version.find_first_not_of("0123456789."));
  auto first_operator = [](const std::string& data_root) {
    TempDir dir;
    const testing::CommandResult r =
        run_mps_audit({"run", "--target", "cpu", "--spec", source_path("opspec.yaml"), "--ops",
                       "^aten::(abs|neg|sub\\.Tensor)$", "--dtypes", "float32,int32", "-j", "1", "--samples", "none",
                       "--format", "json", "--out", dir.path(), "--no-progress"},
                      {"MPS_AUDIT_DATA_DIR=" + data_root});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return operators_in_arrival_order(dir.path()).front();
  };
  TempDir data;
  make_directories(data.path() + "/" + release);
  EXPECT_EQ(first_operator(data.path()), "aten::abs");  // plan order: no figures anywhere
  data.write(release + "/probe-costs-cuda.txt", "mps-audit probe costs 1 cuda\naten::neg\tfloat32\t99\n");
  EXPECT_EQ(first_operator(data.path()), "aten::abs");  // another target's figures
  data.write(release + "/probe-costs-cpu.txt",
             "mps-audit probe costs 1 cpu\naten::abs\tfloat32\t0.001\naten::sub.Tensor\tint32\t9\n");
  EXPECT_EQ(first_operator(data.path()), "aten::sub.Tensor");
}

// The host block of a run's results and of its journal is what `mps-audit env` says of the machine, though the run
// itself never sets up a device (on Linux its workers are forks of it: Note [Forked workers] in run/worker_process.cc).
TEST(CliRun, TheHostBlockIsWhatEnvSays) {
  const testing::CommandResult env = run_mps_audit({"env", "--format", "json"}, {"PYTORCH_ENABLE_MPS_FALLBACK=1"});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  const auto host = nlohmann::json::parse(env.out);
  TempDir dir;
  const RunOutcome run = run_emulated(dir, {"--ops", "^aten::sin$", "--dtypes", "float32"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  std::istringstream journal(testing::slurp(dir.path() + "/journal.jsonl"));
  std::string identity, environment;
  std::getline(journal, identity);
  std::getline(journal, environment);
  const auto journaled = nlohmann::json::parse(environment);
  ASSERT_TRUE(journaled.contains("environment")) << environment;
  for (const char* key : {"os", "mps", "cuda", "targets", "torch_version"}) {
    EXPECT_EQ(run.doc["environment"][key], host[key]) << key;
    EXPECT_EQ(journaled["environment"][key], host[key]) << key;
  }
}

TEST(CliRun, SelfCheckOnCpuAndShapesOnMeta) {
  for (const char* target : {"cpu", "meta"}) {
    TempDir dir;
    auto r =
        run_mps_audit({"run", "--target", target, "--ops", "^aten::(sin|add\\.Tensor|mm)$", "--dtypes", "float32,int64",
                       "--spec", source_path("opspec.yaml"), "--out", dir.path(), "--no-progress"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(testing::slurp(dir.path() + "/results.json"));
    EXPECT_EQ(doc["environment"]["emulated"], false);
    EXPECT_EQ(doc["summary"]["pass"], doc["summary"]["total"]) << target << ": " << doc.dump(1);
  }
}

// Note [Condition samples]: on emulated MPS, whose kernels compute on the CPU, the samples derived to meet the
// conditions of known MPS bugs pass where their base does, and each record says what its samples were like.
TEST(CliRun, ConditionSamplesMeetTheirConditionsOnEmulatedMps) {
  TempDir dir;
  const RunOutcome run = run_emulated(dir, {"--ops", "^aten::(mul\\.Tensor|cumsum|index_select|mm)$", "--dtypes",
                                            "float32", "--samples", "none", "--expectations", "off"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  // What the samples of each condition were like, by condition (Note [Conditional failures]).
  const auto condition = [](const nlohmann::json& r, const char* name) {
    for (const auto& c : r["conditions"]) {
      if (c["condition"] == name) return c;
    }
    ADD_FAILURE() << r["op"] << " has no " << name << " sample: " << r.dump();
    return nlohmann::json::object();
  };
  const nlohmann::json& mul = *run.find("aten::mul.Tensor", "float32");
  EXPECT_EQ(mul["verdict"], "pass") << mul.dump();
  EXPECT_GT(mul["samples"].get<int>(), 1);
  for (const auto& c : mul["conditions"]) EXPECT_EQ(c["verdict"], "pass") << c.dump();
  EXPECT_EQ(condition(mul, "view")["traits"].value("non_contiguous", false), true);
  EXPECT_EQ(condition(mul, "view")["traits"].value("storage_offset", false), true);
  EXPECT_EQ(condition(mul, "cpu-scalar")["traits"].value("cpu_scalar", false), true);
  EXPECT_EQ(condition(mul, "rank5")["traits"]["max_rank"], 5);
  EXPECT_GT(condition(mul, "size32769")["traits"]["max_size"].get<int>(), 32768);
  EXPECT_EQ(mul["traits"]["max_rank"], 2);  // the record's own: its ordinary sample's
  // 1.13.1 runs cumsum.out on the CPU: the fallback, in every sample, rank 5 included.
  const nlohmann::json& cumsum = *run.find("aten::cumsum", "float32");
  EXPECT_EQ(cumsum["verdict"], "fallback") << cumsum.dump();
  EXPECT_EQ(condition(cumsum, "rank5")["verdict"], "fallback");
  EXPECT_EQ(condition(cumsum, "rank5")["traits"]["max_rank"], 5);
  EXPECT_EQ(condition(*run.find("aten::index_select", "float32"), "duplicate-indices")["traits"].value(
                "duplicate_indices", false),
            true);
  // A matrix product's operands differ in shape: views, but neither rank 5 nor long rows.
  const nlohmann::json& mm = *run.find("aten::mm", "float32");
  EXPECT_EQ(mm["verdict"], "pass");
  for (const auto& c : mm["conditions"]) EXPECT_NE(c["condition"], "rank5");
  EXPECT_EQ(condition(mm, "view")["traits"].value("non_contiguous", false), true);
}

// Note [A record rests on its own samples]: on macOS 13, MPS refuses complex tensors, and one of PyTorch 1.13.1's
// recorded float32 samples of mul has a complex operand. That sample is the float32 record's note, not its verdict; the
// complex64 record's own samples are refused, and decide it.
TEST(CliRun, ASampleRefusedForAnOperandOfAnotherDtypeIsTheRecordsNote) {
  TempDir dir;
  const RunOutcome run =
      run_emulated(dir, {"--ops", "^aten::mul\\.Tensor$", "--dtypes", "float32,complex64", "--emu-macos", "13",
                         "--expectations", "off", "--samples", source_path("data/pytorch-1.13.1/samples.pt")});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  const nlohmann::json& real = *run.find("aten::mul.Tensor", "float32");
  EXPECT_EQ(real["verdict"], "pass") << real.dump();
  // The recorded sample with a complex operand, and a known bug's own call with one (a condition sample's note).
  ASSERT_GE(real["sample_notes"].size(), 1u) << real.dump();
  for (const std::string note : real["sample_notes"]) {
    EXPECT_EQ(note.rfind("sample ", 0), 0u) << note;
    EXPECT_NE(note.find(": unsupported: MPS complex types are only supported on MacOS 14.0 or newer"),
              std::string::npos)
        << note;
  }
  const nlohmann::json& complex = *run.find("aten::mul.Tensor", "complex64");
  EXPECT_EQ(complex["verdict"], "unsupported") << complex.dump();
  EXPECT_FALSE(complex.contains("sample_notes")) << complex.dump();
}

TEST(CliRun, BadInputGivesOneDiagnosticAndNoReport) {
  TempDir dir;
  auto expect_error = [&](std::vector<std::string> args, const std::string& start) {
    std::vector<std::string> all = {"run", "--out", dir.path() + "/out", "--no-progress"};
    all.insert(all.end(), args.begin(), args.end());
    auto r = run_mps_audit(all);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.rfind(start, 0), 0u) << r.err;
    EXPECT_EQ(r.err.find("error:", 1), std::string::npos) << r.err;
    EXPECT_FALSE(path_exists(dir.path() + "/out/results.json"));
  };
  const std::string spec = source_path("opspec.yaml");
  expect_error(
      {"--target", "mps-emux", "--spec", spec},
      "error: --target mps-emux: expected one of auto, mps, mps-emu, cuda, cpu, meta (did you mean 'mps-emu'?)");
  expect_error({"--dtypes", "flaot32", "--spec", spec},
               "error: --dtypes flaot32: expected one of float32, float16, bfloat16, float64, int64, int32, int16, "
               "int8, uint8, bool, complex64, complex128 (did you mean 'float32'?)");
  expect_error({"--ops", "sin(", "--spec", spec}, "error: --ops: invalid regular expression 'sin('");
  expect_error({"--ops", "^nothing$", "--spec", spec, "--target", "cpu"}, "error: no operator matches --ops");
  expect_error({"--spec", dir.path() + "/missing.yaml"}, "error: " + dir.path() + "/missing.yaml: cannot read file");
  const std::string bad = dir.write("bad.yaml", "version: 1\nops:\n  aten::sinn: {compare: shape}\n");
  expect_error({"--spec", bad}, "error: " + bad + ":3:3: unknown operator 'aten::sinn' (did you mean ");
}

// A limit of MPS (data/mps_limits.yaml, Note [MPS limits] in emu/mps_limits.cc) is met by every call of the operators
// whose kernels reach it, in the releases whose kernels do: cumprod along dim 0 of its rank-5 condition sample is a
// crash under that condition, with the limit, what met it and its source named, and cumprod stays a pass for
// ordinary inputs; emulated 2.6.0, before the first release the threads show it in, has no such crash.
TEST(CliRun, ALimitOfMpsIsACrashOfEveryCallThatMeetsIt) {
  const auto emulated = [](const TempDir& dir, const std::string& release) {
    RunOutcome run;
    run.result = run_mps_audit({"run", "--target", "mps-emu", "--emu-release", release, "--ops", "^aten::cumprod$",
                                "--dtypes", "float32", "--out", dir.path(), "--no-progress", "--format", "json"});
    if (path_exists(dir.path() + "/results.json")) {
      run.doc = nlohmann::json::parse(testing::slurp(dir.path() + "/results.json"));
    }
    return run;
  };
  const auto rank5 = [](const RunOutcome& run) -> const nlohmann::json* {
    const nlohmann::json* r = run.find("aten::cumprod", "float32");
    if (!r) return nullptr;
    for (const auto& c : (*r)["conditions"]) {
      if (c["condition"] == "rank5") return &c;
    }
    return nullptr;
  };
  TempDir newer, older;
  const RunOutcome with_limit = emulated(newer, "2.14.1");
  ASSERT_EQ(with_limit.result.exit_code, 0) << with_limit.result.err;
  EXPECT_EQ(verdict(with_limit, "aten::cumprod", "float32"), "pass");
  const nlohmann::json* c = rank5(with_limit);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["verdict"], "crash");
  EXPECT_EQ((*c)["basis"], "mps_limits");
  const std::string message = (*c)["message"];
  EXPECT_NE(message.find("emulated MPS limit ndarray-scan-sort-axis: dim 0 of a rank-5 tensor"), std::string::npos)
      << message;
  EXPECT_NE(message.find("MPSNDArrayScan.mm"), std::string::npos) << message;

  const RunOutcome before = emulated(older, "2.6.0");
  ASSERT_EQ(before.result.exit_code, 0) << before.result.err;
  const nlohmann::json* b = rank5(before);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ((*b)["verdict"], "pass");
}

// A limit at which a Mac's kernel raises: the Mac's error or refusal, resting on the limit, in the releases and macOS
// versions that have it. 1.13's topk refuses k > 16 (the thread's own call, arange(30).topk(30)); a convolution with
// an output over 65,536 in a dimension is refused on macOS before 15.1, not after.
TEST(CliRun, ALimitAtWhichAMacRaisesIsItsErrorAndRestsOnTheLimit) {
  const auto emulated = [](const TempDir& dir, const std::string& release, const std::string& op,
                           const std::string& macos) {
    RunOutcome run;
    std::vector<std::string> args = {
        "run",      "--target",      "mps-emu", "--emu-release", release,         "--ops",    op,
        "--dtypes", "float32,int64", "--out",   dir.path(),      "--no-progress", "--format", "json"};
    if (!macos.empty()) args.insert(args.end(), {"--emu-macos", macos});
    run.result = run_mps_audit(args);
    if (path_exists(dir.path() + "/results.json")) {
      run.doc = nlohmann::json::parse(testing::slurp(dir.path() + "/results.json"));
    }
    return run;
  };
  // The condition outcome of `record` whose message names `limit`; null where none does.
  const auto meeting = [](const nlohmann::json* record, const std::string& limit) -> const nlohmann::json* {
    if (!record) return nullptr;
    for (const auto& c : (*record)["conditions"]) {
      if (c.value("message", "").find("emulated MPS limit " + limit + ":") != std::string::npos) return &c;
    }
    return nullptr;
  };
  TempDir old_topk, new_topk, conv_14, conv_15;
  const RunOutcome in_113 = emulated(old_topk, "1.13.1", "^aten::topk$", "");
  ASSERT_EQ(in_113.result.exit_code, 0) << in_113.result.err;
  const nlohmann::json* c = meeting(in_113.find("aten::topk", "int64"), "topk-k-16");
  ASSERT_NE(c, nullptr) << in_113.doc.dump();
  EXPECT_EQ((*c)["verdict"], "error");
  EXPECT_EQ((*c)["basis"], "mps_limits");
  const std::string message = (*c)["message"];
  EXPECT_EQ(message.rfind("Currently topk on mps works only for k<=16", 0), 0u) << message;
  EXPECT_NE(message.find("(emulated MPS limit topk-k-16: k 30;"), std::string::npos) << message;
  EXPECT_EQ(verdict(in_113, "aten::topk", "float32"), "pass");  // its own samples take k within the limit
  const RunOutcome in_20 = emulated(new_topk, "2.6.0", "^aten::topk$", "");
  ASSERT_EQ(in_20.result.exit_code, 0) << in_20.result.err;
  EXPECT_EQ(meeting(in_20.find("aten::topk", "int64"), "topk-k-16"), nullptr);

  const RunOutcome before = emulated(conv_14, "2.14.1", "^aten::conv1d$", "14");
  ASSERT_EQ(before.result.exit_code, 0) << before.result.err;
  const nlohmann::json* conv = meeting(before.find("aten::conv1d", "float32"), "conv-output-dim-65536-not-3d");
  ASSERT_NE(conv, nullptr) << before.doc.dump();
  EXPECT_EQ((*conv)["verdict"], "unsupported");
  EXPECT_EQ((*conv)["basis"], "mps_limits");
  EXPECT_EQ(verdict(before, "aten::conv1d", "float32"), "pass");
  const RunOutcome after = emulated(conv_15, "2.14.1", "^aten::conv1d$", "15.1");
  ASSERT_EQ(after.result.exit_code, 0) << after.result.err;
  EXPECT_EQ(meeting(after.find("aten::conv1d", "float32"), "conv-output-dim-65536-not-3d"), nullptr);
}

// A broken file of limits is bad input: one line with its place, exit 2, and no run folder, before any probe.
TEST(CliRun, ABrokenFileOfLimitsStopsTheRunBeforeItBegins) {
  TempDir data, out;
  write_file_atomically(data.path() + "/mps_limits.yaml",
                        "format: mps-audit-mps-limits/1\nlimits:\n  - id: x\n    outcome: explode\n");
  const auto r =
      run_mps_audit({"run", "--target", "mps-emu", "--emu-release", source_path("data/pytorch-2.14.1"), "--ops",
                     "^aten::abs$", "--dtypes", "float32", "--out", out.path() + "/run", "--no-progress"},
                    {"MPS_AUDIT_DATA_DIR=" + data.path()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("error: " + data.path() + "/mps_limits.yaml:3:5: entry has no 'summary'"), std::string::npos)
      << r.err;
  EXPECT_FALSE(path_exists(out.path() + "/run"));
}

}  // namespace
}  // namespace mps_audit
