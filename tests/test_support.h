// Helpers shared by the tests: paths of the project's data, running the real binary, temporary folders.
#pragma once

#include <string>
#include <vector>

namespace mps_audit::testing {

std::string source_path(const std::string& relative);  // a path inside the source tree

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs build/mps-audit with these arguments (each passed as one word), capturing both streams.
CommandResult run_mps_audit(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {});

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

}  // namespace mps_audit::testing
