// Resolves a release folder or file into the paths the registry reader needs.
#include "registry/release_data.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <regex>

#include "common/data_home.h"
#include "common/diagnostics.h"
#include "common/paths.h"
#include "common/text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mps_audit {

std::string extra_registrations_file(const std::string& key) {
  std::string lower;
  for (char c : key) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower + "_extra_registrations.tsv";
}

ReleaseFiles resolve_release(const std::string& path, const std::string& extras_for_key) {
  if (!path_exists(path)) throw UserError("no such file or directory", {path});
  ReleaseFiles files;
  std::string folder;
  if (is_directory(path)) {
    folder = path;
    files.native_functions = join_path(path, "native_functions.yaml");
    if (!path_exists(files.native_functions)) throw UserError("folder has no native_functions.yaml", {path});
    const std::string extras = join_path(path, extra_registrations_file(extras_for_key));
    if (path_exists(extras)) files.extra_registrations = extras;
  } else {
    files.native_functions = path;
    folder = parent_path(path);
  }
  static const std::regex kReleaseFolder(R"(pytorch-(\d+\.\d+\.\d+\S*))");
  std::smatch m;
  const std::string name = folder_name(folder);
  if (std::regex_match(name, m, kReleaseFolder)) files.version = m[1];
  return files;
}

std::string release_folder(const std::string& arg) {
  if (path_exists(arg)) return arg;
  static const std::regex kVersion(R"(\d+\.\d+\.\d+\S*)");
  std::vector<std::string> versions;
  for (const auto& r : shipped_releases()) {
    if (r.version == arg) return r.dir;
    versions.push_back(r.version);
  }
  if (!std::regex_match(arg, kVersion)) {
    throw UserError(fmt::format("--emu-release {}: no such file or folder, nor a release name such as 2.11.0", arg));
  }
  throw UserError(fmt::format("--emu-release {}: no pytorch-{} folder in {}; shipped: {}", arg, arg,
                              fmt::join(release_roots(), ", "),
                              versions.empty() ? "none" : fmt::format("{}", fmt::join(versions, ", "))));
}

std::vector<ShippedRelease> shipped_releases() {
  std::vector<ShippedRelease> out;
  for (const auto& root : release_roots()) {
    for (const auto& name : list_directory(root)) {
      const std::string dir = join_path(root, name);
      if (name.rfind("pytorch-", 0) != 0 || !is_directory(dir) || !path_exists(join_path(dir, "native_functions.yaml")))
        continue;
      const std::string version = resolve_release(dir, "MPS").version;
      const bool seen =
          std::any_of(out.begin(), out.end(), [&](const ShippedRelease& r) { return r.version == version; });
      if (!version.empty() && !seen) out.push_back({version, dir});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const ShippedRelease& a, const ShippedRelease& b) {
    return compare_versions(a.version, b.version) < 0;
  });
  return out;
}

}  // namespace mps_audit
