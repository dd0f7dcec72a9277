// Resolves a release folder or file into the paths the registry reader needs.
#include "registry/release_data.h"

#include <cctype>
#include <regex>

#include "common/diagnostics.h"
#include "common/paths.h"

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

}  // namespace mps_audit
