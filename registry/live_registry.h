// Classifies every operator in the linked libtorch's dispatcher for one dispatch key.
#pragma once

#include <string>
#include <vector>

#include "registry/extra_registrations.h"
#include "registry/registry.h"

namespace mps_audit {

// `key` must be a dispatch key the linked c10 knows (throws UserError otherwise, with suggestions).
// Hand registrations marked cpu_fallback or stub in `extra` refine the status of operators that do have a
// kernel for the key; the others are ignored (the dispatcher itself says what is registered).
Registry scan_live_dispatcher(const std::string& key, const std::vector<ExtraRegistration>& extra = {});

}  // namespace mps_audit
