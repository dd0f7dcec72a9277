// Tests of the POSIX path helpers.
#include "common/paths.h"

#include <gtest/gtest.h>

#include "common/diagnostics.h"
#include "test_support.h"

namespace mps_audit {
namespace {

TEST(Paths, SplitsPaths) {
  EXPECT_EQ(parent_path("a/b/c"), "a/b");
  EXPECT_EQ(parent_path("a/b/c/"), "a/b");
  EXPECT_EQ(parent_path("c"), ".");
  EXPECT_EQ(parent_path("/c"), "/");
  EXPECT_EQ(join_path("a", "b"), "a/b");
  EXPECT_EQ(join_path("a/", "b"), "a/b");
  EXPECT_EQ(folder_name("/no/such/pytorch-2.11.0/"), "pytorch-2.11.0");
}

TEST(Paths, MakesAndListsFolders) {
  testing::TempDir dir;
  const std::string nested = dir.path() + "/x/y/z";
  make_directories(nested);
  EXPECT_TRUE(is_directory(nested));
  make_directories(nested);  // already there: fine
  dir.write("x/file", "1");
  EXPECT_EQ(list_directory(dir.path() + "/x"), std::vector<std::string>({"file", "y"}));
  EXPECT_TRUE(path_exists(dir.path() + "/x/file"));
  EXPECT_FALSE(is_directory(dir.path() + "/x/file"));
  EXPECT_THROW(make_directories(dir.path() + "/x/file/sub"), UserError);
  EXPECT_TRUE(list_directory(dir.path() + "/missing").empty());
}

}  // namespace
}  // namespace mps_audit
