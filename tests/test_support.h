// Helpers shared by the tests: paths of the project's data, running the real binary, temporary folders.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace mps_audit::testing {

std::string source_path(const std::string& relative);  // a path inside the source tree
const char* binary_path();                             // the mps-audit binary under test

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs build/mps-audit with these arguments (each passed as one word), capturing both streams.
CommandResult run_mps_audit(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {});

// `mps-audit run` on emulated MPS of PyTorch 1.13.1's registry with the default spec, writing into `out`, without
// a progress line, then `more`.
std::vector<std::string> emulated_run_args(const std::string& out, const std::vector<std::string>& more = {});

// A fresh folder under the system's temporary folder, removed when this object goes.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string write(const std::string& name, const std::string& content) const;  // returns the file's path

 private:
  std::string path_;
};

std::string slurp(const std::string& path);

// PyTorch 1.13.1's registry (data/pytorch-1.13.1) in `dir`/pytorch-1.13.1, with an mps_expectations.tsv of these rows
// (docs/expectations.md) instead of the shipped one; returns the folder, for --emu-release.
std::string release_with_expectations(const TempDir& dir, const std::string& rows);

// The versions of the release folders in the source tree's data/ (pytorch-X.Y.Z), oldest first: read off the folder
// names, as a reader would, to check what `env` and `timeline` list.
std::vector<std::string> source_tree_releases();

// Compares `actual` with tests/data/golden/NAME; MPS_AUDIT_UPDATE_GOLDEN=1 rewrites the file instead.
void expect_golden(const std::string& name, const std::string& actual);

// A bad input and the one diagnostic it must give: where (1-based) and a part of the message.
struct BadInput {
  const char* name;  // the test's name
  const char* text;
  int line, column;
  const char* message;
};

// Runs `parse` on the case's text and checks that it throws a UserError at the case's file:line:col with the
// message in it.
void expect_diagnostic(const BadInput& c, const std::string& file,
                       const std::function<void(const std::string& text)>& parse);
std::string bad_input_name(const ::testing::TestParamInfo<BadInput>& info);

}  // namespace mps_audit::testing
