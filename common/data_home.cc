// The default spec's and the release data's homes.
#include "common/data_home.h"

#include <climits>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include "common/diagnostics.h"
#include "common/paths.h"

namespace mps_audit {

// Note [Data homes]
// The tool's own files (the default opspec.yaml, and data/ with each release's registry, expectations, recorded
// samples and probe costs) are looked for, in order, in
//   1. $MPS_AUDIT_DATA, a folder laid out like the install's share/mps-audit (set to anything else: an error);
//   2. <prefix>/share/mps-audit, where <prefix>/bin holds this executable: what `cmake --install`, `make install`
//      and the Debian package lay out, found from the binary, not from the working folder;
//   3. the source tree the binary was built from (the build tree's binary, build/mps-audit).
// A flag (--spec, --emu-release) names a file or folder directly and wins over all of them. Release folders are
// also read from $MPS_AUDIT_DATA_DIR, a folder of release folders, before the homes' data/ (it came first). Every
// report names the spec and release folder a run used. The program recorder (python/mps_audit_record.py) is found
// the same way.

std::string executable_path(const char* argv0) {
#ifdef __APPLE__
  char buf[PATH_MAX];
  uint32_t size = sizeof buf;
  if (_NSGetExecutablePath(buf, &size) == 0) {
    char* resolved = ::realpath(buf, nullptr);
    const std::string out = resolved ? resolved : buf;
    std::free(resolved);
    return out;
  }
#else
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) return std::string(buf, static_cast<size_t>(n));
#endif
  if (!argv0) return "";
  char* resolved = ::realpath(argv0, nullptr);
  const std::string out = resolved ? resolved : argv0;
  std::free(resolved);
  return out;
}

std::vector<DataHome> data_homes() {
  std::vector<DataHome> homes;
  if (const char* dir = std::getenv(kDataVariable); dir && *dir) {
    if (!is_directory(dir)) {
      throw UserError(
          fmt::format("${}={}: no such folder (it should hold {} and data/pytorch-X.Y.Z folders, as "
                      "<prefix>/share/mps-audit does)",
                      kDataVariable, dir, kDefaultSpecName));
    }
    homes.push_back({dir, "$" + std::string(kDataVariable)});
  }
  if (const std::string self = executable_path(); !self.empty()) {
    const std::string share = join_path(parent_path(parent_path(self)), "share/mps-audit");
    if (is_directory(share)) homes.push_back({share, "the install prefix"});
  }
  if (is_directory(MPS_AUDIT_SOURCE_DIR)) homes.push_back({MPS_AUDIT_SOURCE_DIR, "the build tree"});
  return homes;
}

std::vector<std::string> release_roots() {
  std::vector<std::string> roots;
  if (const char* dir = std::getenv("MPS_AUDIT_DATA_DIR"); dir && *dir) roots.emplace_back(dir);
  for (const auto& home : data_homes()) roots.push_back(join_path(home.dir, "data"));
  return roots;
}

std::string release_root_file(const std::string& name) {
  for (const auto& root : release_roots()) {
    const std::string path = join_path(root, name);
    if (path_exists(path)) return path;
  }
  return "";
}

std::string home_file(const std::string& relative, const std::string& instead) {
  std::vector<std::string> looked;
  for (const auto& home : data_homes()) {
    const std::string file = join_path(home.dir, relative);
    if (path_exists(file)) return file;
    looked.push_back(fmt::format("{} ({})", home.dir, home.why));
  }
  throw UserError(fmt::format("no {} found (looked in {}): {}, or set ${} to a folder holding one", relative,
                              looked.empty() ? "no folder" : fmt::format("{}", fmt::join(looked, ", ")), instead,
                              kDataVariable));
}

std::string default_spec_path() {
  return home_file(kDefaultSpecName, "pass --spec");
}

}  // namespace mps_audit
