// Tests of a run's flags, checked once into a typed request (run/request.h).
#include "run/request.h"

#include <gtest/gtest.h>

#include "common/data_home.h"
#include "common/diagnostics.h"

namespace mps_audit {
namespace {

RunOptions emulated() {
  RunOptions o;
  o.target.target = "mps-emu";
  return o;
}

TEST(RunRequest, EveryFlagIsCheckedOnceIntoTypedValues) {
  RunOptions o = emulated();
  o.target.emu_release = "2.6.0";
  o.ops = "^aten::(abs|neg)$";
  o.shard = "2/3";
  o.jobs = 3;
  o.expectations = "off";
  o.samples = "none";
  const RunRequest r = check_run_options(o);
  EXPECT_TRUE(r.target.emulated());
  EXPECT_EQ(r.target.emu.release_version, "2.6.0");
  EXPECT_EQ(r.requested_target, "mps-emu");
  EXPECT_EQ(r.target_choice, "");
  EXPECT_TRUE(std::regex_search("aten::neg", r.filter));
  EXPECT_FALSE(std::regex_search("aten::sin", r.filter));
  EXPECT_EQ(r.shard.index, 2u);
  EXPECT_EQ(r.shard.count, 3u);
  EXPECT_EQ(r.jobs, 3u);
  EXPECT_EQ(r.expectations, emu::ExpectationMode::kOff);
  EXPECT_EQ(r.samples, "none");
  EXPECT_EQ(r.spec, default_spec_path());  // the default, when none is named
}

TEST(RunRequest, AutoExpectationsFollowTheTarget) {
  EXPECT_EQ(check_run_options(emulated()).expectations, emu::ExpectationMode::kPredict);
  RunOptions cpu;
  cpu.target.target = "cpu";
  EXPECT_EQ(check_run_options(cpu).expectations, emu::ExpectationMode::kOff);
  cpu.expectations = "predict";
  EXPECT_THROW(check_run_options(cpu), UserError);  // PyTorch's expectations are of MPS
}

TEST(RunRequest, EachBadFlagIsAUserErrorNamingIt) {
  const auto refused = [](auto change) {
    RunOptions o = emulated();
    change(o);
    try {
      check_run_options(o);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refused([](RunOptions& o) { o.fallback = "maybe"; }).find("--fallback"), std::string::npos);
  EXPECT_NE(refused([](RunOptions& o) { o.dtypes = {"float33"}; }).find("--dtypes"), std::string::npos);
  EXPECT_NE(refused([](RunOptions& o) { o.timeout_s = 0; }).find("--timeout"), std::string::npos);
  EXPECT_NE(refused([](RunOptions& o) { o.jobs = 0; }).find("--jobs"), std::string::npos);
  EXPECT_NE(refused([](RunOptions& o) { o.ops = "(unclosed"; }).find("--ops"), std::string::npos);
  EXPECT_NE(refused([](RunOptions& o) { o.shard = "4/3"; }), "accepted");
  EXPECT_NE(refused([](RunOptions& o) { o.samples = "/no/such/recording.jsonl"; }).find("--samples"),
            std::string::npos);
  EXPECT_NE(refused([](RunOptions& o) { o.target.emu_macos = "9.0"; }).find("--emu-macos"), std::string::npos);
  EXPECT_NE(refused([](RunOptions& o) { o.target.target = "npu"; }).find("--target"), std::string::npos);
}

}  // namespace
}  // namespace mps_audit
