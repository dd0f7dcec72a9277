// Resolves a release folder or file into the paths the registry reader needs.
#include "registry/release_data.h"

#include <filesystem>
#include <regex>

#include "common/diagnostics.h"

namespace mps_audit {

ReleaseFiles resolve_release(const std::string& path, const std::string& extras_for_key) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (!fs::exists(p, ec)) throw UserError("no such file or directory", {path});
  ReleaseFiles files;
  fs::path folder;
  if (fs::is_directory(p, ec)) {
    folder = p;
    files.native_functions = (p / "native_functions.yaml").string();
    if (!fs::exists(files.native_functions, ec)) {
      throw UserError("folder has no native_functions.yaml", {path});
    }
    const fs::path extras = p / kMpsExtraRegistrationsFile;
    if (extras_for_key == "MPS" && fs::exists(extras, ec)) files.extra_registrations = extras.string();
  } else {
    files.native_functions = path;
    folder = p.parent_path();
  }
  static const std::regex kReleaseFolder(R"(pytorch-(\d+\.\d+\.\d+\S*))");
  std::smatch m;
  fs::path normal = fs::absolute(folder, ec).lexically_normal();
  if (normal.filename().empty()) normal = normal.parent_path();  // "data/pytorch-2.11.0/"
  const std::string name = normal.filename().string();
  if (std::regex_match(name, m, kReleaseFolder)) files.version = m[1];
  return files;
}

}  // namespace mps_audit
