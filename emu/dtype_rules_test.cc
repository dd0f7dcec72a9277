// Tests of the MPS data type rules.
#include "emu/dtype_rules.h"

#include <gtest/gtest.h>

namespace mps_audit::emu {
namespace {

TEST(MpsDtypeRules, Float64AndComplex128AreNeverAccepted) {
  for (int macos : {12, 13, 14, 15}) {
    ASSERT_TRUE(mps_dtype_refusal(c10::ScalarType::Double, macos).has_value());
    EXPECT_NE(mps_dtype_refusal(c10::ScalarType::Double, macos)->find("doesn't support float64"), std::string::npos);
    EXPECT_TRUE(mps_dtype_refusal(c10::ScalarType::ComplexDouble, macos).has_value());
  }
}

TEST(MpsDtypeRules, Bfloat16AndComplexNeedMacos14) {
  EXPECT_EQ(mps_dtype_refusal(c10::ScalarType::BFloat16, 13), "MPS bfloat16 type is supported on MacOS 14.0 or newer.");
  EXPECT_EQ(mps_dtype_refusal(c10::ScalarType::ComplexFloat, 13),
            "MPS complex types are only supported on MacOS 14.0 or newer.");
  EXPECT_FALSE(mps_dtype_refusal(c10::ScalarType::BFloat16, 14).has_value());
  EXPECT_FALSE(mps_dtype_refusal(c10::ScalarType::ComplexFloat, 14).has_value());
}

TEST(MpsDtypeRules, EverydayTypesAreAccepted) {
  for (auto t : {c10::ScalarType::Float, c10::ScalarType::Half, c10::ScalarType::Long, c10::ScalarType::Int,
                 c10::ScalarType::Short, c10::ScalarType::Char, c10::ScalarType::Byte, c10::ScalarType::Bool}) {
    EXPECT_FALSE(mps_dtype_refusal(t, 13).has_value()) << t;
  }
}

}  // namespace
}  // namespace mps_audit::emu
