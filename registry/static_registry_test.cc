// Tests of the static classification: each rule on a small YAML, then the shipped releases against torchgen's
// own answers and against a recorded live dispatcher (tests/data/README.md says where those came from).
#include "registry/static_registry.h"

#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace mps_audit {
namespace {

const char* const kYaml = R"(
- func: direct(Tensor self) -> Tensor
  dispatch:
    CPU, MPS: direct_kernel
- func: sin(Tensor self) -> Tensor
  structured_delegate: sin.out
- func: sin_(Tensor(a!) self) -> Tensor(a!)
  structured_delegate: sin.out
- func: sin.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    MPS: sin_out_mps
- func: cos(Tensor self) -> Tensor
  structured_delegate: cos.out
- func: cos.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: cos_out
- func: explicit(Tensor self) -> Tensor
  dispatch:
    CompositeExplicitAutograd: explicit_kernel
  autogen: explicit.out
- func: nonfunctional(Tensor self) -> Tensor
  dispatch:
    CompositeExplicitAutogradNonFunctional: nf_kernel
- func: implied(Tensor self) -> Tensor
- func: implied_core(Tensor self) -> Tensor
  tags: core
  autogen: implied_core.out
- func: implied_other(Tensor self) -> Tensor
  autogen: implied_other.out
- func: declared_implicit(Tensor self) -> Tensor
  dispatch:
    CompositeImplicitAutograd: di_kernel
- func: manual(Tensor self) -> Tensor
  manual_kernel_registration: True
- func: cpu_only(Tensor self) -> Tensor
  dispatch:
    CPU: cpu_only_kernel
- func: inplace_only_(Tensor(a!) self) -> Tensor(a!)
  dispatch:
    CPU: ioc
- func: nonzero(Tensor self) -> Tensor
  dispatch:
    CPU: nonzero_cpu
)";

Registry classify_yaml(const std::string& key, const std::vector<ExtraRegistration>& extra = {}) {
  return classify_native_functions(parse_native_functions(kYaml, "nf.yaml"), extra, key);
}

std::string status_of(const Registry& reg, const std::string& name) {
  const RegistryEntry* e = reg.find(name);
  return e ? std::string(to_string(e->status)) : "absent";
}

TEST(StaticRegistry, FollowsTheDispatchersPrecedence) {
  const Registry mps = classify_yaml("MPS");
  EXPECT_EQ(status_of(mps, "aten::direct"), "native");
  EXPECT_EQ(mps.find("aten::direct")->kernel, "direct_kernel");
  EXPECT_EQ(status_of(mps, "aten::sin"), "native");  // structured delegate resolved to sin.out's kernel
  EXPECT_EQ(mps.find("aten::sin")->kernel, "sin_out_mps");
  EXPECT_EQ(status_of(mps, "aten::sin_"), "native");
  EXPECT_EQ(status_of(mps, "aten::sin.out"), "native");
  EXPECT_EQ(status_of(mps, "aten::cos"), "composite_explicit");  // generated CompositeExplicitAutogradNonFunctional
  EXPECT_EQ(status_of(mps, "aten::cos.out"), "none");            // torchgen never generates an out= default
  EXPECT_EQ(status_of(mps, "aten::explicit"), "composite_explicit");
  EXPECT_EQ(status_of(mps, "aten::explicit.out"), "composite_explicit");  // autogen'd
  EXPECT_EQ(status_of(mps, "aten::nonfunctional"), "composite_explicit");
  EXPECT_EQ(status_of(mps, "aten::implied"), "composite_implicit");
  EXPECT_EQ(status_of(mps, "aten::implied_core.out"), "composite_explicit");  // core ops still get autogen
  EXPECT_EQ(status_of(mps, "aten::implied_other.out"), "absent");             // other implicit ones do not
  EXPECT_EQ(status_of(mps, "aten::declared_implicit"), "composite_implicit");
  EXPECT_EQ(status_of(mps, "aten::manual"), "none");
  EXPECT_EQ(status_of(mps, "aten::cpu_only"), "none");
  EXPECT_EQ(mps.ops.size(), 18u);
}

