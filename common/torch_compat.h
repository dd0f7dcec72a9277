// The one place that knows how libtorch 1.13 and 2.x differ; everything else includes this instead of
// testing versions itself.
#pragma once

#include <torch/csrc/api/include/torch/version.h>

#define MPS_AUDIT_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace mps_audit::compat {

// The version of the libtorch this binary was compiled against, "1.13.0" for instance. Debian's 1.13.1
// package reports itself as 1.13.0 here (its version.h says so).
inline constexpr const char* kTorchVersion = TORCH_VERSION;

}  // namespace mps_audit::compat
