// The reports of `mps-audit model`, beside a run's (renderers.h): a TorchScript model's audit and a program's replay,
// each model.json, model.md, a self-contained model.html and the terminal lines, each a pure function of the typed
// results (results/model_results.h). Fallbacks come first in each, with their share of the time and the calls.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "results/model_results.h"

namespace mps_audit {

// model.json: results.json's schema (environment, run, summary, results) with `records`, one per distinct op x dtype
// the model called (model/model_records.h), so that load_results() and `compare` read it, plus the model's own
// fields (ops, output_match, training, totals).
std::string render_model_json(const ModelAudit& audit, const std::vector<ProbeResult>& records);
std::string render_model_markdown(const ModelAudit& audit);
std::string render_model_html(const ModelAudit& audit);
std::string render_model_summary(const ModelAudit& audit);  // the terminal lines

// "native", "fallback", "refused", "wrong", "known_failure", "error", "crash", "timeout", "not_probed"...: a replayed
// call's status in model.json, from its record's verdict ("not_judged" where the replay could not judge the call:
// ReplayedCall::not_judged).
std::string call_status(Verdict v, bool probed);

// model.json: the replay's results.json (so that `compare` and `diff` read it, and a CI job can gate a program on a
// baseline) plus the program's own fields: program, calls, sites, totals.
std::string render_calls_json(const CallsAudit& audit);
std::string render_calls_markdown(const CallsAudit& audit);
std::string render_calls_html(const CallsAudit& audit);
std::string render_calls_summary(const CallsAudit& audit);  // the terminal lines

// The head of a model report's page, its style included: a model's (model.html) and a program's replay.
std::string model_page_head(std::string_view title);
// Writes model.<format> for each of `formats` (json, md, html) into `dir`, made if missing, each atomically with the
// text `render(format)` gives; returns the paths written. A model's reports and a program's replay's.
std::vector<std::string> write_model_files(const std::vector<std::string>& formats, const std::string& dir,
                                           const std::function<std::string(const std::string&)>& render);

}  // namespace mps_audit
