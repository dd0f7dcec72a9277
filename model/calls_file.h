// A program's recorded ATen calls (`mps-audit record`, python/mps_audit_record.py), as `model --calls` reports them:
// what each distinct call was, how often and where the program made it (CallsFile, results/model_results.h). Its
// arguments are read by the prober's Recordings (probe/recorded_samples.h), which replays them.
#pragma once

#include <string>

#include "results/model_results.h"

namespace mps_audit {

// Reads a calls file. Throws UserError naming the file when it is unreadable or not a calls file, and when a call
// names an operator the linked libtorch does not have (a recording of another release: replay it with that release's
// libtorch).
CallsFile load_calls_file(const std::string& path);

}  // namespace mps_audit
