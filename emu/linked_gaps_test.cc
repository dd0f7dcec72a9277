// Tests of what emulating one release on another release's libtorch leaves out (Note [Kernels the linked libtorch
// lacks]).
#include "emu/linked_gaps.h"

#include <gtest/gtest.h>

namespace mps_audit::emu {
namespace {

Registry registry(const std::string& version, std::vector<RegistryEntry> ops) {
  Registry r;
  r.key = "MPS";
  r.torch_version = version;
  r.ops = std::move(ops);
  sort_entries(r.ops);
  return r;
}

RegistryEntry entry(const std::string& name, OpStatus status, const std::string& schema = "") {
  RegistryEntry e;
  e.name = name;
  e.status = status;
  e.schema = schema;
  return e;
}

TEST(LinkedGaps, ACompositeKernelTheLinkedLibtorchLacksIsNotProbed) {
  // 2.11.0 runs _foreach_sqrt through CompositeExplicitAutograd; 1.13.1 has only a CPU kernel (none for MPS).
  const Registry release = registry(
      "2.11.0", {entry("aten::_foreach_sqrt", OpStatus::kCompositeExplicit), entry("aten::sin", OpStatus::kNative)});
  const Registry linked =
      registry("1.13.0", {entry("aten::_foreach_sqrt", OpStatus::kNone), entry("aten::sin", OpStatus::kNone)});
  const auto gaps = linked_kernel_gaps(release, linked, nullptr);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps.at("aten::_foreach_sqrt"),
            "not probed: libtorch 1.13.0 lacks the CompositeExplicitAutograd kernel that PyTorch 2.11.0 runs for "
            "aten::_foreach_sqrt on MPS");
}

// An implicit composite the release lacks decomposes above the MPS key: not probed. An explicit one the emulator
// replaces with MPS's fallback, as on a Mac: probed.
TEST(LinkedGaps, ACompositeKernelTheReleaseLacksIsNotProbedWhereTheEmulatorCannotStandIn) {
  const Registry release =
      registry("1.13.1", {entry("aten::_foreach_sqrt", OpStatus::kNone), entry("aten::implicit", OpStatus::kNone)});
  const Registry linked = registry("2.14.1", {entry("aten::_foreach_sqrt", OpStatus::kCompositeExplicit),
                                              entry("aten::implicit", OpStatus::kCompositeImplicit)});
  const auto gaps = linked_kernel_gaps(release, linked, nullptr);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(
      gaps.at("aten::implicit"),
      "not probed: libtorch 2.14.1 runs a CompositeImplicitAutograd kernel for aten::implicit that PyTorch 1.13.1 "
      "lacks (a Mac reaches MPS's fallback)");
}

TEST(LinkedGaps, OperatorsOnlyOneSideHasAndNamedTensors) {
  const Registry release =
      registry("2.11.0", {entry("aten::sum.dim_DimnameList", OpStatus::kCompositeImplicit,
                                "sum.dim_DimnameList(Tensor self, Dimname[1] dim, bool keepdim=False) -> Tensor"),
                          entry("aten::_foreach_max", OpStatus::kNative)});
  const Registry linked =
      registry("2.14.1", {entry("aten::_new_in_2_14", OpStatus::kCompositeImplicit),
                          entry("aten::get_gradients", OpStatus::kNone), entry("quantized::add", OpStatus::kNone)});
  // The linked libtorch's own YAML has the new operator, not the hand-defined ones.
  const Registry linked_yaml = registry("2.14.1", {entry("aten::_new_in_2_14", OpStatus::kCompositeImplicit)});
  const auto gaps = linked_kernel_gaps(release, linked, &linked_yaml);
  ASSERT_EQ(gaps.size(), 3u);
  EXPECT_EQ(gaps.at("aten::sum.dim_DimnameList"),
            "not probed: named tensors do not exist in libtorch 2.14.1, which has no aten::sum.dim_DimnameList");
  EXPECT_EQ(gaps.at("aten::_foreach_max"),
            "not probed: libtorch 2.14.1 lacks aten::_foreach_max, which PyTorch 2.11.0 has");
  EXPECT_EQ(gaps.at("aten::_new_in_2_14"),
            "not probed: PyTorch 2.11.0 has no aten::_new_in_2_14 (libtorch 2.14.1 has)");
}

TEST(LinkedGaps, WhereTheEmulatorsKernelDecidesOrBothRunACompositeNothingIsLeftOut) {
  const Registry release =
      registry("2.11.0", {entry("aten::a", OpStatus::kNative), entry("aten::b", OpStatus::kCpuFallback),
                          entry("aten::c", OpStatus::kCompositeExplicit),
                          entry("aten::d", OpStatus::kCompositeImplicit), entry("aten::e", OpStatus::kNone)});
  const Registry linked =
      registry("1.13.0", {entry("aten::a", OpStatus::kNone), entry("aten::b", OpStatus::kCompositeExplicit),
                          entry("aten::c", OpStatus::kCompositeImplicit),
                          entry("aten::d", OpStatus::kCompositeExplicit), entry("aten::e", OpStatus::kNone)});
  EXPECT_TRUE(linked_kernel_gaps(release, linked, &release).empty());
}

TEST(LinkedGaps, ARecordThatRanAnOperatorOfAGapOnTheCpuIsSetAsideAndKeepsWhatItGave) {
  const std::map<std::string, std::string> gaps = {
      {"aten::_foreach_sqrt",
       "not probed: libtorch 1.13.0 lacks the CompositeExplicitAutograd kernel that PyTorch "
       "2.11.0 runs for aten::_foreach_sqrt on MPS"}};
  ProbeResult out;
  out.op = "aten::_foreach_sqrt.out";
  out.verdict = Verdict::kFallback;
  out.fallback_ops = {"aten::_foreach_sqrt"};
  ASSERT_TRUE(set_aside_linked_gap(out, gaps));
  EXPECT_EQ(out.verdict, Verdict::kSkip);
  EXPECT_EQ(out.observed, "fallback");
  EXPECT_EQ(skip_reason(out), "linked_libtorch");
  EXPECT_EQ(out.message,
            "not probed: it ran aten::_foreach_sqrt on the CPU, and libtorch 1.13.0 lacks the "
            "CompositeExplicitAutograd kernel that PyTorch 2.11.0 runs for aten::_foreach_sqrt on MPS");
  // A fallback of an operator without a gap is the release's own.
  ProbeResult cumsum;
  cumsum.op = "aten::cumsum";
  cumsum.verdict = Verdict::kFallback;
  cumsum.fallback_ops = {"aten::cumsum.out"};
  EXPECT_FALSE(set_aside_linked_gap(cumsum, gaps));
  EXPECT_EQ(cumsum.verdict, Verdict::kFallback);
}

}  // namespace
}  // namespace mps_audit::emu
