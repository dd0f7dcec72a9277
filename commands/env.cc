// `mps-audit env`: see env.h.
#include "commands/env.h"

#include <nlohmann/json.hpp>

#include "common/diagnostics.h"
#include "common/flags.h"
#include "results/results_file.h"
#include "targets/host.h"

namespace mps_audit {

int run_env(const EnvOptions& options, std::ostream& out) {
  check_choice("--format", options.format, {"text", "json"});
  RunEnvironment env;
  describe_host(env);
  if (options.format == "json") {
    // The run's own fields mean nothing here: only the host's.
    nlohmann::json j = to_json(env);
    for (const char* key : {"target", "requested_target", "device", "fallback_mode", "emulated", "emulator", "spec"}) {
      j.erase(key);
    }
    out << j.dump(1) << "\n";
  } else {
    out << render_environment_text(env);
  }
  return kExitOk;
}

}  // namespace mps_audit