TEST(StaticRegistry, GeneratesMetaKernelsLikeTorchgen) {
  const Registry meta = classify_yaml("Meta");
  EXPECT_EQ(status_of(meta, "aten::sin"), "native");
  EXPECT_EQ(status_of(meta, "aten::cos.out"), "native");
  EXPECT_EQ(status_of(meta, "aten::inplace_only_"), "native");  // generated in-place Meta wrapper
  EXPECT_EQ(status_of(meta, "aten::direct"), "none");
}

TEST(StaticRegistry, AppliesHandRegistrations) {
  std::vector<ExtraRegistration> extra = {{"aten::nonzero", ExtraKind::kCpuFallback, {"x.tsv", 3, 1}},
                                          {"aten::cpu_only", ExtraKind::kNative, {"x.tsv", 4, 1}},
                                          {"aten::implied", ExtraKind::kStub, {"x.tsv", 5, 1}}};
  const Registry mps = classify_yaml("MPS", extra);
  EXPECT_EQ(status_of(mps, "aten::nonzero"), "cpu_fallback");
  EXPECT_EQ(mps.find("aten::nonzero")->source, "x.tsv:3:1");
  EXPECT_EQ(status_of(mps, "aten::cpu_only"), "native");
  EXPECT_EQ(status_of(mps, "aten::implied"), "native");
  EXPECT_NE(mps.find("aten::implied")->note.find("stub"), std::string::npos);

  extra = {{"aten::nonzer", ExtraKind::kCpuFallback, {"x.tsv", 7, 1}}};
  try {
    classify_yaml("MPS", extra);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(format_diagnostic(e),
              "error: x.tsv:7:1: unknown operator 'aten::nonzer' (did you mean 'aten::nonzero'?)");
  }
}

nlohmann::json load_json(const std::string& relative) {
  return nlohmann::json::parse(testing::slurp(testing::source_path(relative)));
}

Registry classify_release(const std::string& release, const std::string& key) {
  return classify_native_functions(
      read_native_functions(testing::source_path("data/pytorch-" + release + "/native_functions.yaml")), {}, key);
}

class ShippedRelease : public ::testing::TestWithParam<const char*> {};

// The exactness requirement: the operator set and the MPS-native set equal torchgen's.
TEST_P(ShippedRelease, MatchesTorchgen) {
  const std::string release = GetParam();
  const nlohmann::json oracle = load_json("tests/data/torchgen/pytorch-" + release + "-MPS.json");
  const Registry reg = classify_release(release, "MPS");
  std::set<std::string> ops, native;
  for (const auto& e : reg.ops) {
    ops.insert(e.name);
    if (e.status == OpStatus::kNative) native.insert(e.name);
  }
  EXPECT_EQ(ops, oracle["ops"].get<std::set<std::string>>());
  EXPECT_EQ(native, oracle["native"].get<std::set<std::string>>());
}

INSTANTIATE_TEST_SUITE_P(, ShippedRelease, ::testing::Values("1.13.1", "2.11.0"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = std::string("v") + info.param;
                           for (char& c : name) c = c == '.' ? '_' : c;
                           return name;
                         });

// Every status, not only native, against the dispatcher of a real torch 2.11.0 (CUDA build), as recorded.
TEST(StaticRegistry, AgreesWithTheRecordedDispatcherOfTorch211) {
  for (const char* key : {"CPU", "CUDA"}) {
    const nlohmann::json live = load_json(std::string("tests/data/live/torch-2.11.0-") + key + ".json");
    const Registry reg = classify_release("2.11.0", key);
    size_t compared = 0;
    for (const auto& e : reg.ops) {
      auto it = live["ops"].find(e.name);
      if (it == live["ops"].end()) continue;
      ++compared;
      EXPECT_EQ(to_string(e.status), it->get<std::string>()) << key << " " << e.name;
    }
    EXPECT_EQ(compared, reg.ops.size()) << key << ": every declared operator is in the dispatcher";
  }
}

}  // namespace
}  // namespace mps_audit
