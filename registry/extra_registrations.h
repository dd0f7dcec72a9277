// Kernels a release registers for a dispatch key by hand (TORCH_LIBRARY_IMPL blocks in .mm/.cpp files)
// rather than through native_functions.yaml; read from a TSV (see data/README.md for the format).
#pragma once

#include <string>
#include <vector>

#include "common/diagnostics.h"

namespace mps_audit {

enum class ExtraKind {
  kNative,       // a real kernel
  kCpuFallback,  // registered for the key, but always runs at::native::cpu_fallback
  kStub,         // registered, but raises
};

struct ExtraRegistration {
  std::string op;  // "aten::linalg_svd.U" (namespace added when the file omits it)
  ExtraKind kind = ExtraKind::kNative;
  SourceLocation where;
};

// One registration per non-blank, non-'#' line: "op<TAB or spaces>kind". Throws UserError on bad lines.
std::vector<ExtraRegistration> parse_extra_registrations(const std::string& text, const std::string& file);
std::vector<ExtraRegistration> read_extra_registrations(const std::string& path);

}  // namespace mps_audit
