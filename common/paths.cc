// POSIX implementations of the path helpers (see Note [No std::filesystem]).
#include "common/paths.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <dirent.h>
#include <sys/stat.h>

#include "common/diagnostics.h"

namespace mps_audit {
namespace {

std::string strip_trailing_slashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

}  // namespace

bool path_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void make_directories(const std::string& path) {
  const std::string p = strip_trailing_slashes(path);
  if (p.empty() || is_directory(p)) return;
  const std::string parent = parent_path(p);
  if (parent != p) make_directories(parent);
  if (::mkdir(p.c_str(), 0777) != 0 && errno != EEXIST) {
    throw UserError(std::string("cannot create folder: ") + std::strerror(errno), {p});
  }
  if (!is_directory(p)) throw UserError("cannot create folder: a file is in the way", {p});
}

std::string parent_path(const std::string& path) {
  const std::string p = strip_trailing_slashes(path);
  const size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

std::string folder_name(const std::string& path) {
  char resolved[PATH_MAX];
  std::string p = ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
  p = strip_trailing_slashes(p);
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string join_path(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  return a.back() == '/' ? a + b : a + "/" + b;
}

std::vector<std::string> list_directory(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace mps_audit
