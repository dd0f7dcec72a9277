// Tests of atomic writes and user-facing read errors.
#include "common/output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "common/diagnostics.h"
#include "common/paths.h"
#include "test_support.h"

namespace mps_audit {
namespace {

using testing::TempDir;

TEST(WriteFileAtomically, ReplacesTheFileAndLeavesNoTemporaryBehind) {
  TempDir dir;
  const std::string path = dir.write("report.json", "old");
  write_file_atomically(path, "new content");
  EXPECT_EQ(read_file(path), "new content");
  EXPECT_EQ(list_directory(dir.path()), std::vector<std::string>({"report.json"}));
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_NE(st.st_mode & S_IROTH, 0u) << "a report must be readable like any other new file";
}

TEST(WriteFileAtomically, CreatesMissingFolders) {
  TempDir dir;
  const std::string path = dir.path() + "/a/b/out.md";
  write_file_atomically(path, "x");
  EXPECT_EQ(read_file(path), "x");
}

TEST(WriteFileAtomically, FailsWithAUserErrorWhereItCannotWrite) {
  TempDir dir;
  const std::string blocker = dir.write("file", "");
  EXPECT_THROW(write_file_atomically(blocker + "/inside/out.json", "x"), UserError);
}

TEST(ReadFile, NamesTheMissingFile) {
  try {
    read_file("/nonexistent/native_functions.yaml");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().file, "/nonexistent/native_functions.yaml");
    EXPECT_NE(format_diagnostic(e).find("error: /nonexistent/native_functions.yaml: cannot read file"),
              std::string::npos);
  }
}

TEST(ReadFile, RejectsAFolder) {
  TempDir dir;
  EXPECT_THROW(read_file(dir.path()), UserError);
}

}  // namespace
}  // namespace mps_audit
