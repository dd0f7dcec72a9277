// The emulated Mac's macOS version and chip.
#include "emu/emulated_mac.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/diagnostics.h"
#include "common/text.h"

namespace mps_audit::emu {

// Note [The emulated Mac]
// What MPS does depends on the Mac as well as the release: PyTorch's lists compare the macOS version at major.minor
// (MACOS_BEFORE_13_3, MACOS_BEFORE_14_4), its kernels take other routes on Apple7/8 GPUs (M1, M2) and on M5's Metal 4
// path, and known bugs (emu/known_bugs.h) name both. An emulated run stands for one macOS version (--emu-macos,
// default: the newest any of the release's conditions names, so that a later macOS is the same to the data) and one
// chip (--emu-chip, default any: a chip-dependent bug is then noted, never applied). Every report names both.

namespace {

constexpr int kMajors[] = {12, 13, 14, 15, 26, 27};
constexpr std::string_view kChips[] = {"m1", "m2", "m3", "m4", "m5"};

}  // namespace

MacosVersion parse_emu_macos(std::string_view flag, std::string_view text) {
  const auto bad = [&]() {
    return UserError(
        fmt::format("{} must be a macOS version major.minor such as 13.2, 13.3, 14.4, 15.2 or 26.1 "
                    "(majors 12 to 15, 26 and 27; minors 0 to 9), not '{}'",
                    flag, text));
  };
  const size_t dot = text.find('.');
  const std::string_view major_text = text.substr(0, dot);
  const std::string_view minor_text = dot == std::string_view::npos ? "0" : text.substr(dot + 1);
  const auto digits = [](std::string_view s) {
    return !s.empty() && s.size() <= 2 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(major_text) || !digits(minor_text) || minor_text.size() != 1) throw bad();
  const int major = std::stoi(std::string(major_text));
  if (std::find(std::begin(kMajors), std::end(kMajors), major) == std::end(kMajors)) throw bad();
  return major * 100 + (minor_text[0] - '0');
}

std::string macos_text(MacosVersion v) {
  return fmt::format("{}.{}", v / 100, v % 100);
}

Chip parse_chip(std::string_view flag, std::string_view text) {
  if (text == "any") return Chip::kAny;
  for (size_t i = 0; i < std::size(kChips); ++i) {
    if (kChips[i] == text) return static_cast<Chip>(i + 1);
  }
  throw UserError(fmt::format("{} must be m1, m2, m3, m4 or m5 (any: no chip in particular), not '{}'", flag, text));
}

std::string_view to_string(Chip chip) {
  return chip == Chip::kAny ? "any" : kChips[static_cast<size_t>(chip) - 1];
}

int gpu_family(Chip chip) {
  switch (chip) {
    case Chip::kM1: return 7;
    case Chip::kM2: return 8;
    case Chip::kM3:
    case Chip::kM4: return 9;
    case Chip::kM5: return 10;
    case Chip::kAny: return 0;
  }
  return 0;
}

bool uses_metal4(Chip chip, MacosVersion macos) {
  return chip == Chip::kM5 && macos >= 2600;
}

Chip chip_of(std::string_view brand) {
  if (brand.find("Virtual") != std::string_view::npos) return Chip::kAny;
  for (size_t i = 0; i < std::size(kChips); ++i) {
    const std::string name = fmt::format("Apple M{}", i + 1);
    if (brand.substr(0, name.size()) == name && (brand.size() == name.size() || brand[name.size()] == ' ')) {
      return static_cast<Chip>(i + 1);
    }
  }
  return Chip::kAny;
}

std::string EmulatedMac::describe(const char* metal_version) const {
  if (chip == Chip::kAny) return fmt::format("macOS {}, any chip", macos_text(macos));
  std::string name(to_string(chip));
  name[0] = 'M';
  const bool forced3 = metal_version && std::string_view(metal_version) == "3";
  return fmt::format("macOS {}, {} (Apple GPU family {}, Metal {}{})", macos_text(macos), name, gpu_family(chip),
                     uses_metal4(chip, macos) && !forced3 ? 4 : 3,
                     uses_metal4(chip, macos) && forced3 ? ", forced by PYTORCH_MPS_METAL_VERSION=3" : "");
}

MacosVersion newest_named_macos(const std::vector<std::string>& conditions) {
  MacosVersion newest = 1400;
  for (const auto& condition : conditions) {
    for (const auto& bound : split_list(condition)) {
      const size_t digit = bound.find_first_of("0123456789");
      if (digit == std::string::npos) continue;
      if (const auto v = parse_macos_version(std::string_view(bound).substr(digit))) newest = std::max(newest, *v);
    }
  }
  return newest;
}

}  // namespace mps_audit::emu
