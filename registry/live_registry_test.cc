// Tests of the live classification against the linked libtorch, and against the static reading of the
// same release where its data ships in data/.
#include "registry/live_registry.h"

#include <algorithm>
#include <regex>

#include <gtest/gtest.h>

#include "common/paths.h"
#include "common/torch_info.h"
#include "registry/extra_registrations.h"
#include "registry/native_functions.h"
#include "registry/release_data.h"
#include "registry/static_registry.h"
#include "test_support.h"

namespace mps_audit {
namespace {

TEST(LiveRegistry, ClassifiesWellKnownCpuOperators) {
  const Registry cpu = scan_live_dispatcher("CPU");
  EXPECT_GT(cpu.ops.size(), 2000u);
  ASSERT_NE(cpu.find("aten::add.Tensor"), nullptr);
  EXPECT_EQ(cpu.find("aten::add.Tensor")->status, OpStatus::kNative);
  EXPECT_NE(cpu.find("aten::add.Tensor")->schema.find("add.Tensor(Tensor self, Tensor other"), std::string::npos);
  EXPECT_EQ(cpu.find("aten::linear")->status, OpStatus::kCompositeImplicit);
  EXPECT_EQ(cpu.find("aten::sin")->status, OpStatus::kNative);
  EXPECT_EQ(cpu.torch_version, linked_torch_info().version);
}

TEST(LiveRegistry, RejectsUnknownKeysWithASuggestion) {
  try {
    scan_live_dispatcher("MSP");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(format_diagnostic(e), "error: unknown dispatch key 'MSP' (did you mean 'MPS'?)");
  }
}

TEST(LiveRegistry, HandRegistrationsRefineOnlyRegisteredKernels) {
  std::vector<ExtraRegistration> extra = {{"aten::nonzero", ExtraKind::kCpuFallback, {"x.tsv", 1, 1}},
                                          {"aten::linear", ExtraKind::kCpuFallback, {"x.tsv", 2, 1}}};
  const Registry cpu = scan_live_dispatcher("CPU", extra);
  EXPECT_EQ(cpu.find("aten::nonzero")->status, OpStatus::kCpuFallback);
  EXPECT_EQ(cpu.find("aten::linear")->status, OpStatus::kCompositeImplicit);  // no CPU kernel to refine
}

// The release folder under data/ for the linked libtorch (same major.minor), if any.
std::string linked_release_dir() {
  const std::string version = linked_torch_info().version;
  std::smatch m;
  if (!std::regex_search(version, m, std::regex(R"(^(\d+\.\d+)\.)"))) return "";
  for (const auto& name : list_directory(testing::source_path("data"))) {
    if (name.rfind("pytorch-" + m[1].str() + ".", 0) == 0) return testing::source_path("data/" + name);
  }
  return "";
}

// The static reading of a release and the live dispatcher of the same release agree on every operator the YAML
// declares, for the backends this libtorch was built with.
TEST(LiveRegistry, AgreesWithTheStaticReadingOfTheSameRelease) {
  const std::string dir = linked_release_dir();
  if (dir.empty()) GTEST_SKIP() << "no data/ folder for libtorch " << linked_torch_info().version;
  const auto decls = read_native_functions(dir + "/native_functions.yaml");
  std::vector<std::string> keys = {"CPU", "Meta"};
  if (linked_torch_info().has_cuda) keys.push_back("CUDA");
  for (const auto& key : keys) {
    const Registry live = scan_live_dispatcher(key);
    const Registry declared = classify_native_functions(decls, {}, key);
    // Kernels registered by hand outside the YAML, listed in the release folder, may or may not be in this build
    // (a Meta kernel in libtorch_cuda, say): the live dispatcher may have them, the YAML never does.
    std::vector<std::string> by_hand;
    const std::string tsv = join_path(dir, extra_registrations_file(key));
    if (path_exists(tsv)) {
      for (const auto& r : read_extra_registrations(tsv)) by_hand.push_back(r.op);
    }
    size_t disagreements = 0;
    for (const auto& e : declared.ops) {
      const RegistryEntry* l = live.find(e.name);
      ASSERT_NE(l, nullptr) << e.name << " is declared but not in the dispatcher";
      const bool hand_registered = std::find(by_hand.begin(), by_hand.end(), e.name) != by_hand.end();
      if (l->status != e.status && !hand_registered && ++disagreements <= 20) {
        ADD_FAILURE() << key << " " << e.name << ": static " << to_string(e.status) << ", live "
                      << to_string(l->status);
      }
    }
    EXPECT_EQ(disagreements, 0u) << key;
  }
}

}  // namespace
}  // namespace mps_audit
