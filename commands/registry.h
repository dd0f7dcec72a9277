// `mps-audit registry` and `mps-audit registry diff`: the subcommand bodies, called by cli/main.cc with
// the flags already parsed into these structs. Bad input throws UserError; the return value is the exit code.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "registry/load_registry.h"

namespace mps_audit {

struct RegistryOptions {
  std::string native_functions;     // native_functions.yaml or a release folder; empty: the live dispatcher
  std::string extra_registrations;  // TSV of hand registrations; empty: the release folder's own, if any
  std::string key = "MPS";
  std::string format = "text";        // text, json, md
  std::string output;                 // file to write (atomically); empty: standard output
  std::vector<std::string> statuses;  // list (text) or keep (json, md) only these statuses
};

struct RegistryDiffOptions {
  std::string old_source, new_source;  // native_functions.yaml, release folder, or "live"
  std::string key = "MPS";
  std::string format = "text";
  std::string output;
  bool fail_on_lost = false;  // exit 1 when an operator lost its kernel for the key
};

int run_registry(const RegistryOptions& options, std::ostream& out);
int run_registry_diff(const RegistryDiffOptions& options, std::ostream& out);

}  // namespace mps_audit
