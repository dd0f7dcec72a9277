// Faults of code on the CPU that touched memory of a device it cannot reach (Note [Caught faults]).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>
#include <c10/core/Storage.h>

namespace mps_audit {

// Bytes [begin, end) of device memory, and what they are ("argument 'shape'").
struct DeviceMemory {
  uintptr_t begin = 0, end = 0;
  std::string what;
  // The storage whose bytes they were, for a tensor's: an argument that the operator resized before it faulted
  // (libtorch 1.13's linalg_eigvals.out resizes its out) holds other memory by then, and that is the argument's too.
  c10::Storage storage;
};

// The memory behind the tensors of `args` (the arguments of `schema`, in order) that live on `device`.
std::vector<DeviceMemory> device_memory_of(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args,
                                           const c10::Device& device);

struct CaughtFault {
  int signal = 0;      // SIGSEGV or SIGBUS
  std::string access;  // "read", "wrote to" or "touched" (where the processor does not say)
  std::string what;    // the DeviceMemory's `what`
  // "signal 11 (Segmentation fault): code on the CPU read argument 'shape', which is in cuda:0 memory"
  std::string description;
};

// Whether an address is in the device's memory. For a CUDA device, without one given, the CUDA driver says.
using DeviceAddressCheck = std::function<bool(uintptr_t)>;

// Runs f on this thread. When f faults on an address inside `memory` (or inside what its storages hold by then), or
// on one that `is_device_address` says is the device's, f is abandoned and the fault returned, with the thread's ATen
// state (dispatch keys, grad mode, ...) and `device`'s current stream as they were before f. Any other fault ends the
// process as it would without this function.
std::optional<CaughtFault> run_catching_device_faults(const std::vector<DeviceMemory>& memory,
                                                      const c10::Device& device, const std::function<void()>& f,
                                                      DeviceAddressCheck is_device_address = {});

// How many faults this process caught so far.
size_t faults_caught();

}  // namespace mps_audit
