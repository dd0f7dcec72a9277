// The MPS emulation backend: DispatchKey::MPS on a libtorch built without MPS, with the kernel set of a chosen
// PyTorch release, so that the whole MPS code path of the tool runs on any machine. See Note [MPS emulation]
// in mps_emulator.cc for how it works; docs/emulator.md for what it reproduces and what it cannot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mps_audit::emu {

// Registered for MPS by the emulator although no release lists it for MPS (see Note [MPS emulation]).
inline constexpr const char* kPlumbingOps[] = {"copy_", "convolution_overrideable",
                                               "convolution_backward_overrideable"};

struct EmulatorOptions {
  std::string release_dir;  // data/pytorch-X.Y.Z-like folder; empty: the one matching the linked libtorch
  int macos_major = 14;     // data type rules of this macOS version
  // MPSFallback.mm's choice: the CPU fallback, or NotImplementedError; unset: PYTORCH_ENABLE_MPS_FALLBACK says.
  std::optional<bool> fallback;
  int macos = 0;  // major.minor (15.1 as 1501) for the macOS bounds of MPS's limits; 0: macos_major.0
};

struct EmulatorInfo {
  std::string release_version;  // "1.13.1"
  std::string release_dir;
  int macos_major = 14;
  int macos = 1400;               // major.minor, 15.1 as 1501
  bool fallback_enabled = false;  // PYTORCH_ENABLE_MPS_FALLBACK, as read at activation
  size_t native_kernels = 0;      // operators given an emulated native kernel
  size_t cpu_fallback_kernels = 0;
  size_t stub_kernels = 0;
  // Operators without a kernel in the release that the linked libtorch serves with a composite one: given MPS's
  // fallback, as on a Mac (Note [Kernels the linked libtorch lacks]).
  size_t release_fallbacks = 0;
  // Operators the release implements for MPS but the linked libtorch does not have at all.
  std::vector<std::string> absent_ops;
  // Whether code on the CPU that reads or writes MPS memory faults, as on a Mac (Linux; Note [Emulated MPS memory]).
  bool memory_kept_from_cpu = false;

  // "emulated MPS (PyTorch 1.13.1 registry, macOS 14 rules)": every report of an emulated run says so.
  std::string label() const;
};

// "emulated MPS (PyTorch 1.13.1 registry, macOS 14 rules)"
std::string emulator_label(const std::string& release_version, int macos_major);

// Registers the emulator for this process: once, before any MPS tensor exists. Reads PYTORCH_ENABLE_MPS_FALLBACK
// (unless `options` say) and MPS_AUDIT_EMU_FAULTS now, as the real backend reads its variable once when it loads.
// In a process forked from one that prepared the emulator, sets up only this process's device memory.
// Throws UserError when the linked libtorch has a real MPS backend, when no release data is found, or when
// called again with other options.
const EmulatorInfo& activate_mps_emulator(const EmulatorOptions& options);

// Registers the emulator's kernels without its device memory, in a process that will fork the processes that
// activate it (Note [Kernels registered before the fork] in mps_emulator.cc). Throws as activate_mps_emulator does.
void prepare_mps_emulator(const EmulatorOptions& options);

// nullptr until activate_mps_emulator succeeded.
const EmulatorInfo* active_mps_emulator();

// Whether `address` is emulated MPS memory that code on the CPU cannot reach (Note [Emulated MPS memory] in
// device_memory.cc): where a fault on it is code on the CPU that touched MPS memory.
bool is_emulated_mps_address(uintptr_t address);

// After a fault was caught (Note [Caught faults] in probe/caught_faults.cc): closes the MPS memory that emulated
// kernels whose frames the fault abandoned had opened.
void after_caught_fault();

// The release folder matching a libtorch version ("2.11.0"; "1.13.0" finds pytorch-1.13.1 too): in
// $MPS_AUDIT_DATA_DIR, then the data/ folder of the source tree this was built from, then (for the linked version)
// the torchgen/packaged/ATen/native folder of the torch wheel it was built against. Empty when none.
std::string find_release_dir(const std::string& torch_version);

// The release mps-emu emulates when none is named: the newest shipped one (registry/release_data.h), whatever
// libtorch is linked (Note [Kernels the linked libtorch lacks] in linked_gaps.cc says what another libtorch cannot
// show), else the linked libtorch's own YAML (a torch wheel's). Empty when there is neither.
std::string default_release_dir();

}  // namespace mps_audit::emu
