// `mps-audit run`: plans op x dtype probes, runs them in worker processes (a crash or a hang costs one probe,
// never the run), journals results as they arrive, and writes the reports.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace mps_audit {

struct RunOptions {
  std::string target = "auto";  // auto, mps, mps-emu, cuda, cpu, meta
  std::string spec = "opspec.yaml";
  std::string ops;                  // regex on "aten::name.overload"; empty: all
  std::vector<std::string> dtypes;  // empty: the spec's defaults
  std::string out_dir = "out";
  std::vector<std::string> formats = {"json", "md", "html"};
  std::string fallback = "on";  // on, off: PYTORCH_ENABLE_MPS_FALLBACK for the workers
  std::string emu_release;      // release folder for mps-emu; empty: the linked libtorch's
  int emu_macos = 14;
  double timeout_s = 60;             // per probe
  int jobs = 0;                      // worker processes; 0: one per core
  std::vector<std::string> fail_on;  // verdicts that fail the run (exit 1)
  std::string baseline;              // results.json to gate on (exit 1 on a regression); empty: none
  bool strict = false;               // JUnit: unsupported and fallback fail too
  std::string self;                  // this executable, to start workers with
  bool progress = true;
};

// The worker side: hidden subcommand `mps-audit __worker`.
struct WorkerOptions {
  std::string target, spec, plan, emu_release;
  int emu_macos = 14;
  size_t first = 0, step = 1;  // probes first, first + step, ... of the plan
};

int run_audit(const RunOptions& options, std::ostream& out, std::ostream& err);
int run_worker(const WorkerOptions& options, std::ostream& out);

}  // namespace mps_audit
