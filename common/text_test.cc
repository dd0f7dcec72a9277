// Tests of the suggestion and splitting helpers.
#include "common/text.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace mps_audit
