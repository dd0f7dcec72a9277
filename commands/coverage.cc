// `mps-audit coverage`: see coverage.h.
#include "commands/coverage.h"

#include "common/diagnostics.h"
#include "common/flags.h"
#include "common/output_file.h"
#include "emu/emulated_mac.h"
#include "emu/timeline.h"
#include "registry/op_tier.h"
#include "report/coverage_page.h"

namespace mps_audit {

int run_coverage(const CoverageOptions& options, std::ostream& out) {
  check_choice("--format", options.format, {"md", "html"});
  const emu::Timeline timeline = emu::compute_timeline("", emu::parse_emu_macos("--macos", options.macos));
  const CoreOps& core = shipped_core_ops();
  emit(options.format == "html" ? render_coverage_html(timeline, core) : render_coverage_md(timeline, core),
       options.output, out);
  return kExitOk;
}

}  // namespace mps_audit
