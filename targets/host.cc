// The host description behind `mps-audit env` and every result file's environment block.
#include "targets/host.h"

#include <algorithm>
#include <cstdlib>

#include <ATen/Context.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/utsname.h>
#ifdef __APPLE__
#include <sys/sysctl.h>
#endif

#include "common/diagnostics.h"
#include "common/paths.h"
#include "common/torch_compat.h"
#include "common/torch_info.h"
#include "emu/emulated_mac.h"
#include "emu/mps_emulator.h"
#include "registry/release_data.h"

namespace mps_audit {
namespace {

// The GPUs' names from the CUDA driver (libcuda), whose C API is stable across CUDA releases; libtorch's CUDA headers
// may not be installed, and a CPU build has none.
std::vector<std::string> cuda_device_names(int count) {
  std::vector<std::string> names;
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  using Init = int (*)(unsigned);
  using Get = int (*)(int*, int);
  using Name = int (*)(char*, int, int);
  auto init = lib ? reinterpret_cast<Init>(dlsym(lib, "cuInit")) : nullptr;
  auto get = lib ? reinterpret_cast<Get>(dlsym(lib, "cuDeviceGet")) : nullptr;
  auto name = lib ? reinterpret_cast<Name>(dlsym(lib, "cuDeviceGetName")) : nullptr;
  const bool usable = init && get && name && init(0) == 0;
  for (int i = 0; i < count; ++i) {
    char buf[256] = {0};
    int device = 0;
    if (usable && get(&device, i) == 0 && name(buf, sizeof buf, device) == 0) {
      names.push_back(fmt::format("cuda:{} {}", i, buf));
    } else {
      names.push_back(fmt::format("cuda:{}", i));
    }
  }
  return names;
}

// The release folders the MPS emulator can take: pytorch-X.Y.Z folders in $MPS_AUDIT_DATA_DIR and in the source
// tree's data/ (emu::find_release_dir looks in the same places).
void add_emulator_releases(AvailableTarget& t) {
  for (const auto& r : shipped_releases()) {
    t.releases.push_back(r.version);
    t.release_dirs.push_back(r.dir);
  }
  if (t.releases.empty()) {  // a torch wheel's own YAML
    const std::string own = emu::find_release_dir(compat::kTorchVersion);
    if (!own.empty()) {
      t.releases.push_back(compat::kTorchVersion);
      t.release_dirs.push_back(own);
    }
  }
}

}  // namespace

std::string os_description() {
  struct utsname u {};
  if (uname(&u) != 0) return "unknown";
  return fmt::format("{} {} ({})", u.sysname, u.release, u.machine);
}

namespace {

// A string that macOS's sysctl gives by name; empty elsewhere, or when it has none.
std::string sysctl_string([[maybe_unused]] const char* name) {
#ifdef __APPLE__
  char value[128] = {0};
  size_t size = sizeof value;
  if (sysctlbyname(name, value, &size, nullptr, 0) == 0) return value;
#endif
  return "";
}

}  // namespace

std::string macos_version() {
  return sysctl_string("kern.osproductversion");
}

std::string mac_chip() {
  return sysctl_string("machdep.cpu.brand_string");
}

void describe_host(RunEnvironment& env) {
  env.torch_version = compat::kTorchVersion;
  env.os = os_description();
  env.macos = macos_version();
  env.chip = mac_chip();
  // An active emulator registers kernels for the MPS key, which the dispatcher scan would take for a real backend.
  const TorchInfo torch = linked_torch_info();
  env.mps_built = torch.has_mps && emu::active_mps_emulator() == nullptr;
  env.mps_available = env.mps_built && at::hasMPS();
  if (!env.mps_built) {
    env.mps_why_not = env.macos.empty()
                          ? "this libtorch was built without MPS (MPS needs macOS 12.3+ on Apple silicon and a "
                            "torch build for it)"
                          : "this libtorch was built without MPS (install a torch wheel for macOS on arm64)";
  } else if (!env.mps_available) {
    env.mps_why_not = "no MPS device is usable (Apple silicon and macOS 12.3 or newer are needed)";
  } else {
    env.mps_why_not.clear();
  }
  env.cuda_built = torch.has_cuda;
  env.cuda_available = torch.has_cuda && at::hasCUDA();
  env.cuda_devices.clear();
  if (env.cuda_available) env.cuda_devices = cuda_device_names(at::detail::getCUDAHooks().getNumGPUs());
  const char* variable = std::getenv("PYTORCH_ENABLE_MPS_FALLBACK");
  env.fallback_variable = variable ? std::optional<std::string>(variable) : std::nullopt;

  env.targets.clear();
  if (env.mps_available) env.targets.push_back({"mps", {}, {}});
  if (!env.mps_built) {
    AvailableTarget emu{"mps-emu", {}, {}};
    add_emulator_releases(emu);
    if (!emu.releases.empty()) env.targets.push_back(std::move(emu));
  }
  if (env.cuda_available) env.targets.push_back({"cuda", {}, {}});
  env.targets.push_back({"cpu", {}, {}});
  env.targets.push_back({"meta", {}, {}});
}

std::string render_environment_text(const RunEnvironment& env) {
  std::string s;
  s += fmt::format("torch {} on {}{}\n", env.torch_version, env.os,
                   env.macos.empty() ? "" : fmt::format(", macOS {}", env.macos));
  s += fmt::format("mps:     built {}, available {}{}\n", env.mps_built ? "yes" : "no",
                   env.mps_available ? "yes" : "no", env.mps_why_not.empty() ? "" : " — " + env.mps_why_not);
  if (!env.chip.empty()) {
    const auto version = emu::parse_macos_version(env.macos);
    const emu::EmulatedMac mac{version.value_or(0), emu::chip_of(env.chip)};
    s += fmt::format("mac:     {}: {}\n", env.chip,
                     mac.chip == emu::Chip::kAny ? "no Apple GPU family (a virtualized macOS reports none)"
                                                 : mac.describe(std::getenv("PYTORCH_MPS_METAL_VERSION")));
  }
  s += fmt::format("cuda:    built {}, available {}{}\n", env.cuda_built ? "yes" : "no",
                   env.cuda_available ? "yes" : "no",
                   env.cuda_devices.empty() ? "" : fmt::format(" ({})", fmt::join(env.cuda_devices, ", ")));
  s += fmt::format("PYTORCH_ENABLE_MPS_FALLBACK={}: {}\n",
                   env.fallback_variable ? *env.fallback_variable : std::string("(unset)"),
                   fallback_variable_meaning(env.fallback_variable));
  s += "targets:\n";
  for (const auto& t : env.targets) {
    if (t.name == "mps-emu") {
      std::vector<std::string> releases;
      for (size_t i = 0; i < t.releases.size() && i < t.release_dirs.size(); ++i) {
        releases.push_back(fmt::format("{} ({})", t.releases[i], t.release_dirs[i]));
      }
      s += fmt::format("  mps-emu  emulated MPS; --emu-release: {}\n", fmt::join(releases, ", "));
    } else {
      s += fmt::format("  {}\n", t.name);
    }
  }
  return s;
}

}  // namespace mps_audit
