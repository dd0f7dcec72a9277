// Bodies of `render`, `diff` and `compare`.
#include "commands/reports.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/diagnostics.h"
#include "common/flags.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "common/text.h"
#include "emu/timeline.h"
#include "report/diff_report.h"
#include "report/renderers.h"

namespace mps_audit {
int run_render(const RenderCommandOptions& o, std::ostream& out) {
  check_report_formats(o.formats);
  Results results = load_results(o.input);
  // A run that wrote no HTML report read no timeline for it (Note [Native since, when asked] in emu/timeline.cc).
  if (shows_native_since(o.formats)) emu::add_native_since(results);
  RenderOptions render;
  render.strict = o.strict;
  const std::string dir = o.out_dir.empty() ? parent_path(o.input) : o.out_dir;
  for (const auto& path : write_reports(results, o.formats, dir, render)) out << "wrote " << path << "\n";
  return kExitOk;
}

int run_diff(const DiffCommandOptions& o, std::ostream& out) {
  check_choice("--format", o.format, {"text", "md", "json"});
  const Results base = load_results(o.base);
  const Results now = load_results(o.now);
  const RunDiff d = diff_runs(base, now, o.fail_on_conditional);
  emit(render_diff(d, o.format), o.output, out);
  if (!o.update_baseline.empty()) {
    if (d.has_regressions()) {
      out << fmt::format("baseline {} not updated: {} regressions (a baseline only moves forward)\n", o.update_baseline,
                         d.regressions.size());
    } else {
      write_file_atomically(o.update_baseline, render_results_json(now));
      out << fmt::format("baseline {} updated from {}\n", o.update_baseline, o.now);
    }
  }
  return d.has_regressions() ? kExitGateFailed : kExitOk;
}

int run_compare(const CompareCommandOptions& o, std::ostream& out) {
  check_choice("--format", o.format, {"md", "html", "json"});
  if (o.inputs.size() < 2) throw UserError("compare needs at least two results.json files");
  std::vector<Results> runs;
  for (const auto& path : o.inputs) runs.push_back(load_results(path));
  emit(render_comparison(compare_runs(runs), runs, o.format), o.output, out);
  return kExitOk;
}

}  // namespace mps_audit
