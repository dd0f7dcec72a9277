// The rules each sample's probe shares with its operator's: see probe_target.h.
#include "probe/probe_target.h"

#include <algorithm>

#include <c10/util/Exception.h>

#include "common/text.h"
#include "common/torch_compat.h"

namespace mps_audit {

std::optional<Tolerance> comparison_tolerance(const Tolerance* spec_tolerance, c10::ScalarType dtype,
                                              bool reference_in_float32) {
  if (!spec_tolerance && !reference_in_float32) return std::nullopt;
  Tolerance t = spec_tolerance ? *spec_tolerance : default_tolerance(dtype);
  // A reference computed in float32 is rounded once, where the target rounds every intermediate of a composite in the
  // low-precision dtype: PyTorch's MPS tests compare such results within atol = rtol = 1e-2, and so does the prober
  // unless the spec is looser.
  if (reference_in_float32) {
    t.atol = std::max(t.atol, 1e-2);
    t.rtol = std::max(t.rtol, 1e-2);
  }
  return t;
}

std::string error_text(const std::exception& e) {
  if (const auto* c = dynamic_cast<const c10::Error*>(&e)) return first_line(c->what_without_backtrace());
  return first_line(e.what());
}

IndexSource index_source(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args) {
  IndexSource source;
  const auto& returns = schema.returns();
  const bool all = schema.name().rfind("aten::arg", 0) == 0;
  for (size_t i = 0; i < returns.size(); ++i) {
    if (all || returns[i].name().find("indices") != std::string::npos) source.index_outputs.push_back(i);
  }
  size_t position = returns.size();
  for (size_t i = 0; i < schema.arguments().size() && i < args.size(); ++i) {
    const auto& a = schema.arguments()[i];
    if (!source.input.defined() && args[i].isTensor()) source.input = args[i].toTensor();
    if (a.name() == "dim" && args[i].isInt()) source.dim = args[i].toInt();
    if (a.name() == "dim" && args[i].isString() && source.input.defined()) {
      const auto names = compat::dimension_names(source.input);  // a Dimname overload: the dimension of that name
      for (size_t d = 0; d < names.size(); ++d) {
        if (names[d] == args[i].toStringRef()) source.dim = static_cast<int64_t>(d);
      }
    }
    if (!a.alias_info() || !a.alias_info()->isWrite()) continue;
    bool index = all || a.name().find("indices") != std::string::npos;
    for (size_t r = 0; r < returns.size(); ++r) {
      if (returns[r].alias_info() && returns[r].alias_info()->beforeSets() == a.alias_info()->beforeSets()) {
        index = std::find(source.index_outputs.begin(), source.index_outputs.end(), r) != source.index_outputs.end();
      }
    }
    if (index) source.index_outputs.push_back(position);
    ++position;
  }
  return source;
}

}  // namespace mps_audit
