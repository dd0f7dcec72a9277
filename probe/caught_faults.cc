// Note [Caught faults]
// Some operators run code on the CPU that reads or writes tensor memory directly, also when the tensors live on a
// device whose memory the CPU cannot reach: a CUDA tensor's data pointer is an address the host has no page for,
// and the process dies of SIGSEGV (aten::_reshape_from_tensor reading its shape, the _sobol_engine_* operators,
// range.out_ writing its result). The verdict is "crash", and it used to cost a worker: on a GPU, a new process, a
// new CUDA context (the driver creates contexts one after another, about a quarter of a second each, however many
// cores the machine has) and every kernel module loaded again; and such an operator usually crashes the same way in
// each of its ten dtypes.
//
// Such a fault stopped the access that caused it: the faulting instruction did not complete, and the CPU had not
// touched the device's memory before, since it cannot. So, on Linux, during the run on the target and only there, a
// worker catches SIGSEGV and SIGBUS raised by a fault on the probing thread: the handler jumps back to the probe
// (siglongjmp), which looks at the address. One inside the memory of the probe's own device tensors (or in what their
// storages hold by then: libtorch 1.13's linalg_eigvals.out resizes its out before it writes it), or one the device
// says is its own (for CUDA, the driver's cuPointerGetAttribute; for emulated MPS, the emulator: memory the operator
// allocated itself), is recorded as the crash, with what was touched ("code on the CPU read argument 'shape', which is
// in cuda:0 memory"), after the thread's ATen state and the device's current stream are restored; the operator's frames
// are abandoned, and what they allocated is never freed. Any other address ends the process with the same signal, as
// without the handler; so does a fault on another thread or in the CPU reference, and the parent records it as before.
//
// Emulated MPS memory faults the same way, since the emulator keeps it from the CPU as a Mac does (Note [Emulated MPS
// memory] in emu/device_memory.cc): _grid_sampler_2d_cpu_fallback reads argument 'grid' on emulated MPS as on CUDA.
// There a caught fault leaves nothing of the device behind: the emulator closes the memory that the emulated kernels
// whose frames were abandoned had opened (emu::after_caught_fault), and no later result is touched (only the
// injected touch fault, emu/faults.h, which stands for a fault that poisons a CUDA process, makes later results
// wrong on purpose). The abandoned frames are the CPU's all the same, so the rule below holds there too.
//
// A worker that caught a fault says so, and goes on with the rest of that operator only (its other dtypes, which
// usually fault the same way), then exits: no other operator runs in a process whose state a fault may have left
// behind (a lock or a thread-local of the abandoned frames; see Note [Worker protocol]), and a probe that hangs or
// dies there runs again in a new worker (Note [Probes after a caught fault] in run/pool.cc). The emulator's touch
// faults (emu/faults.h) make such faults on demand for the tests.
#include "probe/caught_faults.h"

#include <algorithm>
#include <csetjmp>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include <ATen/ThreadLocalState.h>
#include <ATen/core/Tensor.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <fmt/format.h>
#ifdef __linux__
#include <dlfcn.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#endif

#include "common/ivalue_tensors.h"
#include "emu/mps_emulator.h"

namespace mps_audit {
namespace {

#ifdef __linux__
enum Access : int { kTouched = 0, kRead = 1, kWrote = 2 };

// What the handler needs, set up before it is armed; plain data, so that the handler reads it safely.
struct Armed {
  sigjmp_buf env;
  long thread = 0;
  volatile sig_atomic_t active = 0;
  // Filled by the handler before it jumps.
  int signal = 0;
  uintptr_t address = 0;
  int access = kTouched;
};

Armed g_armed;
size_t g_caught = 0;
struct sigaction g_previous_segv, g_previous_bus;

long this_thread() {
  return static_cast<long>(::syscall(SYS_gettid));
}

// Whether the faulting access was a read or a write, where the processor says.
int access_of(void* context) {
#if defined(__linux__) && defined(__x86_64__)
  // The page-fault error code: bit 1 is set for a write.
  return (static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR] & 2) ? kWrote : kRead;
#else
  (void)context;
  return kTouched;
#endif
}

const struct sigaction& previous(int signal) {
  return signal == SIGBUS ? g_previous_bus : g_previous_segv;
}

// A fault of the armed thread goes back to run_catching_device_faults, which looks at its address (with calls no
// signal handler may make) and either records it or dies of it. Anything else goes to the previous disposition (the
// default: the process dies of the signal): a fault happens again when the handler returns, a signal sent by
// someone is sent again.
extern "C" void on_fault(int signal, siginfo_t* info, void* context) {
  if (g_armed.active && info->si_code > 0 && this_thread() == g_armed.thread) {
    g_armed.active = 0;
    g_armed.signal = signal;
    g_armed.address = reinterpret_cast<uintptr_t>(info->si_addr);
    g_armed.access = access_of(context);
    siglongjmp(g_armed.env, 1);
  }
  ::sigaction(signal, &previous(signal), nullptr);
  if (info->si_code <= 0) ::raise(signal);
}

// Ends the process as the fault would have without the handler.
[[noreturn]] void die_of(int signal) {
  ::sigaction(signal, &previous(signal), nullptr);
  ::raise(signal);
  std::_Exit(128 + signal);  // a previous handler that returned
}

// Whether `address` is in memory of the current CUDA context, as the driver says: cuPointerGetAttribute's memory
// type (libcuda's C API is stable across CUDA releases, and the process has loaded it to use the device).
bool cuda_device_address(uintptr_t address) {
  static void* const driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  using GetAttribute = int (*)(void*, int, unsigned long long);
  static const auto get = driver ? reinterpret_cast<GetAttribute>(::dlsym(driver, "cuPointerGetAttribute")) : nullptr;
  constexpr int kMemoryType = 2;   // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
  constexpr unsigned kDevice = 2;  // CU_MEMORYTYPE_DEVICE
  unsigned type = 0;
  return get && get(&type, kMemoryType, address) == 0 && type == kDevice;
}

void install_handler() {
  static const bool installed = [] {
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_sigaction = &on_fault;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGSEGV, &action, &g_previous_segv);
    ::sigaction(SIGBUS, &action, &g_previous_bus);
    return true;
  }();
  (void)installed;
}
#endif

}  // namespace

