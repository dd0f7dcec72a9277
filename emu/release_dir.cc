// The release folder an emulated run takes its registry from (find_release_dir, default_release_dir in
// mps_emulator.h).
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/data_home.h"
#include "common/paths.h"
#include "common/torch_compat.h"
#include "emu/mps_emulator.h"
#include "registry/release_data.h"

namespace mps_audit::emu {

std::string find_release_dir(const std::string& torch_version) {
  std::smatch m;
  if (!std::regex_search(torch_version, m, std::regex(R"(^(\d+)\.(\d+)\.(\d+))"))) return "";
  const std::string exact = fmt::format("pytorch-{}.{}.{}", m[1].str(), m[2].str(), m[3].str());
  const std::string same_minor = fmt::format("pytorch-{}.{}.", m[1].str(), m[2].str());
  for (const auto& root : release_roots()) {
    if (is_directory(join_path(root, exact))) return join_path(root, exact);
    for (const auto& name : list_directory(root)) {
      if (name.rfind(same_minor, 0) == 0 && is_directory(join_path(root, name))) return join_path(root, name);
    }
  }
#ifdef MPS_AUDIT_TORCHGEN_DATA_DIR
  // The linked wheel's own YAML (no hand registrations: those come only with data/ folders).
  if (torch_version == compat::kTorchVersion) return MPS_AUDIT_TORCHGEN_DATA_DIR;
#endif
  return "";
}

std::string default_release_dir() {
  const std::vector<ShippedRelease> shipped = shipped_releases();
  return shipped.empty() ? find_release_dir(compat::kTorchVersion) : shipped.back().dir;
}

}  // namespace mps_audit::emu
