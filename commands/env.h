// `mps-audit env`: what this machine and the linked libtorch offer (targets/host.h), as text or JSON.
#pragma once

#include <ostream>
#include <string>

namespace mps_audit {

struct EnvOptions {
  std::string format = "text";  // text or json
};

// `mps-audit env`.
int run_env(const EnvOptions& options, std::ostream& out);

}  // namespace mps_audit
