// End-to-end tests of the mps-audit binary: exit codes, diagnostics on standard error, outputs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/paths.h"
#include "test_support.h"

namespace mps_audit {
namespace {

using testing::run_mps_audit;
using testing::source_path;
using testing::TempDir;

// A diagnostic is exactly one line starting with "error: ".
void expect_one_diagnostic(const testing::CommandResult& r, const std::string& expected_start) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind(expected_start, 0), 0u) << r.err;
  EXPECT_EQ(r.err.find("error:", 1), std::string::npos) << "more than one diagnostic: " << r.err;
}

TEST(Cli, HelpAndVersionExitZero) {
  auto help = run_mps_audit({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("registry"), std::string::npos);
  auto version = run_mps_audit({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("mps-audit ", 0), 0u) << version.out;
  EXPECT_NE(version.out.find("libtorch"), std::string::npos);
}

TEST(Cli, RegistrySummaryStatesItsDenominator) {
  auto r = run_mps_audit({"registry", "--native-functions", source_path("data/pytorch-2.11.0")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("MPS: native_functions.yaml of PyTorch 2.11.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3194 operators, each classified for dispatch key MPS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu_fallback"), std::string::npos);
}

TEST(Cli, RegistryJsonToAFile) {
  TempDir dir;
  const std::string path = dir.path() + "/reg.json";
  auto r = run_mps_audit(
      {"registry", "--native-functions", source_path("data/pytorch-1.13.1"), "--format", "json", "-o", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const auto doc = nlohmann::json::parse(testing::slurp(path));
  bool nonzero_seen = false;
  for (const auto& op : doc["ops"]) {
    if (op["name"] == "aten::nonzero") {
      EXPECT_EQ(op["status"], "cpu_fallback");  // from the folder's mps_extra_registrations.tsv
      nonzero_seen = true;
    }
  }
  EXPECT_TRUE(nonzero_seen);
  EXPECT_EQ(doc["source"]["torch_version"], "1.13.1");
}

TEST(Cli, ReleaseFolderSuppliesTheKeysOwnHandRegistrations) {
  auto meta = run_mps_audit({"registry", "--native-functions", source_path("data/pytorch-2.11.0"), "--key", "Meta",
                             "--format", "json", "--status", "native"});
  ASSERT_EQ(meta.exit_code, 0) << meta.err;
  const auto doc = nlohmann::json::parse(meta.out);
  EXPECT_NE(doc["source"]["extra_registrations"].get<std::string>().find("meta_extra_registrations.tsv"),
            std::string::npos);
  bool found = false;
  for (const auto& op : doc["ops"]) found |= op["name"] == "aten::_cudnn_rnn_flatten_weight";
  EXPECT_TRUE(found);
  auto cpu = run_mps_audit(
      {"registry", "--native-functions", source_path("data/pytorch-2.11.0"), "--key", "CPU", "--format", "json"});
  EXPECT_TRUE(nlohmann::json::parse(cpu.out)["source"]["extra_registrations"].is_null());
}

TEST(Cli, LiveRegistryListsChosenStatuses) {
  auto r = run_mps_audit({"registry", "--key", "CPU", "--status", "native"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("the live dispatcher of libtorch"), std::string::npos);
  EXPECT_NE(r.out.find("\nnative              aten::add.Tensor\n"), std::string::npos);
  EXPECT_EQ(r.out.find("composite_implicit  aten::linear"), std::string::npos);
}

TEST(Cli, DiffBetweenReleasesAndTheLostGate) {
  const std::string v1 = source_path("data/pytorch-1.13.1"), v2 = source_path("data/pytorch-2.11.0");
  auto r = run_mps_audit({"registry", "diff", v1, v2, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_GT(doc["summary"]["gained"].get<int>(), 100);
  bool sgn_out_gained = false;  // a CPU fallback in 1.13.1, a real kernel in 2.11.0
  for (const auto& c : doc["gained"]) sgn_out_gained |= c["name"] == "aten::sgn.out" && c["old"] == "cpu_fallback";
  EXPECT_TRUE(sgn_out_gained);

  auto backwards = run_mps_audit({"registry", "diff", v2, v1, "--fail-on-lost"});
  EXPECT_EQ(backwards.exit_code, 1) << backwards.err;
  EXPECT_NE(backwards.out.find("Lost ("), std::string::npos);
  auto same = run_mps_audit({"registry", "diff", v1, v1, "--fail-on-lost"});
  EXPECT_EQ(same.exit_code, 0);
}

TEST(Cli, BadInputGivesOneDiagnosticAndExitTwo) {
  TempDir dir;
  expect_one_diagnostic(run_mps_audit({"registry", "--key", "MSP"}),
                        "error: unknown dispatch key 'MSP' (did you mean 'MPS'?)");
  expect_one_diagnostic(run_mps_audit({"registry", "--native-functions", dir.path() + "/missing.yaml"}),
                        "error: " + dir.path() + "/missing.yaml: no such file or directory");
  expect_one_diagnostic(run_mps_audit({"registry", "--native-functions", dir.path()}),
                        "error: " + dir.path() + ": folder has no native_functions.yaml");
  const std::string broken = dir.write("broken.yaml", "- func: a() -> Tensor\n  dispatch: {CPU: x\n");
  expect_one_diagnostic(run_mps_audit({"registry", "--native-functions", broken}), "error: " + broken + ":3:1: ");
  const std::string shape = dir.write("shape.yaml", "- func: a() -> Tensor\n  dispatch: CPU\n");
  expect_one_diagnostic(run_mps_audit({"registry", "--native-functions", shape}),
                        "error: " + shape + ":2:13: 'dispatch' must map dispatch keys to kernels");
  const std::string tsv = dir.write("extra.tsv", "nonzero\tcpu_falback\n");
  expect_one_diagnostic(run_mps_audit({"registry", "--native-functions", source_path("data/pytorch-1.13.1"),
                                       "--extra-registrations", tsv}),
                        "error: " + tsv + ":1:9: unknown kind 'cpu_falback'");
  expect_one_diagnostic(
      run_mps_audit({"registry", "--native-functions", source_path("data/pytorch-1.13.1"), "--key", "Vulkan_"}),
      "error: unknown dispatch key 'Vulkan_' (did you mean 'Vulkan'?)");
  expect_one_diagnostic(run_mps_audit({"registry", "--format", "xml"}),
                        "error: --format xml: expected text, json or md");
  expect_one_diagnostic(run_mps_audit({"registry", "--status", "nativ"}),
                        "error: --status nativ: expected native, cpu_fallback, composite_explicit, composite_implicit "
                        "or none (did you mean 'native'?)");
  expect_one_diagnostic(run_mps_audit({"registry", "--bogus"}), "error: ");
  expect_one_diagnostic(run_mps_audit({}), "error: ");
}

TEST(Cli, AFailedRunLeavesNoOutputFile) {
  TempDir dir;
  const std::string out = dir.path() + "/reg.json";
  auto r = run_mps_audit({"registry", "--key", "MSP", "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(path_exists(out));
}

}  // namespace
}  // namespace mps_audit