size_t faults_caught() {
#ifdef __linux__
  return g_caught;
#else
  return 0;
#endif
}

std::vector<DeviceMemory> device_memory_of(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args,
                                           const c10::Device& device) {
  std::vector<DeviceMemory> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string what = i < schema.arguments().size() ? fmt::format("argument '{}'", schema.arguments()[i].name())
                                                           : fmt::format("argument {}", i);
    map_tensors(args[i], [&](const at::Tensor& t) {
      if (t.defined() && t.device() == device && t.has_storage() && t.storage().nbytes() > 0) {
        const auto begin = reinterpret_cast<uintptr_t>(t.storage().data());
        if (begin != 0) out.push_back({begin, begin + t.storage().nbytes(), what, t.storage()});
      }
      return t;
    });
  }
  return out;
}

#ifdef __linux__
namespace {

// Runs f with the handler armed: true when a fault caught in it came back here instead of returning. The jump
// back lands in this frame alone, which holds nothing across sigsetjmp but `f` (never used after the jump): the
// caller's locals live in a frame the jump does not return into, so none of them can be left stale in a register
// (C11 7.13.2.1), and the compiler does not inline a function that calls sigsetjmp.
__attribute__((noinline)) bool faulted_while_running(const std::function<void()>& f) {
  g_armed.thread = this_thread();
  if (sigsetjmp(g_armed.env, /*savemask=*/1) != 0) return true;
  g_armed.active = 1;
  try {
    f();
  } catch (...) {
    g_armed.active = 0;
    throw;
  }
  g_armed.active = 0;
  return false;
}

}  // namespace
#endif

std::optional<CaughtFault> run_catching_device_faults(const std::vector<DeviceMemory>& memory,
                                                      const c10::Device& device, const std::function<void()>& f,
                                                      DeviceAddressCheck is_device_address) {
#ifndef __linux__
  // Only Linux's (for CUDA devices); elsewhere a fault ends the process, and the parent records it.
  (void)memory;
  (void)device;
  (void)is_device_address;
  f();
  return std::nullopt;
#else
  if (!is_device_address && device.is_cuda()) is_device_address = &cuda_device_address;
  // Emulated MPS memory, where code on the CPU cannot reach it (Note [Emulated MPS memory] in emu/device_memory.cc).
  const emu::EmulatorInfo* emulator = device.type() == c10::DeviceType::MPS ? emu::active_mps_emulator() : nullptr;
  if (!is_device_address && emulator && emulator->memory_kept_from_cpu)
    is_device_address = &emu::is_emulated_mps_address;
  if (memory.empty() && !is_device_address) {
    f();
    return std::nullopt;
  }
  install_handler();
  const at::ThreadLocalState state;
  // CUDA's current device and stream are the thread's own too, and a stream guard in f's frames may have changed
  // them.
  const c10::impl::DeviceGuardImplInterface* streams =
      device.is_cuda() && device.has_index() ? c10::impl::getDeviceGuardImpl(device.type()) : nullptr;
  const std::optional<c10::Stream> stream =
      streams ? std::optional<c10::Stream>(streams->getStream(device)) : std::nullopt;
  if (!faulted_while_running(f)) return std::nullopt;
  // Back from the handler: f's frames are gone, and with them whatever guards they held.
  const uintptr_t address = g_armed.address;
  auto it = std::find_if(memory.begin(), memory.end(),
                         [&](const DeviceMemory& m) { return address >= m.begin && address < m.end; });
  if (it == memory.end()) {  // memory an argument holds since f began
    it = std::find_if(memory.begin(), memory.end(), [&](const DeviceMemory& m) {
      if (!m.storage.unsafeGetStorageImpl()) return false;
      const auto begin = reinterpret_cast<uintptr_t>(m.storage.data());
      return begin != 0 && address >= begin && address < begin + m.storage.nbytes();
    });
  }
  if (it == memory.end() && !(is_device_address && is_device_address(address))) die_of(g_armed.signal);
  ++g_caught;
  at::ThreadLocalState::setThreadLocalState(state);
  if (emulator) emu::after_caught_fault();
  if (streams) {
    streams->uncheckedSetDevice(device);
    streams->exchangeStream(*stream);
  }
  CaughtFault fault;
  fault.signal = g_armed.signal;
  fault.access = g_armed.access == kRead ? "read" : g_armed.access == kWrote ? "wrote to" : "touched";
  fault.what = it != memory.end() ? it->what : fmt::format("{} memory that is not an argument's", device.str());
  fault.description = fmt::format("signal {} ({}): code on the CPU {} {}", fault.signal, strsignal(fault.signal),
                                  fault.access, fault.what);
  if (it != memory.end()) fault.description += fmt::format(", which is in {} memory", device.str());
  return fault;
#endif
}

}  // namespace mps_audit
