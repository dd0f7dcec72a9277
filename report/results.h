// Serialising probe results: the worker protocol's records, results.json (contract in docs/results.md) and the
// Markdown summary. Renderers format; verdicts were decided by the prober.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "probe/result.h"

namespace mps_audit {

struct RunEnvironment {
  std::string torch_version;
  std::string target;         // "mps-emu"
  std::string requested;      // what --target said ("auto")
  std::string device;         // "mps:0 (emulated MPS (PyTorch 2.11.0 registry, macOS 14 rules))"
  std::string os;             // "Linux 6.1.0"
  std::string fallback_mode;  // "on" / "off" (PYTORCH_ENABLE_MPS_FALLBACK)
  std::string emulator;       // the emulator's label, empty on a real device
  std::string spec;           // path of the op spec
};

nlohmann::json to_json(const ProbeResult& r);
ProbeResult probe_result_from_json(const nlohmann::json& j);
nlohmann::json to_json(const RunEnvironment& env);
RunEnvironment run_environment_from_json(const nlohmann::json& j);

std::string render_results_json(const RunEnvironment& env, const std::vector<ProbeResult>& results);
std::string render_results_markdown(const RunEnvironment& env, const std::vector<ProbeResult>& results);
// The terminal's closing table: count per verdict.
std::string render_summary_table(const RunEnvironment& env, const std::vector<ProbeResult>& results);

}  // namespace mps_audit
