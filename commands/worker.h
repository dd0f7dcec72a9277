// `mps-audit __worker`: a run's worker started from the binary (run/worker_main.h). The run forks most of its
// workers instead, which call run_worker() directly (Note [Forked workers] in run/worker_process.cc).
#pragma once

#include "run/worker_main.h"
