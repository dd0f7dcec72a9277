// The registry's result: every operator of one source (a live dispatcher or a native_functions.yaml),
// classified for one dispatch key. Producers fill it; renderers and the diff only read it.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "registry/op_status.h"

namespace mps_audit {

struct RegistryEntry {
  std::string name;  // "aten::add.Tensor"; the overload is omitted when empty ("aten::sin")
  OpStatus status = OpStatus::kNone;
  std::string schema;  // the operator's schema, as its source spells it
  std::string kernel;  // the C++ kernel that serves the key, when the source names it
  std::string source;  // where the status comes from: "native_functions.yaml:123", "dispatcher", ...
  std::string note;    // anything a reader should know, e.g. that a hand-registered kernel is a stub
};

struct Registry {
  std::string key;                 // the dispatch key classified for, e.g. "MPS"
  std::string origin;              // "live" or "native_functions"
  std::string path;                // the native_functions.yaml read (empty when live)
  std::string extra_path;          // the extra registrations applied (empty when none)
  std::string torch_version;       // of the linked libtorch (live) or of the release, when known
  std::vector<RegistryEntry> ops;  // sorted by name, names unique

  // Counts per status, indexed by static_cast<size_t>(OpStatus).
  std::array<size_t, kAllOpStatuses.size()> counts() const;
  // "the live dispatcher of libtorch 1.13.0" or "native_functions.yaml of PyTorch 2.11.0"
  std::string describe() const;
  const RegistryEntry* find(const std::string& name) const;
};

// Sorts by name; asserts that names are unique.
void sort_entries(std::vector<RegistryEntry>& ops);

// "aten::add.Tensor" from namespace, name and overload.
std::string qualified_op_name(const std::string& ns, const std::string& name, const std::string& overload);

}  // namespace mps_audit
