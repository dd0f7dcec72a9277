// What the linked libtorch is and can do: its version and the backends it was built with.
#pragma once

#include <string>

namespace mps_audit {

struct TorchInfo {
  std::string version;  // as libtorch reports it, e.g. "2.11.0"
  bool has_cuda = false;
  bool has_mps = false;
};

TorchInfo linked_torch_info();

}  // namespace mps_audit
