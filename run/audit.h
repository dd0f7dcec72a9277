// A run: plans op x dtype probes, runs them in worker processes (a crash or a hang costs one probe, never the run),
// and journals results as they arrive so that an interrupted run can be resumed. commands/run.h writes its reports.
#pragma once

#include <memory>
#include <ostream>

#include "results/results_file.h"
#include "run/request.h"

namespace mps_audit {
namespace emu {
struct RunExpectations;
}  // namespace emu

struct AuditedRun {
  Results results;     // every record, in plan order; marked incomplete when a signal stopped the run
  int stopped_by = 0;  // the signal that stopped it (SIGINT, SIGTERM), or 0
  // The output folder's lock and the workers still ending, held until this goes: after the reports.
  std::shared_ptr<void> held;
  // PyTorch's expectations and the known bugs the run applied (its plan's, alive while `held` is).
  const emu::RunExpectations* expecting = nullptr;
};

// Runs the plan the request makes: plan (run/plan.h), journal (run/journal.h), pool (run/pool.h), results
// (run/run_results.h). Journals into request.out_dir and writes the probe figures for the next run there; no reports.
// `baseline`, when given, lends its figures to order the work. Throws UserError for bad input found before anything is
// written (a spec, a release, a journal to resume).
AuditedRun audit_run(const RunRequest& request, const Results* baseline, std::ostream& err);

}  // namespace mps_audit
