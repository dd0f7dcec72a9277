// Reads the linked libtorch's version and backends from c10's dispatcher, without pulling in
// the CUDA or MPS headers (which a given libtorch may not have).
#include "common/torch_info.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DispatchKey.h>

#include "common/torch_compat.h"

namespace mps_audit {
namespace {

// A backend is present when its library registered kernels for its key: empty_strided is among the
// operators every backend must implement.
bool backend_registered(c10::DispatchKey key) {
  auto op = c10::Dispatcher::singleton().findOp({"aten::empty_strided", ""});
  return op && op->hasKernelForDispatchKey(key);
}

}  // namespace

TorchInfo linked_torch_info() {
  TorchInfo info;
  info.version = compat::kTorchVersion;
  info.has_cuda = backend_registered(c10::DispatchKey::CUDA);
  info.has_mps = backend_registered(c10::DispatchKey::MPS);
  return info;
}

}  // namespace mps_audit
