// One registry, from wherever it comes: a release's native_functions.yaml (a file or a release folder) or the linked
// libtorch's live dispatcher, classified for one dispatch key.
#pragma once

#include <string>

#include "registry/registry.h"

namespace mps_audit {

// The word that names the linked libtorch's dispatcher where a release path is expected.
inline constexpr const char* kLiveSource = "live";

// Loads and classifies one registry: a release (file or folder) or, for "" or "live", the dispatcher. Throws
// UserError for a key neither the linked c10 nor the release's YAML knows.
Registry load_registry(const std::string& source, const std::string& extra_registrations, const std::string& key);

}  // namespace mps_audit
