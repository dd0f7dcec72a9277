// The device of emulated MPS: memory that says it lives on mps:0 and that code on the CPU cannot reach (Note [Emulated
// MPS memory] in device_memory.cc), the device guard, and the CPU views through which the emulator's kernels compute
// on MPS tensors (Note [MPS emulation] in mps_emulator.cc). For the emulator's own files.
#pragma once

#include <cstddef>

#include <ATen/core/Tensor.h>
#include <c10/core/Allocator.h>
#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>

namespace mps_audit::emu {

// Makes DeviceType::MPS a device: its allocator and its device guard; once, as the emulator is activated. Returns
// whether its memory is kept from the CPU (Note [Emulated MPS memory] in device_memory.cc); where it is not, each
// allocation comes in whole pages of its own with `whole_pages`, so that a touch fault (emu/faults.h) can make one
// tensor's memory unreadable. `macos_major`: the macOS whose dtype rules `check_dtype` applies.
bool register_emulated_device(bool whole_pages, int macos_major);

// The allocator of MPS tensors' memory.
c10::Allocator& emulated_allocator();

size_t page_size();

// Half and bfloat16: Metal computes in them where some CPU kernels do not.
bool low_precision(c10::ScalarType type);

// Refuses a dtype that MPS refuses on the emulated macOS (emu/dtype_rules.h), where an MPS tensor is made.
void check_dtype(c10::ScalarType type);

// A CPU tensor over the same memory as an MPS tensor, with the same layout, at the addresses where the CPU may read
// and write it (device_memory.h's host_address). Its storage cannot be resized.
at::Tensor cpu_view(const at::Tensor& t);

// `t` itself, or its CPU view when it is an MPS tensor.
at::Tensor host_view(const at::Tensor& t);

at::Tensor empty_mps_strided(c10::IntArrayRef sizes, c10::IntArrayRef strides, c10::ScalarType dtype);

// A new MPS tensor holding a CPU result.
at::Tensor to_mps(const at::Tensor& cpu);

}  // namespace mps_audit::emu
