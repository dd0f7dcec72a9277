// Reader for a PyTorch release's native_functions.yaml: each operator declaration with what torchgen
// needs to decide which kernels get registered (dispatch table, structured delegation, autogen).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/diagnostics.h"

namespace mps_audit {

struct NativeFunctionDecl {
  std::string ns = "aten";
  std::string name;  // "add.Tensor" (base name and overload, no namespace)
  std::string func;  // the whole schema: "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
  // The dispatch section with comma-separated keys expanded: {"CPU", "add_out"}, {"CUDA", "add_out"}, ...
  std::vector<std::pair<std::string, std::string>> dispatch;
  bool has_dispatch_section = false;
  bool structured = false;                  // `structured: True` (an out= variant with a structured kernel)
  std::string structured_delegate;          // "add.out" for add.Tensor and add_.Tensor
  bool manual_kernel_registration = false;  // registered by hand, no codegen registration
  std::vector<std::string> autogen;         // operators torchgen generates from this one ("add.out", ...)
  std::vector<std::string> tags;            // "core", "pointwise", ...
  SourceLocation where;                     // of the `func:` value

  std::string qualified_name() const;                         // "aten::add.Tensor"
  const std::string* kernel_for(std::string_view key) const;  // nullptr when the key is not in `dispatch`
  bool is_inplace() const;                                    // add_, __iand__
  size_t return_count() const;                                // from the schema's "-> ..." part
  bool has_tag(std::string_view tag) const;
};

// Parses the text of a native_functions.yaml; `file` names it in diagnostics.
// Throws UserError (with file:line:col) on invalid YAML or YAML that is not a list of declarations.
std::vector<NativeFunctionDecl> parse_native_functions(const std::string& text, const std::string& file);

// Reads and parses a file (once per text: a file read again unchanged is not parsed again); missing or unreadable
// files are UserErrors too.
std::vector<NativeFunctionDecl> read_native_functions(const std::string& path);

}  // namespace mps_audit
