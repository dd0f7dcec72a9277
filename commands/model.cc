// `mps-audit model`: see model.h.
#include "commands/model.h"

#include "common/diagnostics.h"

namespace mps_audit {

int model_command(const ModelCommandOptions& o, std::ostream& out, std::ostream& err) {
  if (o.calls.calls.empty()) {
    if (o.model.model.empty()) {
      throw UserError("model: give a TorchScript file, or --calls FILE (a recording of mps-audit record)");
    }
    return run_model_audit(o.model, out, err);
  }
  if (!o.model.model.empty() || o.model.train || !o.model.inputs.empty()) {
    throw UserError("model --calls replays a recording: give no TorchScript file, --input or --train with it");
  }
  CallsOptions calls = o.calls;
  calls.target = o.model.target;
  calls.fallback = o.model.fallback;
  calls.out_dir = o.model.out_dir;
  calls.formats = o.model.formats;
  if (o.timeout_given) calls.timeout_s = o.model.timeout_s;
  return run_calls_audit(calls, out, err);
}

}  // namespace mps_audit
