// What a --target value means here: see targets.h.
#include "targets/targets.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/diagnostics.h"
#include "common/flags.h"
#include "common/text.h"
#include "common/torch_info.h"
#include "targets/host.h"

namespace mps_audit {

const std::vector<std::string>& probe_target_names() {
  static const std::vector<std::string> names = {"mps", "mps-emu", "cuda", "cpu", "meta"};
  return names;
}

std::string resolve_target(const std::string& requested, std::string& why) {
  std::vector<std::string> targets = {"auto"};
  targets.insert(targets.end(), probe_target_names().begin(), probe_target_names().end());
  check_choice("--target", requested, targets);
  const TorchInfo torch = linked_torch_info();
  if (requested == "auto") {
    const std::string picked = torch.has_mps ? "mps" : torch.has_cuda ? "cuda" : "mps-emu";
    why = fmt::format("target: auto picked {}{}\n", picked,
                      picked == "mps-emu" ? " (this libtorch has neither MPS nor CUDA: MPS is emulated)" : "");
    return picked;
  }
  if (requested == "mps" && !torch.has_mps) {
    throw UserError(
        "--target mps: this libtorch has no MPS backend (that needs macOS on Apple silicon); "
        "--target mps-emu emulates it");
  }
  if (requested == "cuda" && !torch.has_cuda) throw UserError("--target cuda: this libtorch was built without CUDA");
  return requested;
}

c10::Device device_for(const std::string& target) {
  if (target == "mps" || target == "mps-emu") return c10::Device(c10::DeviceType::MPS, 0);
  if (target == "cuda") return c10::Device(c10::DeviceType::CUDA, 0);
  if (target == "meta") return c10::Device(c10::DeviceType::Meta);
  return c10::Device(c10::DeviceType::CPU);
}

int macos_major_version() {
  return std::atoi(macos_version().c_str());
}

}  // namespace mps_audit
