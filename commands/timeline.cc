// `mps-audit timeline`: see timeline.h.
#include "commands/timeline.h"

#include "common/diagnostics.h"
#include "common/flags.h"
#include "common/output_file.h"
#include "emu/emulated_mac.h"
#include "emu/timeline.h"

namespace mps_audit::emu {

int run_timeline(const TimelineOptions& options, std::ostream& out) {
  check_choice("--format", options.format, {"text", "md", "json"});
  emit(render_timeline(compute_timeline(options.ops, parse_emu_macos("--macos", options.macos)), options.format),
       options.output, out);
  return kExitOk;
}

}  // namespace mps_audit::emu
