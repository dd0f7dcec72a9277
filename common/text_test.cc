// Tests of the suggestion, splitting and first-line helpers, and of JSON numbers (json_number.h).
#include "common/text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/json_number.h"

namespace mps_audit {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("float32", "flaot32"), 1u);  // a swap of neighbours
  EXPECT_EQ(edit_distance("MPS", "MSP"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(NearestNames, ReturnsCloseCandidatesNearestFirst) {
  const std::vector<std::string> keys = {"CPU", "CUDA", "MPS", "Meta", "SparseCPU"};
  EXPECT_EQ(nearest_names("MSP", keys), std::vector<std::string>({"MPS"}));
  EXPECT_EQ(nearest_names("CUD", keys), std::vector<std::string>({"CUDA"}));
  EXPECT_TRUE(nearest_names("Vulkan", keys).empty());
}

TEST(DidYouMean, FormatsOneOrSeveralSuggestions) {
  EXPECT_EQ(did_you_mean("sinn", {"sin", "sinh", "cos"}), " (did you mean 'sin' or 'sinh'?)");
  EXPECT_EQ(did_you_mean("zzzzzz", {"sin"}), "");
}

TEST(BaseOperatorName, DropsTheOverloadOnly) {
  EXPECT_EQ(base_operator_name("aten::add.Tensor"), "aten::add");
  EXPECT_EQ(base_operator_name("aten::sin"), "aten::sin");
  EXPECT_EQ(base_operator_name("aten::_foreach_add_.List"), "aten::_foreach_add_");
}

TEST(SplitList, TrimsAndDropsEmptyPieces) {
  EXPECT_EQ(split_list(" CPU, CUDA ,,MPS "), std::vector<std::string>({"CPU", "CUDA", "MPS"}));
  EXPECT_TRUE(split_list("").empty());
}

TEST(FirstLine, EndsAtTheFirstLineBreak) {
  EXPECT_EQ(first_line("boom\n  at frame 1\n"), "boom");
  EXPECT_EQ(first_line("one line"), "one line");
  EXPECT_EQ(first_line(""), "");
  EXPECT_EQ(first_line("\nsecond"), "");
}

TEST(FirstLine, TrimsTheLinesTrailingSpacesOnlyWhenAsked) {
  EXPECT_EQ(first_line("RuntimeError: boom  \nTraceback"), "RuntimeError: boom  ");
  EXPECT_EQ(first_line("RuntimeError: boom  \nTraceback", /*trim_trailing_spaces=*/true), "RuntimeError: boom");
  EXPECT_EQ(first_line("  lead stays", /*trim_trailing_spaces=*/true), "  lead stays");
  EXPECT_EQ(first_line("   ", /*trim_trailing_spaces=*/true), "");
}

TEST(JsonNumber, WritesFiniteNumbersAndNullForNanAndInfinity) {
  EXPECT_EQ(json_number(0.25).dump(), "0.25");
  EXPECT_EQ(json_number(-3).dump(), "-3.0");
  EXPECT_TRUE(json_number(std::nan("")).is_null());
  EXPECT_TRUE(json_number(std::numeric_limits<double>::infinity()).is_null());
  EXPECT_TRUE(json_number(-std::numeric_limits<double>::infinity()).is_null());
}

}  // namespace
}  // namespace mps_audit
