// A model audit's calls as records of results.json's format (results/result.h), for model.json
// (report/model_reports.h's render_model_json), so that `compare` and `diff` read a model's audit as a run's.
#pragma once

#include <vector>

#include "results/model_results.h"

namespace mps_audit {

// One record per distinct op x dtype called on the target: pass, fallback, mismatch (the first call whose outputs
// differ from the CPU's), unsupported, error, crash or timeout; the worst of its calls decides, and PyTorch's
// expectation of its first call that carries one is applied as the audit's environment says (predict, check).
std::vector<ProbeResult> model_records(const ModelAudit& audit);

}  // namespace mps_audit
