// `mps-audit run`: checks the flags, runs the audit (run/audit.h), writes the reports, says what it found, and gates:
// exit 1 when a --fail-on verdict is present or a record regressed from --baseline; 128 + the signal that stopped it.
#pragma once

#include <ostream>

#include "run/audit.h"

namespace mps_audit {

int run_command(const RunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mps_audit
