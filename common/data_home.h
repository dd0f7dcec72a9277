// Where mps-audit finds its default op spec and the release data (data/pytorch-X.Y.Z) when no flag names them, so
// that an installed binary works from any folder. See Note [Data homes] in data_home.cc.
#pragma once

#include <string>
#include <vector>

namespace mps_audit {

inline constexpr const char* kDataVariable = "MPS_AUDIT_DATA";
inline constexpr const char* kDefaultSpecName = "opspec.yaml";

// A folder laid out like an installed share/mps-audit: opspec.yaml, and data/ with the release folders.
struct DataHome {
  std::string dir;
  std::string why;  // "$MPS_AUDIT_DATA", "the install prefix", "the build tree"
};

// The homes in the order they are searched: $MPS_AUDIT_DATA, then <prefix>/share/mps-audit beside this executable
// (<prefix>/bin/mps-audit), then the source tree it was built from; those that exist. Throws UserError when
// $MPS_AUDIT_DATA is set to something that is not a folder.
std::vector<DataHome> data_homes();

// The folders that hold release folders (pytorch-X.Y.Z), in search order: $MPS_AUDIT_DATA_DIR (a folder of release
// folders itself), then each home's data/.
std::vector<std::string> release_roots();

// The first release root's file `name` beside the release folders ("mps_known_bugs.yaml"); empty when none has it.
std::string release_root_file(const std::string& name);

// The first home's file at `relative` ("opspec.yaml", "python/mps_audit_record.py"). Throws UserError naming every
// place looked in when none has it; `instead` says what the user can do ("pass --spec").
std::string home_file(const std::string& relative, const std::string& instead);
// The default op spec: the first home's opspec.yaml.
std::string default_spec_path();

// This executable's own path (/proc/self/exe on Linux, _NSGetExecutablePath on macOS); `argv0` resolved where
// neither answers.
std::string executable_path(const char* argv0 = nullptr);

}  // namespace mps_audit
