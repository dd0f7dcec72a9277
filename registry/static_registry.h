// Classifies the operators of a native_functions.yaml for one dispatch key the way PyTorch's code generator
// (torchgen) registers their kernels, without that release installed.
#pragma once

#include <string>
#include <vector>

#include "registry/extra_registrations.h"
#include "registry/native_functions.h"
#include "registry/registry.h"

namespace mps_audit {

// See Note [Static classification] in static_registry.cc for the rules.
// Throws UserError when an extra registration names an operator the declarations do not have.
Registry classify_native_functions(const std::vector<NativeFunctionDecl>& decls,
                                   const std::vector<ExtraRegistration>& extra, const std::string& key);

}  // namespace mps_audit
