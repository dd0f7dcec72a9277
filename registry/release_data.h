// Locating a release's registry files: `--native-functions` takes a native_functions.yaml or a folder
// holding one and, for key K, the k_extra_registrations.tsv beside it (mps_extra_registrations.tsv for MPS),
// like the folders under data/.
#pragma once

#include <string>
#include <vector>

namespace mps_audit {

struct ReleaseFiles {
  std::string native_functions;     // path of native_functions.yaml
  std::string extra_registrations;  // path of the hand registrations, empty when there are none
  std::string version;              // "2.11.0" when a folder name says "pytorch-2.11.0", else empty
};

// "mps_extra_registrations.tsv" for MPS: the hand registrations of one key in a release folder.
std::string extra_registrations_file(const std::string& key);

// A release folder shipped with the tool (pytorch-X.Y.Z under $MPS_AUDIT_DATA_DIR or the source tree's data/).
struct ShippedRelease {
  std::string version;  // "2.11.0"
  std::string dir;
};
// Every shipped release with a native_functions.yaml, oldest first; where both places hold one version, the
// folder of $MPS_AUDIT_DATA_DIR.
std::vector<ShippedRelease> shipped_releases();

// What --emu-release names: a release folder (or native_functions.yaml) as it is, or a shipped release by its version
// ("2.11.0"). Throws UserError naming where it looked and what is shipped when it is neither.
std::string release_folder(const std::string& arg);

// Throws UserError when the path does not exist or a folder has no native_functions.yaml.
// `extras_for_key`: the key being classified, whose extra registrations file a folder may hold.
ReleaseFiles resolve_release(const std::string& path, const std::string& extras_for_key);

}  // namespace mps_audit
