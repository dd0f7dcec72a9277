// The target as a value: see target.h.
#include "common/target.h"

#include <array>
#include <utility>

namespace mps_audit {
namespace {

constexpr std::array<std::pair<TargetKind, std::string_view>, 5> kNames = {{
    {TargetKind::kMps, "mps"},
    {TargetKind::kMpsEmu, "mps-emu"},
    {TargetKind::kCuda, "cuda"},
    {TargetKind::kCpu, "cpu"},
    {TargetKind::kMeta, "meta"},
}};

}  // namespace

std::string_view to_string(TargetKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "cpu";
}

const std::vector<std::string>& target_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& entry : kNames) out.emplace_back(entry.second);
    return out;
  }();
  return names;
}

std::optional<TargetKind> target_kind_named(std::string_view name) {
  for (const auto& [kind, n] : kNames) {
    if (n == name) return kind;
  }
  return std::nullopt;
}

std::string_view Target::name() const {
  return to_string(kind);
}

c10::Device Target::device() const {
  switch (kind) {
    case TargetKind::kMps:
    case TargetKind::kMpsEmu: return c10::Device(c10::DeviceType::MPS, 0);
    case TargetKind::kCuda: return c10::Device(c10::DeviceType::CUDA, 0);
    case TargetKind::kMeta: return c10::Device(c10::DeviceType::Meta);
    case TargetKind::kCpu: break;
  }
  return c10::Device(c10::DeviceType::CPU);
}

std::string_view Target::backend() const {
  switch (kind) {
    case TargetKind::kMps:
    case TargetKind::kMpsEmu: return "MPS";
    case TargetKind::kCuda: return "CUDA";
    case TargetKind::kMeta: return "Meta";
    case TargetKind::kCpu: break;
  }
  return "CPU";
}

}  // namespace mps_audit
