// Tests of the fault-injection specification.
#include "emu/faults.h"

#include <gtest/gtest.h>

#include "common/diagnostics.h"

namespace mps_audit::emu {
namespace {

TEST(FaultPlan, ParsesEachKindAndMatchesOverloads) {
  const FaultPlan plan = FaultPlan::parse(
      "aten::sin=wrong, cos=crash,aten::tan=hang,aten::add.Tensor=throw,aten::abs=poison,neg=touch,"
      "aten::sub=slow,aten::cosh=touch-then-hang");
  EXPECT_EQ(plan.fault_for("aten::abs"), FaultKind::kPoison);
  EXPECT_EQ(plan.fault_for("aten::sin"), FaultKind::kWrong);
  EXPECT_EQ(plan.fault_for("aten::sin.out"), FaultKind::kWrong);  // a bare name covers every overload
  EXPECT_EQ(plan.fault_for("aten::cos"), FaultKind::kCrash);
  EXPECT_EQ(plan.fault_for("aten::tan"), FaultKind::kHang);
  EXPECT_EQ(plan.fault_for("aten::neg"), FaultKind::kTouch);
  EXPECT_EQ(plan.fault_for("aten::sub.Scalar"), FaultKind::kSlow);
  EXPECT_EQ(plan.fault_for("aten::cosh"), FaultKind::kTouchThenHang);
  EXPECT_TRUE(plan.plans(FaultKind::kTouch));
  EXPECT_FALSE(FaultPlan::parse("aten::sin=wrong").plans(FaultKind::kTouch));
  EXPECT_EQ(plan.fault_for("aten::add.Tensor"), FaultKind::kThrow);
  EXPECT_FALSE(plan.fault_for("aten::add.Scalar").has_value());
  EXPECT_FALSE(plan.fault_for("aten::sinh").has_value());
  EXPECT_TRUE(FaultPlan::parse("").empty());
}

TEST(FaultPlan, RejectsBadEntries) {
  auto message = [](const char* spec) -> std::string {
    try {
      FaultPlan::parse(spec);
    } catch (const UserError& e) {
      return e.message();
    }
    return "no error";
  };
  EXPECT_EQ(message("aten::sin"), "MPS_AUDIT_EMU_FAULTS: expected 'operator=kind', got 'aten::sin'");
  EXPECT_EQ(message("aten::sin=wrng"),
            "MPS_AUDIT_EMU_FAULTS: unknown fault 'wrng' for aten::sin, expected wrong, crash, hang, throw, poison, "
            "slow, touch or touch-then-hang (did you mean 'wrong'?)");
  EXPECT_EQ(message("=wrong"), "MPS_AUDIT_EMU_FAULTS: expected 'operator=kind', got '=wrong'");
}

}  // namespace
}  // namespace mps_audit::emu
