// Emulated MPS as the process's accelerator: see emulated_accelerator.h.
//
// Note [Emulated MPS as the accelerator]
// libtorch 2.x's autograd engine (2.11's, for one) synchronizes each backward node with the streams its incoming
// gradients were made on, whenever they live on an accelerator's device type (at::accelerator::isAccelerator: MPS is
// one). It takes the node's own stream from the process's accelerator (Node::stream(): the stream of its first input
// on the device type at::accelerator::getAccelerator() names) and asserts when there is none ("opt_ready_stream &&
// opt_parent_stream", engine.cpp). getAccelerator() names the device type whose hooks say isBuilt() (CUDA's, MPS's,
// ...: at most one, or it throws), so on a Mac it is MPS and on a CUDA build of libtorch it is CUDA, whether or not a
// GPU is visible. make_emulated_mps_the_accelerator() makes the emulated process look like a Mac:
//  - where the linked libtorch has CUDA, CUDA hooks of a higher priority than libtorch's own that are the interface's
//    defaults (not built, no CUDA), and CUDA_VISIBLE_DEVICES empty, so that the CUDA runtime shows no device and the
//    engine starts no thread, nor CUDA context, for one;
//  - MPS hooks (MPSHooksRegistry's "MPSHooks", as the real backend's REGISTER_MPS_HOOKS) that say built and
//    available, with one device whose context exists (GraphTask stashes each device's current stream where
//    hasPrimaryContext says so) and nothing to initialize or synchronize.
// The engine then records and waits on events of EmulatedMpsGuard (emulated_device.cc), done as soon as recorded.
// libtorch makes each hooks object once, when first asked, so this must come before anything asks (describe_host asks
// whether CUDA is available): `mps-audit model --target mps-emu` does it first thing in its audit process, which then
// has no CUDA (its environment block says CUDA is not available). Where libtorch made its CUDA hooks before, it says so
// and leaves CUDA as it is. libtorch 1.13's engine asks for no accelerator: there, nothing is registered.
#include "emu/emulated_accelerator.h"

#include "common/torch_compat.h"

#if MPS_AUDIT_TORCH_ACCELERATOR_HOOKS
#include <cstdlib>
#include <memory>

#include <ATen/DeviceAccelerator.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <ATen/detail/MPSHooksInterface.h>

#include "emu/mps_emulator.h"
#endif

namespace mps_audit::emu {

#if MPS_AUDIT_TORCH_ACCELERATOR_HOOKS
namespace {

// What libtorch asks of MPS's hooks once MPS is the accelerator (Note [Emulated MPS as the accelerator]): emulated
// kernels run synchronously on host memory, so there is nothing to set up or wait for.
struct EmulatedMpsHooks final : at::MPSHooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasMPS() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  void init() const override {}
  void deviceSynchronize() const override {}
  bool isOnMacOSorNewer(unsigned major, unsigned minor) const override {
    const EmulatorInfo* emulator = active_mps_emulator();
    const auto macos = static_cast<unsigned>(emulator ? emulator->macos_major : EmulatorOptions{}.macos_major);
    return macos > major || (macos == major && minor == 0);
  }
};

}  // namespace
#endif

std::string make_emulated_mps_the_accelerator() {
#if MPS_AUDIT_TORCH_ACCELERATOR_HOOKS
  static const std::string why_not = []() -> std::string {
    if (at::MPSHooksRegistry()->Has("MPSHooks")) return "this libtorch has a real MPS backend";
    const bool cuda = at::CUDAHooksRegistry()->Has("CUDAHooks");
    if (cuda) {
      at::CUDAHooksRegistry()->Register(
          "CUDAHooks", [](auto&&...) { return std::make_unique<at::CUDAHooksInterface>(); }, c10::REGISTRY_PREFERRED);
    }
    if (at::detail::getCUDAHooks().isBuilt()) {
      return "libtorch's CUDA is this process's accelerator already (it was asked about CUDA before)";
    }
    if (cuda) ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
    // The creator takes whatever this libtorch's registry passes (see common/torch_compat.h).
    at::MPSHooksRegistry()->Register("MPSHooks", [](auto&&...) -> std::unique_ptr<at::MPSHooksInterface> {
      return std::make_unique<EmulatedMpsHooks>();
    });
    if (!at::detail::getMPSHooks().isBuilt()) return "libtorch's MPS hooks were made before the emulator's";
    try {
      if (at::accelerator::getAccelerator(false) == c10::DeviceType::MPS) return "";
    } catch (const c10::Error& e) {
      return e.what_without_backtrace();
    }
    return "another device type is this process's accelerator";
  }();
  return why_not;
#else
  return "";
#endif
}

}  // namespace mps_audit::emu
