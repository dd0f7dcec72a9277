// `mps-audit timeline`: see timeline.h.
#include "commands/timeline.h"

#include "common/diagnostics.h"
#include "common/flags.h"
#include "common/output_file.h"
#include "emu/timeline.h"

namespace mps_audit::emu {

int run_timeline(const TimelineOptions& options, std::ostream& out) {
  check_choice("--format", options.format, {"text", "md", "json"});
  check_macos("--macos", options.macos);
  emit(render_timeline(compute_timeline(options.ops, options.macos), options.format), options.output, out);
  return kExitOk;
}

}  // namespace mps_audit::emu
