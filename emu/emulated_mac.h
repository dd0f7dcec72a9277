// The Mac an emulated MPS run stands for: its macOS version (major.minor, as PyTorch compares it) and its chip
// (Apple GPU family, and whether MPS uses its Metal 4 kernels). See Note [The emulated Mac] in emulated_mac.cc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "emu/expectations.h"

namespace mps_audit::emu {

enum class Chip { kAny, kM1, kM2, kM3, kM4, kM5 };

struct EmulatedMac {
  MacosVersion macos = 1400;  // 13.3 -> 1303
  Chip chip = Chip::kAny;     // kAny: no chip in particular; chip-dependent data annotates

  // "macOS 13.3, M1 (Apple GPU family 7, Metal 3)" or "macOS 15.0, any chip". `metal_version`: a real Mac's
  // PYTORCH_MPS_METAL_VERSION, where "3" forces the Metal 3 library on an M5.
  std::string describe(const char* metal_version = nullptr) const;
};

// --emu-macos "13.3" (or "14", meaning 14.0) -> 1303. Throws UserError naming `flag` and the valid values for
// anything else: a major of MPS's macOS versions (12 to 15, 26, 27) and a minor of 0 to 9.
MacosVersion parse_emu_macos(std::string_view flag, std::string_view text);
// 1303 -> "13.3"
std::string macos_text(MacosVersion v);

// --emu-chip "m1" ... "m5" (or "any"). Throws UserError naming `flag` and the valid values for anything else.
Chip parse_chip(std::string_view flag, std::string_view text);
std::string_view to_string(Chip chip);  // "m1", ..., "any"
// A real Mac's chip from the name macOS gives it (sysctl machdep.cpu.brand_string: "Apple M3 Max"); kAny for a name
// of no known chip, and for a virtualized macOS ("Apple M1 (Virtual)"), which reports no GPU family.
Chip chip_of(std::string_view brand);
// The Apple GPU family of the chip's GPU: M1 7, M2 8, M3 and M4 9, M5 10; 0 for kAny.
int gpu_family(Chip chip);
// Whether MPS runs its Metal 4 kernels there: an M5 on macOS 26 or later (PYTORCH_MPS_METAL_VERSION=3 forces the
// Metal 3 library on a real Mac).
bool uses_metal4(Chip chip, MacosVersion macos);

// The macOS an emulated run stands for when --emu-macos is not given: the newest version that any of `conditions`
// ("<15.0", ">=13.3,<14.4": the release's expectations, its known bugs and its limits of MPS) names, and at least 14.0,
// where MPS's dtype rules change: a later macOS is the same to the data.
MacosVersion newest_named_macos(const std::vector<std::string>& conditions);

}  // namespace mps_audit::emu
