// The memory of emulated MPS, kept from the CPU as a Mac's is (Note [Emulated MPS memory] in device_memory.cc). For
// the emulator's own files; plain C++, no libtorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mps_audit::emu {

// Sets the memory up, once a process (a forked child sets up its own), before the first allocation. On Linux its pages
// are mapped twice: at the addresses that tensors hold, where nothing can read or write them, and at others, through
// which the emulator's kernels do (host_address()). Elsewhere, or where that cannot be set up, it is ordinary heap
// memory that any code can read, in whole pages of its own with `whole_pages` (for the touch fault, emu/faults.h).
// Returns whether the memory is kept from the CPU.
bool init_device_memory(bool whole_pages);

// Whether init_device_memory() kept the memory from the CPU.
bool device_memory_kept_from_cpu();

// Whole pages of their own for `bytes` bytes (nullptr for none); throws std::bad_alloc when there are no more.
void* allocate_device_memory(size_t bytes);
void free_device_memory(void* p);

// Where the emulator's kernels read and write the device memory at `device` (`device` itself outside it).
void* host_address(const void* device);

// Whether `address` is device memory (always false while it is not kept from the CPU).
bool is_device_address(uintptr_t address);

// Makes the device memory of the given blocks (the starts of allocations; anything else is ignored) readable and
// writable where tensors address it, and so every block allocated until the last such window is closed: for the
// CPU kernels that the emulator runs on MPS tensors themselves and that may move a storage's bytes (resize_, set_).
// Windows nest, on any thread; the last one closed makes all of it unreachable again.
class DeviceMemoryWindow {
 public:
  explicit DeviceMemoryWindow(const std::vector<const void*>& blocks);
  ~DeviceMemoryWindow();
  DeviceMemoryWindow(const DeviceMemoryWindow&) = delete;
  DeviceMemoryWindow& operator=(const DeviceMemoryWindow&) = delete;
};

// Closes the windows whose frames a caught fault abandoned (Note [Caught faults] in probe/caught_faults.cc).
void close_abandoned_windows();

}  // namespace mps_audit::emu
