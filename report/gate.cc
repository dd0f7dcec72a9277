// The gate of `run --baseline`: see gate.h.
#include "report/gate.h"

#include "common/diagnostics.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "report/diff_report.h"

namespace mps_audit {

int apply_baseline_gate(const Results& now, const Results& baseline, const std::string& out_dir, bool conditional,
                        std::ostream& out) {
  const RunDiff d = diff_runs(baseline, now, conditional);
  write_file_atomically(join_path(out_dir, "diff.md"), render_diff(d, "md"));
  out << render_diff(d, "text");
  return d.has_regressions() ? kExitGateFailed : kExitOk;
}

}  // namespace mps_audit
