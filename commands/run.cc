// `mps-audit run`: see run.h.
#include "commands/run.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "common/diagnostics.h"
#include "common/flags.h"
#include "report/gate.h"
#include "report/renderers.h"
#include "run/stop_signals.h"

namespace mps_audit {

int run_command(const RunOptions& o, std::ostream& out, std::ostream& err) {
  // What can be checked before the run starts is, so that nothing is written for bad flags.
  check_report_formats(o.formats);
  std::vector<std::string> verdict_names;
  for (Verdict k : kAllVerdicts) verdict_names.emplace_back(to_string(k));
  verdict_names.emplace_back("conditional");  // a conditional failure (Note [Conditional failures])
  check_choices("--fail-on", o.fail_on, verdict_names);
  std::optional<Results> baseline;
  if (!o.baseline.empty()) baseline = load_results(o.baseline);
  const RunRequest request = check_run_options(o);

  const AuditedRun run = audit_run(request, baseline ? &*baseline : nullptr, err);
  const Results& doc = run.results;
  RenderOptions render;
  render.strict = o.strict;
  write_reports(doc, o.formats, o.out_dir, render);
  out << render_summary(doc);
  // Accounting: every planned probe has exactly one record or is not run (interrupted); none is ever lost.
  out << fmt::format("probes: {} planned, {} finished, {} not run, 0 lost\n", doc.run.planned, doc.run.finished,
                     doc.run.not_run());
  out << fmt::format("reports in {}/ ({})\n", o.out_dir, fmt::join(o.formats, ", "));
  if (run.stopped_by) {
    if (o.progress && isatty(STDERR_FILENO)) err << "\n";
    err << fmt::format(
        "stopped by {}: {} of {} probes finished, {} not run; the reports say so. 'mps-audit run --resume' with the "
        "same flags runs the rest\n",
        signal_name(run.stopped_by), doc.run.finished, doc.run.planned, doc.run.not_run());
    return 128 + run.stopped_by;
  }
  int exit_code = kExitOk;
  if (baseline) exit_code = apply_baseline_gate(doc, *baseline, o.out_dir, o.fail_on_conditional, out);
  const bool on_conditional = std::find(o.fail_on.begin(), o.fail_on.end(), "conditional") != o.fail_on.end();
  for (const auto& r : doc.records) {
    if (std::find(o.fail_on.begin(), o.fail_on.end(), to_string(r.verdict)) != o.fail_on.end() ||
        (on_conditional && has_conditional_failure(r))) {
      return kExitGateFailed;
    }
  }
  return exit_code;
}

}  // namespace mps_audit
