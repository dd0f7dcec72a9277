// Tests of the target as a value (common/target.h) and of what --target and the emulation flags make of it here.
#include "targets/targets.h"

#include <gtest/gtest.h>

#include "common/diagnostics.h"
#include "common/torch_info.h"
#include "results/results_file.h"

namespace mps_audit {
namespace {

TEST(Target, EachKindHasOneNameDeviceAndBackend) {
  for (const std::string& name : target_names()) {
    const std::optional<TargetKind> kind = target_kind_named(name);
    ASSERT_TRUE(kind) << name;
    EXPECT_EQ(to_string(*kind), name);
  }
  EXPECT_FALSE(target_kind_named("auto"));
  EXPECT_FALSE(target_kind_named("MPS"));
  const Target emulated{TargetKind::kMpsEmu, {}}, mps{TargetKind::kMps, {}}, cuda{TargetKind::kCuda, {}},
      meta{TargetKind::kMeta, {}}, cpu{TargetKind::kCpu, {}};
  EXPECT_EQ(emulated.device(), c10::Device(c10::DeviceType::MPS, 0));
  EXPECT_EQ(mps.device(), c10::Device(c10::DeviceType::MPS, 0));
  EXPECT_EQ(cuda.device(), c10::Device(c10::DeviceType::CUDA, 0));
  EXPECT_EQ(meta.device(), c10::Device(c10::DeviceType::Meta));
  EXPECT_EQ(cpu.device(), c10::Device(c10::DeviceType::CPU));
  EXPECT_EQ(emulated.backend(), "MPS");
  EXPECT_EQ(mps.backend(), "MPS");
  EXPECT_EQ(cuda.backend(), "CUDA");
  EXPECT_EQ(meta.backend(), "Meta");
  EXPECT_EQ(cpu.backend(), "CPU");
  EXPECT_TRUE(emulated.mps() && emulated.emulated() && !emulated.real_mps());
  EXPECT_TRUE(mps.mps() && mps.real_mps() && !mps.emulated());
  EXPECT_FALSE(cuda.mps());
}

TEST(MakeTarget, AutoTakesTheFirstBackendThisLibtorchHasAndSaysSo) {
  std::string why;
  const Target t = make_target({}, why);
  const TorchInfo torch = linked_torch_info();
  const TargetKind expected = torch.has_mps    ? TargetKind::kMps
                              : torch.has_cuda ? TargetKind::kCuda
                                               : TargetKind::kMpsEmu;
  EXPECT_EQ(t.kind, expected);
  EXPECT_NE(why.find(std::string("auto picked ") + std::string(to_string(expected))), std::string::npos) << why;
  std::string named_why;
  make_target({"cpu", "", "", "any"}, named_why);
  EXPECT_EQ(named_why, "");  // a named target needs no explanation
}

TEST(MakeTarget, AnEmulatedTargetCarriesItsReleaseMacosAndChip) {
  std::string why;
  const Target t = make_target({"mps-emu", "2.6.0", "13.3", "m2"}, why);
  EXPECT_TRUE(t.emulated());
  EXPECT_NE(t.emu.release_dir.find("pytorch-2.6.0"), std::string::npos) << t.emu.release_dir;
  EXPECT_EQ(t.emu.release_version, "2.6.0");
  EXPECT_EQ(t.emu.macos, "13.3");
  EXPECT_EQ(t.emu.chip, "m2");
  // Another target keeps no emulation settings, though the flags are still checked.
  const Target cpu = make_target({"cpu", "2.6.0", "13.3", "m2"}, why);
  EXPECT_EQ(cpu.emu.release_dir, "");
  EXPECT_THROW(make_target({"cpu", "", "13.x", "any"}, why), UserError);
}

TEST(MakeTarget, BadValuesAreUserErrors) {
  std::string why;
  EXPECT_THROW(make_target({"mps-emulated", "", "", "any"}, why), UserError);
  EXPECT_THROW(make_target({"mps-emu", "", "9.0", "any"}, why), UserError);
  EXPECT_THROW(make_target({"mps-emu", "", "", "m9"}, why), UserError);
  EXPECT_THROW(make_target({"mps-emu", "0.0.1", "", "any"}, why), UserError);
  EXPECT_THROW(check_target_request({"nonsense", "", "", "any"}), UserError);
  if (!linked_torch_info().has_cuda) EXPECT_THROW(make_target({"cuda", "", "", "any"}, why), UserError);
  if (!linked_torch_info().has_mps) EXPECT_THROW(make_target({"mps", "", "", "any"}, why), UserError);
}

TEST(MakeModelTarget, RefusesMetaAndTargetsThatDoNotWorkHere) {
  RunEnvironment host;
  host.targets = {{"cpu", {}, {}}, {"mps-emu", {}, {}}, {"meta", {}, {}}};
  EXPECT_EQ(make_model_target({"auto", "", "", "any"}, host).kind, TargetKind::kMpsEmu);
  host.cuda_available = true;
  EXPECT_EQ(make_model_target({"auto", "", "", "any"}, host).kind, TargetKind::kCuda);
  EXPECT_EQ(make_model_target({"cpu", "", "", "any"}, host).kind, TargetKind::kCpu);
  EXPECT_THROW(make_model_target({"meta", "", "", "any"}, host), UserError);
  host.targets = {{"cpu", {}, {}}};
  EXPECT_THROW(make_model_target({"mps-emu", "", "", "any"}, host), UserError);
}

}  // namespace
}  // namespace mps_audit
