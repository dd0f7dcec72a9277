// The MPS emulation backend.
//
// Note [MPS emulation]
// On a libtorch built without MPS, DispatchKey::MPS and DeviceType::MPS exist but nothing is registered for them.
// activate_mps_emulator registers, for this process only:
//  - an allocator for DeviceType::MPS on host memory (its DataPtrs say mps:0) and a no-op device guard;
//  - for every operator the chosen release implements for MPS (registry/static_registry.cc, hand registrations
//    included), one boxed kernel:
//      native        computes with the operator's CPU kernel on CPU views of the same memory: no copy through
//                    at::_to_cpu, and RecordFunction is off inside, so a dispatcher trace sees one native MPS op;
//                    view and metadata operators (see is_metadata_op) run their device-agnostic CPU kernel on the
//                    MPS tensors themselves, so views alias MPS storage;
//      cpu_fallback  MPS's warning once, then at::native::cpu_fallback, whatever PYTORCH_ENABLE_MPS_FALLBACK says;
//      stub          raises, as the real stub does;
//    and dedicated kernels for the operators that make or move memory (empty, empty_strided, _copy_from,
//    _copy_from_and_resize, set_) and for as_strided (whose CPU kernel refuses MPS tensors), all in every
//    release's MPS set;
//  - kernels for copy_, convolution_overrideable and convolution_backward_overrideable, registrations the real
//    backend does not make (kPlumbingOps): there, CompositeExplicitAutograd's copy_ calls mps_copy_ from a branch
//    compiled only with USE_MPS (native/Copy.cpp), and DispatchStub has no MPS slot without USE_MPS either, so the
//    emulator must take copy_ at the MPS key; likewise _convolution picks its MPS backend (_mps_convolution and
//    friends) only with USE_MPS and otherwise calls the *_overrideable operators, which here make the same calls;
//  - the backend fallback of MPSFallback.mm: cpu_fallback with MPS's warning when PYTORCH_ENABLE_MPS_FALLBACK is a
//    non-zero integer at activation, otherwise NotImplementedError with MPS's message.
// Data types MPS refuses (emu/dtype_rules.cc) are refused where MPS tensors are created.
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
// The engine then records and waits on events of EmulatedMpsGuard, which are done as soon as recorded. libtorch makes
// each hooks object once, when first asked, so this must come before anything asks (describe_host asks whether CUDA
// is available): `mps-audit model --target mps-emu` does it first thing in its audit process, which then has no CUDA
// (its environment block says CUDA is not available). Where libtorch made its CUDA hooks before, it says so and
// leaves CUDA as it is. libtorch 1.13's engine asks for no accelerator: there, nothing is registered.
#include "emu/mps_emulator.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <regex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <ATen/EmptyTensor.h>
#include <ATen/NamedTensorUtils.h>
#include <ATen/core/NamedTensor.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_mps_convolution.h>
#include <ATen/ops/_mps_convolution_transpose.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>
#include <ATen/ops/mps_convolution_backward.h>
#include <ATen/ops/mps_convolution_transpose_backward.h>
#include <ATen/record_function.h>
#include <c10/core/DefaultDtype.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <fmt/format.h>
#ifdef __APPLE__
#include <malloc/malloc.h>
#else
#include <malloc.h>
#endif
#include <sys/mman.h>
#include <torch/library.h>
#include <unistd.h>

#include "common/data_home.h"
#include "common/diagnostics.h"
#include "common/ivalue_tensors.h"
#include "common/paths.h"
#include "common/text.h"
#include "common/torch_compat.h"
#include "emu/dtype_rules.h"
#include "emu/faults.h"
#include "registry/extra_registrations.h"
#include "registry/native_functions.h"
#include "registry/release_data.h"
#include "registry/static_registry.h"

#if MPS_AUDIT_TORCH_ACCELERATOR_HOOKS
#include <ATen/DeviceAccelerator.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <ATen/detail/MPSHooksInterface.h>
#endif

namespace mps_audit::emu {
namespace {

constexpr c10::DeviceType kMps = c10::DeviceType::MPS;

// Whether allocations come in whole pages of their own (while a touch fault is planned, see emu/faults.h).
bool g_whole_pages = false;

size_t page_size() {
  static const size_t size = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

size_t usable_size(void* p) {
#ifdef __APPLE__
  return malloc_size(p);
#else
  return malloc_usable_size(p);
#endif
}

// Host memory that says it lives on mps:0. Both allocate() signatures are declared: libtorch 1.13's base class
// has the const one, 2.x the other; whichever the base declares is the override (see common/torch_compat.h).
class EmulatedMpsAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) const { return make(n); }
  c10::DataPtr allocate(size_t n) { return make(n); }
  void copy_data(void* dest, const void* src, std::size_t count) const { std::memcpy(dest, src, count); }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }

 private:
  static void release(void* p) {
    // Pages a touch fault made unreadable become the heap's again.
    if (p && g_whole_pages) ::mprotect(p, usable_size(p) / page_size() * page_size(), PROT_READ | PROT_WRITE);
    std::free(p);
  }
  static c10::DataPtr make(size_t n) {
    void* p = nullptr;
    if (n > 0) {
      const size_t align = g_whole_pages ? page_size() : 64;
      p = std::aligned_alloc(align, (n + align - 1) / align * align);
      if (!p) throw std::bad_alloc();
    }
    return {p, p, &release, c10::Device(kMps, 0)};
  }
};

EmulatedMpsAllocator& allocator() {
  static EmulatedMpsAllocator instance;
  return instance;
}

struct State {
  EmulatorInfo info;
  EmulatorOptions options;
  FaultPlan faults;
  std::string poisoned_by;  // the operator whose poison fault made the device unusable
  std::string touched_by;   // the operator (without overload) whose touch fault left this process's state behind
  std::unique_ptr<torch::Library> kernels, fallback;
};
State* g_state = nullptr;

#if MPS_AUDIT_TORCH_ACCELERATOR_HOOKS
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
    const auto macos = static_cast<unsigned>(g_state ? g_state->info.macos_major : EmulatorOptions{}.macos_major);
    return macos > major || (macos == major && minor == 0);
  }
};
#endif

void check_dtype(c10::ScalarType type) {
  if (auto refusal = mps_dtype_refusal(type, g_state->info.macos_major)) TORCH_CHECK_TYPE(false, *refusal);
}

// "aten::add.Tensor"
std::string op_name(const c10::OperatorHandle& op) {
  const auto& name = op.schema().operator_name();
  return name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
}

// Dimension names travel between an MPS tensor and its CPU counterpart, as the real kernels' name inference
// would give them.
void copy_names(const at::Tensor& from, const at::Tensor& to) {
  if (from.has_names()) at::internal_set_names_inplace(to, from.names());
}

// A CPU tensor over the same memory as an MPS tensor, with the same layout. Its storage cannot be resized.
at::Tensor cpu_view(const at::Tensor& t) {
  const c10::Storage& src = t.storage();
  c10::Storage storage(c10::Storage::use_byte_size_t(), src.nbytes(),
                       c10::DataPtr(const_cast<void*>(src.data_ptr().get()), c10::Device(c10::kCPU)), nullptr, false);
  auto impl =
      c10::make_intrusive<c10::TensorImpl>(std::move(storage), c10::DispatchKeySet(c10::DispatchKey::CPU), t.dtype());
  impl->set_sizes_and_strides(t.sizes(), t.strides());
  impl->set_storage_offset(t.storage_offset());
  impl->_set_conj(t.is_conj());  // lazy conjugation and negation travel with the view
  impl->_set_neg(t.is_neg());
  at::Tensor view(std::move(impl));
  copy_names(t, view);  // so that the CPU kernel's name inference sees them
  return view;
}

at::Tensor host_view(const at::Tensor& t) {
  return t.device().type() == kMps ? cpu_view(t) : t;
}

at::Tensor empty_mps_strided(c10::IntArrayRef sizes, c10::IntArrayRef strides, c10::ScalarType dtype) {
  check_dtype(dtype);
  return at::Tensor(at::detail::empty_strided_generic(sizes, strides, &allocator(),
                                                      c10::DispatchKeySet(c10::DispatchKey::MPS), dtype));
}

// A new MPS tensor holding a CPU result.
at::Tensor to_mps(const at::Tensor& cpu) {
  at::Tensor out = empty_mps_strided(cpu.sizes(), cpu.strides(), cpu.scalar_type());
  {
    at::NoNamesGuard no_names;
    cpu_view(out).copy_(cpu);
  }
  copy_names(cpu, out);
  return out;
}

[[noreturn]] void hang_forever() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

// A touch fault: the first tensor argument's memory made unreadable, then read, as code on the CPU reads a CUDA
// tensor's. The process dies of SIGSEGV unless the prober catches it (Note [Caught faults]).
void touch_device_memory(const std::string& op_name, const torch::jit::Stack& stack, size_t num_args) {
  for (size_t i = stack.size() - num_args; i < stack.size(); ++i) {
    at::Tensor first;
    map_tensors(stack[i], [&](const at::Tensor& t) {
      if (!first.defined() && t.defined() && t.device().type() == kMps && t.has_storage() && t.storage().nbytes() > 0) {
        first = t;
      }
      return t;
    });
    if (!first.defined()) continue;
    g_state->touched_by = base_operator_name(op_name);
    auto* memory = const_cast<char*>(static_cast<const char*>(first.storage().data()));  // 2.x: const void*
    const size_t bytes = (first.storage().nbytes() + page_size() - 1) / page_size() * page_size();
    TORCH_CHECK(::mprotect(memory, bytes, PROT_NONE) == 0, "injected fault: cannot protect the memory to touch");
    *static_cast<volatile char*>(memory);
    return;
  }
}

void inject_before(const std::string& name, std::optional<FaultKind> fault, const torch::jit::Stack& stack,
                   size_t num_args) {
  TORCH_CHECK(g_state->poisoned_by.empty(), "injected fault: the device is unusable since ", g_state->poisoned_by, " (",
              kFaultsVariable, ")");
  if (!fault) return;
  switch (*fault) {
    case FaultKind::kCrash: std::abort();
    case FaultKind::kHang: hang_forever();
    case FaultKind::kThrow: TORCH_CHECK(false, "injected fault: ", name, " throws (", kFaultsVariable, ")");
    case FaultKind::kPoison:
      g_state->poisoned_by = name;
      TORCH_CHECK(false, "injected fault: ", name, " leaves the device unusable (", kFaultsVariable, ")");
    case FaultKind::kTouch: touch_device_memory(name, stack, num_args); break;
    case FaultKind::kSlow: std::this_thread::sleep_for(std::chrono::milliseconds(20)); break;
    case FaultKind::kTouchThenHang:
      if (g_state->touched_by == base_operator_name(name)) hang_forever();
      touch_device_memory(name, stack, num_args);
      break;
    case FaultKind::kWrong: break;
  }
}

// The crash, hang or throw planned for an operator, if any (a wrong result is the kernel's to make).
void inject_faults(const c10::OperatorHandle& op, const torch::jit::Stack* stack) {
  const std::string name = op_name(op);
  inject_before(name, g_state->faults.fault_for(name), *stack, op.schema().arguments().size());
}

// Perturbs a result in place: +1 for numbers, negation for booleans.
void perturb(const at::Tensor& t) {
  if (!t.defined() || t.numel() == 0) return;
  at::Tensor v = host_view(t);
  if (v.scalar_type() == c10::ScalarType::Bool) {
    v.logical_not_();
  } else {
    v.add_(1);
  }
}

// Views and operators that only change metadata run their (device-agnostic) CPU kernel on the MPS tensors
// themselves: their results must alias MPS storage, and a CPU copy could not be resized.
bool is_metadata_op(const c10::FunctionSchema& schema) {
  for (const auto& ret : schema.returns()) {
    if (ret.alias_info() && !ret.alias_info()->isWrite()) return true;
  }
  static const std::unordered_set<std::string> kMetadata = {
      "aten::resize_",         "aten::resize_as_", "aten::set_",       "aten::as_strided_",
      "aten::_resize_output_", "aten::squeeze_",   "aten::unsqueeze_", "aten::t_",
      "aten::transpose_",      "aten::swapdims_",  "aten::swapaxes_",  "aten::detach_"};
  return kMetadata.count(schema.name()) > 0;
}

struct Written {
  at::Tensor mps, cpu;
};

// Maps an argument to what the CPU kernel gets: MPS tensors become CPU views, or, when the operator writes them,
// resizable CPU copies that are written back afterwards.
c10::IValue to_cpu_argument(const c10::IValue& v, bool written, std::vector<Written>& writes,
                            std::unordered_map<const c10::TensorImpl*, at::Tensor>& inputs) {
  auto convert = [&](const at::Tensor& t) -> at::Tensor {
    if (!t.defined() || t.device().type() != kMps) return t;
    if (!written) {
      at::Tensor view = cpu_view(t);
      inputs.emplace(view.unsafeGetTensorImpl(), t);
      return view;
    }
    at::Tensor copy(at::detail::empty_strided_cpu(t.sizes(), t.strides(), t.scalar_type()));
    copy.copy_(cpu_view(t));
    copy_names(t, copy);
    writes.push_back({t, copy});
    return copy;
  };
  return map_tensors(v, convert);
}

c10::IValue to_mps_result(const c10::IValue& v, const std::vector<Written>& writes,
                          const std::unordered_map<const c10::TensorImpl*, at::Tensor>& inputs) {
  auto convert = [&](const at::Tensor& t) -> at::Tensor {
    if (!t.defined() || !t.is_cpu()) return t;
    for (const auto& w : writes) {
      if (w.cpu.unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) return w.mps;
    }
    if (auto it = inputs.find(t.unsafeGetTensorImpl()); it != inputs.end()) return it->second;
    return to_mps(t);
  };
  return map_tensors(v, convert);
}

bool low_precision(c10::ScalarType t) {
  return t == c10::ScalarType::Half || t == c10::ScalarType::BFloat16;
}

bool has_low_precision_tensor(const std::vector<c10::IValue>& args) {
  bool found = false;
  for (const c10::IValue& v : args) {
    map_tensors(v, [&](const at::Tensor& t) {
      found |= t.defined() && low_precision(t.scalar_type());
      return t;
    });
  }
  return found;
}

// Runs the CPU kernel on the converted arguments at the top of the stack. Metal kernels have half and bfloat16
// where some CPU kernels lack them (or fail on them): then the CPU kernel runs in float32 and the results are
// rounded back, as PyTorch's own MPS tests compute their references. If float32 fails too, the first error stands.
void redispatch_to_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack, size_t first) {
  const std::vector<c10::IValue> saved(stack->begin() + static_cast<std::ptrdiff_t>(first), stack->end());
  std::exception_ptr original;
  try {
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
    return;
  } catch (const c10::Error&) {
    if (!has_low_precision_tensor(saved)) throw;
    original = std::current_exception();
  }
  stack->resize(first);
  std::vector<std::pair<at::Tensor, at::Tensor>> upcast;  // (argument, its float32 copy)
  c10::ScalarType low = c10::ScalarType::Half;
  auto up = [&](const at::Tensor& t) -> at::Tensor {
    if (!t.defined() || !low_precision(t.scalar_type())) return t;
    low = t.scalar_type();
    at::Tensor f = t.to(c10::ScalarType::Float);
    upcast.emplace_back(t, f);
    return f;
  };
  for (const c10::IValue& v : saved) stack->push_back(map_tensors(v, up));
  try {
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
  } catch (const c10::Error&) {
    std::rethrow_exception(original);
  }
  for (auto& [arg, f] : upcast) {
    if (arg.sizes() != f.sizes()) arg.resize_(f.sizes());
    arg.copy_(f);
  }
  const size_t num_returns = op.schema().returns().size();
  for (size_t i = stack->size() - num_returns; i < stack->size(); ++i) {
    auto down = [&](const at::Tensor& t) -> at::Tensor {
      for (auto& [arg, f] : upcast) {
        if (f.unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) return arg;
      }
      return t.defined() && t.scalar_type() == c10::ScalarType::Float ? t.to(low) : t;
    };
    (*stack)[i] = map_tensors((*stack)[i], down);
  }
}

void native_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::string name = op_name(op);
  const auto fault = g_state->faults.fault_for(name);
  inject_before(name, fault, *stack, op.schema().arguments().size());
  const auto& schema = op.schema();
  at::DisableRecordFunctionGuard no_trace;  // one native op in a trace, however it is computed here
  if (is_metadata_op(schema)) {
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
    return;
  }
  const size_t num_args = schema.arguments().size();
  const size_t first = stack->size() - num_args;
  std::vector<Written> writes;
  std::unordered_map<const c10::TensorImpl*, at::Tensor> inputs;
  for (size_t i = 0; i < num_args; ++i) {
    const auto& alias = schema.arguments()[i].alias_info();
    (*stack)[first + i] = to_cpu_argument((*stack)[first + i], alias && alias->isWrite(), writes, inputs);
  }
  redispatch_to_cpu(op, stack, first);
  for (const auto& w : writes) {
    if (w.mps.sizes() != w.cpu.sizes()) w.mps.resize_(w.cpu.sizes());
    {
      at::NoNamesGuard no_names;
      cpu_view(w.mps).copy_(w.cpu);
    }
    copy_names(w.cpu, w.mps);
  }
  const size_t num_returns = schema.returns().size();
  const size_t first_return = stack->size() - num_returns;
  for (size_t i = 0; i < num_returns; ++i) {
    (*stack)[first_return + i] = to_mps_result((*stack)[first_return + i], writes, inputs);
  }
  // Where a touch fault was caught, what it may have left behind makes every other operator's results wrong.
  const bool left_behind = !g_state->touched_by.empty() && base_operator_name(name) != g_state->touched_by;
  if (fault == FaultKind::kWrong || left_behind) {
    for (size_t i = 0; i < num_returns; ++i) {
      const c10::IValue& r = (*stack)[first_return + i];
      if (r.isTensor()) {
        perturb(r.toTensor());
        break;
      }
      if (r.isTensorList() && r.toTensorList().size() > 0) {
        perturb(r.toTensorList().get(0));
        break;
      }
    }
  }
}

void warn_and_fall_back(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  TORCH_WARN_ONCE("The operator '", op.schema().operator_name(), "' is not currently supported ",
                  "on the MPS backend and will fall back to run on the CPU.",
                  " This may have performance implications.");
  at::native::cpu_fallback(op, stack);
}

// Kernels registered as MPS kernels that always run the CPU fallback (MPSFallback.mm's m.impl(..., mps_fallback)).
void always_cpu_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  inject_faults(op, stack);
  warn_and_fall_back(op, stack);
}

void stub_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  TORCH_CHECK(false, op_name(op), " should not be called for both tensors on MPS device");
}

void error_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  TORCH_CHECK_NOT_IMPLEMENTED(
      false, "The operator '", op.schema().operator_name(), "' is not currently implemented ",
      "for the MPS device. If you want this op to be added in priority during the prototype ",
      "phase of this feature, please comment on https://github.com/pytorch/pytorch/issues/77764. ",
      "As a temporary fix, you can set the environment variable `PYTORCH_ENABLE_MPS_FALLBACK=1` ",
      "to use the CPU as a fallback for this op. WARNING: this will be slower than running natively ", "on MPS.");
}

// empty.memory_format(SymInt[] size, *, ScalarType? dtype, Layout? layout, Device? device, bool? pin_memory,
//                     MemoryFormat? memory_format)
void empty_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  auto args = torch::jit::pop(*stack, op.schema().arguments().size());
  const auto dtype = args[1].isNone() ? c10::get_default_dtype_as_scalartype() : args[1].toScalarType();
  check_dtype(dtype);
  c10::optional<c10::MemoryFormat> format;
  if (!args[5].isNone()) format = args[5].toMemoryFormat();
  at::Tensor t(at::detail::empty_generic(args[0].toIntVector(), &allocator(),
                                         c10::DispatchKeySet(c10::DispatchKey::MPS), dtype, format));
  torch::jit::push(*stack, std::move(t));
}

// empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype, Layout? layout, Device? device, bool? pin)
void empty_strided_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  auto args = torch::jit::pop(*stack, op.schema().arguments().size());
  const auto dtype = args[2].isNone() ? c10::get_default_dtype_as_scalartype() : args[2].toScalarType();
  torch::jit::push(*stack, empty_mps_strided(args[0].toIntVector(), args[1].toIntVector(), dtype));
}

// as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset) -> Tensor(a): what
// as_strided_tensorimpl does (the CPU kernel refuses MPS tensors), bounds check included.
void as_strided_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  auto args = torch::jit::pop(*stack, op.schema().arguments().size());
  const at::Tensor self = args[0].toTensor();
  const std::vector<int64_t> size = args[1].toIntVector(), stride = args[2].toIntVector();
  const int64_t offset = args[3].isNone() ? self.storage_offset() : args[3].toInt();
  TORCH_CHECK(size.size() == stride.size(), "mismatch in length of strides and shape");
  TORCH_CHECK(offset >= 0, "Tensor: invalid storage offset ", offset);
  int64_t last = offset;
  bool empty = false;
  for (size_t i = 0; i < size.size(); ++i) {
    TORCH_CHECK(size[i] >= 0, "Trying to create tensor with negative dimension ", size[i]);
    empty |= size[i] == 0;
    last += (size[i] - 1) * stride[i];
  }
  const int64_t needed = (last + 1) * static_cast<int64_t>(self.dtype().itemsize());
  TORCH_CHECK(empty || needed <= static_cast<int64_t>(self.storage().nbytes()), "setStorage: sizes ", size,
              ", strides ", stride, ", storage offset ", offset, ", and itemsize ", self.dtype().itemsize(),
              " requiring a storage size of ", needed, " are out of bounds for storage of size ",
              self.storage().nbytes());
  auto impl = c10::make_intrusive<c10::TensorImpl>(c10::TensorImpl::VIEW, c10::Storage(self.storage()), self.key_set(),
                                                   self.dtype());
  impl->set_sizes_and_strides(size, stride);
  impl->set_storage_offset(offset);
  torch::jit::push(*stack, at::Tensor(std::move(impl)));
}

// set_(Tensor(a!) self) -> Tensor(a!): empties self onto a new, empty MPS storage (the CPU kernel would give it
// a CPU storage, which an MPS tensor cannot take).
void set_empty_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  auto args = torch::jit::pop(*stack, op.schema().arguments().size());
  at::Tensor self = args[0].toTensor();
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, &allocator(), /*resizable=*/true);
  self.set_(storage, 0, {0}, {});
  torch::jit::push(*stack, self);
}

// _copy_from(Tensor self, Tensor dst, bool non_blocking) -> Tensor: copies self into dst.
void copy_from_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  auto args = torch::jit::pop(*stack, op.schema().arguments().size());
  const at::Tensor self = args[0].toTensor(), dst = args[1].toTensor();
  host_view(dst).copy_(host_view(self));
  torch::jit::push(*stack, dst);
}

// _copy_from_and_resize(Tensor self, Tensor dst) -> Tensor
void copy_from_and_resize_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  auto args = torch::jit::pop(*stack, op.schema().arguments().size());
  const at::Tensor self = args[0].toTensor(), dst = args[1].toTensor();
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  host_view(dst).copy_(host_view(self));
  torch::jit::push(*stack, dst);
}

// copy_(Tensor(a!) self, Tensor src, bool non_blocking) -> Tensor(a!); either side may be the CPU one. Dimension
// names propagate as in the composite copy_ this kernel stands in for (native/Copy.cpp).
void copy_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  auto args = torch::jit::pop(*stack, op.schema().arguments().size());
  const at::Tensor self = args[0].toTensor(), src = args[1].toTensor();
  const auto names = at::namedinference::compute_broadcast_outnames(self, src);
  {
    at::NoNamesGuard no_names;
    if (src._is_zerotensor()) {  // a ZeroTensor has no memory to view: it reads as zeros
      host_view(self).zero_();
    } else {
      host_view(self).copy_(host_view(src));
    }
  }
  at::namedinference::propagate_names_if_nonempty(self, names);
  torch::jit::push(*stack, self);
}

// Convolution. On a libtorch built with MPS, _convolution picks its MPS backend for an MPS input and calls the
// MPS-only operators below (native/Convolution.cpp, a branch compiled only with USE_MPS); here it falls through to
// The device guard of emulated MPS: one device, one stream, and events that are done as soon as they are recorded,
// since every kernel runs synchronously on host memory. c10's NoOpDeviceGuardImpl refuses events, and autograd's
// engine in libtorch 2.x records and waits on them for every backward pass on a device (the real MPSGuardImpl has
// them), so a training step needs these. Streams and devices carry index 0, the tensors' own (mps:0): the engine
// matches a node's stream to its inputs' device by it.
struct EmulatedMpsGuard final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kMps; }
  c10::Device exchangeDevice(c10::Device) const override { return c10::Device(kMps, 0); }
  c10::Device getDevice() const override { return c10::Device(kMps, 0); }
  void setDevice(c10::Device) const override {}
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, c10::Device(kMps, 0));
  }
  c10::Stream exchangeStream(c10::Stream) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, c10::Device(kMps, 0));
  }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }
  void record(void** event, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {
    static char recorded;
    *event = &recorded;  // any non-null handle: nothing is ever pending
  }
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream&) const override {}
};

// convolution_overrideable and convolution_backward_overrideable, which the emulator takes at the MPS key
// (kPlumbingOps) to make the same calls. The MPS-only operators compute with the CPU's convolution.
std::vector<int64_t> zeros_like_list(const std::vector<int64_t>& v) {
  return std::vector<int64_t>(v.size(), 0);
}

// A CPU tensor to compute with: float32 for half and bfloat16, which Metal convolves and the CPU may not.
at::Tensor computable(const at::Tensor& t) {
  if (!t.defined()) return t;
  const at::Tensor v = host_view(t);
  return low_precision(v.scalar_type()) ? v.to(c10::ScalarType::Float) : v;
}

at::Tensor optional_computable(const c10::IValue& v) {
  return v.isNone() ? at::Tensor() : computable(v.toTensor());
}

// A CPU result as an MPS tensor of the inputs' dtype.
c10::IValue result_as(const at::Tensor& result, c10::ScalarType type) {
  return result.defined() ? c10::IValue(to_mps(result.to(type))) : c10::IValue(result);
}

// _mps_convolution(Tensor self, Tensor weight, Tensor? bias, int[] padding, int[] stride, int[] dilation, int groups)
void mps_convolution_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  inject_faults(op, stack);
  auto a = torch::jit::pop(*stack, op.schema().arguments().size());
  const at::Tensor input = a[0].toTensor();
  TORCH_CHECK(g_state->info.release_version.rfind("1.", 0) != 0 || input.dim() < 5, "Conv3D is not supported on MPS");
  at::DisableRecordFunctionGuard no_trace;
  const auto padding = a[3].toIntVector();
  torch::jit::push(*stack, result_as(at::convolution(computable(input), computable(a[1].toTensor()),
                                                     optional_computable(a[2]), a[4].toIntVector(), padding,
                                                     a[5].toIntVector(), false, zeros_like_list(padding), a[6].toInt()),
                                     input.scalar_type()));
}

// _mps_convolution_transpose(Tensor self, Tensor weight, int[] padding, int[] output_padding, int[] stride,
//                            int[] dilation, int groups)
void mps_convolution_transpose_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  inject_faults(op, stack);
  auto a = torch::jit::pop(*stack, op.schema().arguments().size());
  at::DisableRecordFunctionGuard no_trace;
  const at::Tensor input = a[0].toTensor();
  torch::jit::push(*stack, result_as(at::convolution(computable(input), computable(a[1].toTensor()), at::Tensor(),
                                                     a[4].toIntVector(), a[2].toIntVector(), a[5].toIntVector(), true,
                                                     a[3].toIntVector(), a[6].toInt()),
                                     input.scalar_type()));
}

// mps_convolution_backward(Tensor self, Tensor grad_output, Tensor weight, int[] padding, int[] stride,
//                          int[] dilation, int groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
void mps_convolution_backward_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  inject_faults(op, stack);
  auto a = torch::jit::pop(*stack, op.schema().arguments().size());
  at::DisableRecordFunctionGuard no_trace;
  const at::Tensor input = a[0].toTensor(), weight = computable(a[2].toTensor());
  const auto padding = a[3].toIntVector();
  const auto mask = a[7].toBoolList();
  const std::vector<int64_t> bias_sizes = {weight.size(0)};
  const auto grads = at::convolution_backward(computable(a[1].toTensor()), computable(input), weight, bias_sizes,
                                              a[4].toIntVector(), padding, a[5].toIntVector(), false,
                                              zeros_like_list(padding), a[6].toInt(), {mask[0], mask[1], mask[2]});
  const auto type = input.scalar_type();
  torch::jit::push(*stack, result_as(std::get<0>(grads), type), result_as(std::get<1>(grads), type),
                   result_as(std::get<2>(grads), type));
}

// mps_convolution_transpose_backward(Tensor self, Tensor grad_output, Tensor weight, int[] padding,
//     int[] output_padding, int[] stride, int[] dilation, int groups, bool[2] output_mask) -> (Tensor, Tensor)
void mps_convolution_transpose_backward_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  inject_faults(op, stack);
  auto a = torch::jit::pop(*stack, op.schema().arguments().size());
  at::DisableRecordFunctionGuard no_trace;
  const auto mask = a[8].toBoolList();
  const at::Tensor input = a[0].toTensor();
  const auto grads = at::convolution_backward(
      computable(a[1].toTensor()), computable(input), computable(a[2].toTensor()), c10::nullopt, a[5].toIntVector(),
      a[3].toIntVector(), a[6].toIntVector(), true, a[4].toIntVector(), a[7].toInt(), {mask[0], mask[1], false});
  const auto type = input.scalar_type();
  torch::jit::push(*stack, result_as(std::get<0>(grads), type), result_as(std::get<1>(grads), type));
}

void check_same_type(const at::Tensor& input, const at::Tensor& other, const char* what) {
  TORCH_CHECK(!other.defined() || input.options().type_equal(other.options()), "Input type (", input.toString(),
              ") and ", what, " type (", other.toString(), ") should be the same");
}

// convolution_overrideable(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding,
//     int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor
void convolution_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  auto a = torch::jit::pop(*stack, op.schema().arguments().size());
  const at::Tensor input = a[0].toTensor(), weight = a[1].toTensor();
  const at::Tensor bias = a[2].isNone() ? at::Tensor() : a[2].toTensor();
  check_same_type(input, weight, "weight");
  check_same_type(input, bias, "bias");
  const auto stride = a[3].toIntVector(), padding = a[4].toIntVector(), dilation = a[5].toIntVector();
  const int64_t groups = a[8].toInt();
  at::Tensor out;
  if (!a[6].toBool()) {
    out = at::_mps_convolution(input.contiguous(), weight,
                               bias.defined() ? c10::optional<at::Tensor>(bias.contiguous()) : c10::nullopt, padding,
                               stride, dilation, groups);
  } else {
    out = at::_mps_convolution_transpose(input.contiguous(), weight, padding, a[7].toIntVector(), stride, dilation,
                                         groups);
    if (bias.defined()) {
      std::vector<int64_t> shape(static_cast<size_t>(input.dim()), 1);
      shape[1] = -1;
      out.add_(bias.reshape(shape));
    }
  }
  torch::jit::push(*stack, out);
}

// convolution_backward_overrideable(Tensor grad_output, Tensor input, Tensor weight, int[] stride, int[] padding,
//     int[] dilation, bool transposed, int[] output_padding, int groups, bool[3] output_mask)
//     -> (Tensor grad_input, Tensor grad_weight, Tensor grad_bias)
void convolution_backward_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  auto a = torch::jit::pop(*stack, op.schema().arguments().size());
  const at::Tensor grad = a[0].toTensor(), input = a[1].toTensor(), weight = a[2].toTensor();
  check_same_type(input, weight, "weight");
  const auto stride = a[3].toIntVector(), padding = a[4].toIntVector(), dilation = a[5].toIntVector();
  const int64_t groups = a[8].toInt();
  const auto mask = a[9].toBoolList();
  if (!a[6].toBool()) {
    const auto grads = at::mps_convolution_backward(input, grad, weight, padding, stride, dilation, groups,
                                                    {mask[0], mask[1], mask[2]});
    torch::jit::push(*stack, std::get<0>(grads), std::get<1>(grads), std::get<2>(grads));
  } else {  // the caller sums grad_output for the bias
    const auto grads = at::mps_convolution_transpose_backward(input, grad, weight, padding, a[7].toIntVector(), stride,
                                                              dilation, groups, {mask[0], mask[1]});
    torch::jit::push(*stack, std::get<0>(grads), std::get<1>(grads), at::Tensor());
  }
}

using BoxedKernel = void (*)(const c10::OperatorHandle&, torch::jit::Stack*);

template <BoxedKernel K>
torch::CppFunction boxed() {
  return torch::CppFunction::makeFromBoxedFunction<K>();
}

torch::CppFunction kernel_for(const std::string& name) {
  if (name == "aten::empty.memory_format") return boxed<&empty_kernel>();
  if (name == "aten::empty_strided") return boxed<&empty_strided_kernel>();
  if (name == "aten::_copy_from") return boxed<&copy_from_kernel>();
  if (name == "aten::_copy_from_and_resize") return boxed<&copy_from_and_resize_kernel>();
  if (name == "aten::as_strided") return boxed<&as_strided_kernel>();
  if (name == "aten::set_") return boxed<&set_empty_kernel>();
  if (name == "aten::_mps_convolution") return boxed<&mps_convolution_kernel>();
  if (name == "aten::_mps_convolution_transpose") return boxed<&mps_convolution_transpose_kernel>();
  if (name == "aten::mps_convolution_backward") return boxed<&mps_convolution_backward_kernel>();
  if (name == "aten::mps_convolution_transpose_backward") return boxed<&mps_convolution_transpose_backward_kernel>();
  return boxed<&native_kernel>();
}

torch::CppFunction plumbing_kernel_for(const std::string& name) {
  if (name == "convolution_overrideable") return boxed<&convolution_kernel>();
  if (name == "convolution_backward_overrideable") return boxed<&convolution_backward_kernel>();
  return boxed<&copy_kernel>();
}

bool fallback_enabled_by_environment() {
  const char* v = std::getenv("PYTORCH_ENABLE_MPS_FALLBACK");
  if (!v || !*v) return false;
  try {
    return std::stoi(v) != 0;
  } catch (const std::exception&) {
    return false;  // MPSFallback.mm's std::stoi would throw; an unparsable value enables nothing here
  }
}

bool same_options(const EmulatorOptions& a, const EmulatorOptions& b) {
  return a.release_dir == b.release_dir && a.macos_major == b.macos_major;
}

}  // namespace

std::string emulator_label(const std::string& release_version, int macos_major) {
  return fmt::format("emulated MPS (PyTorch {} registry, macOS {} rules)", release_version, macos_major);
}

std::string EmulatorInfo::label() const {
  return emulator_label(release_version, macos_major);
}

std::string make_emulated_mps_the_accelerator() {
#if MPS_AUDIT_TORCH_ACCELERATOR_HOOKS
  static const std::string why_not = []() -> std::string {
    if (at::MPSHooksRegistry()->Has("MPSHooks")) return "this libtorch has a real MPS backend";
    const bool cuda = at::CUDAHooksRegistry()->Has("CUDAHooks");
    if (cuda) {
      at::CUDAHooksRegistry()->Register(
          "CUDAHooks", [](at::CUDAHooksArgs) { return std::make_unique<at::CUDAHooksInterface>(); },
          c10::REGISTRY_PREFERRED);
    }
    if (at::detail::getCUDAHooks().isBuilt()) {
      return "libtorch's CUDA is this process's accelerator already (it was asked about CUDA before)";
    }
    if (cuda) ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
    at::MPSHooksRegistry()->Register("MPSHooks", [](at::MPSHooksArgs) -> std::unique_ptr<at::MPSHooksInterface> {
      return std::make_unique<EmulatedMpsHooks>();
    });
    if (!at::detail::getMPSHooks().isBuilt()) return "libtorch's MPS hooks were made before the emulator's";
    try {
      if (at::accelerator::getAccelerator(false) == kMps) return "";
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

const EmulatorInfo* active_mps_emulator() {
  return g_state ? &g_state->info : nullptr;
}

std::string find_release_dir(const std::string& torch_version) {
  std::smatch m;
  if (!std::regex_search(torch_version, m, std::regex(R"(^(\d+)\.(\d+)\.(\d+))"))) return "";
  const std::string exact = fmt::format("pytorch-{}.{}.{}", m[1].str(), m[2].str(), m[3].str());
  const std::string same_minor = fmt::format("pytorch-{}.{}.", m[1].str(), m[2].str());
  for (const auto& root : release_roots()) {
    if (is_directory(join_path(root, exact))) return join_path(root, exact);
    for (const auto& name : list_directory(root)) {
      if (name.rfind(same_minor, 0) == 0 && is_directory(join_path(root, name))) return join_path(root, name);
    }
  }
#ifdef MPS_AUDIT_TORCHGEN_DATA_DIR
  // The linked wheel's own YAML (no hand registrations: those come only with data/ folders).
  if (torch_version == compat::kTorchVersion) return MPS_AUDIT_TORCHGEN_DATA_DIR;
#endif
  return "";
}

const EmulatorInfo& activate_mps_emulator(const EmulatorOptions& requested) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  EmulatorOptions options = requested;
  if (options.release_dir.empty()) {
    options.release_dir = find_release_dir(compat::kTorchVersion);
    if (options.release_dir.empty()) {
      throw UserError(
          fmt::format("no registry data for libtorch {} to emulate MPS with; pass --emu-release with a "
                      "folder holding its native_functions.yaml (a torch wheel has one under "
                      "torchgen/packaged/ATen/native/)",
                      compat::kTorchVersion));
    }
  }
  if (g_state) {
    if (!same_options(g_state->options, options)) {
      throw UserError("the MPS emulator is already active in this process with other options");
    }
    return g_state->info;
  }
  auto& dispatcher = c10::Dispatcher::singleton();
  if (auto empty = dispatcher.findOp({"aten::empty.memory_format", ""});
      empty && empty->hasKernelForDispatchKey(c10::DispatchKey::MPS)) {
    throw UserError("this libtorch has a real MPS backend: use --target mps, not mps-emu");
  }

  const ReleaseFiles files = resolve_release(options.release_dir, "MPS");
  std::vector<ExtraRegistration> extra;
  if (!files.extra_registrations.empty()) extra = read_extra_registrations(files.extra_registrations);
  const Registry release = classify_native_functions(read_native_functions(files.native_functions), extra, "MPS");

  const char* faults = std::getenv(kFaultsVariable);
  FaultPlan fault_plan = FaultPlan::parse(faults ? faults : "");

  // From here on the state lives as long as the process: the dispatcher keeps pointers into it.
  State* state = new State();
  g_state = state;
  state->options = options;
  state->faults = std::move(fault_plan);
  g_whole_pages = state->faults.plans(FaultKind::kTouch) || state->faults.plans(FaultKind::kTouchThenHang);
  state->info.release_dir = options.release_dir;
  // A folder not named pytorch-X.Y.Z (a wheel's torchgen/packaged/ATen/native) is the linked release's.
  state->info.release_version = files.version.empty() ? std::string(compat::kTorchVersion) : files.version;
  state->info.macos_major = options.macos_major;
  state->info.fallback_enabled = fallback_enabled_by_environment();

  static EmulatedMpsGuard guard;
  static c10::impl::DeviceGuardImplRegistrar guard_registrar(kMps, &guard);
  c10::SetAllocator(kMps, &allocator());

  state->kernels =
      std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::MPS, __FILE__, __LINE__);
  for (const auto& op : release.ops) {
    if (op.status != OpStatus::kNative && op.status != OpStatus::kCpuFallback) continue;
    const std::string bare = op.name.substr(op.name.find("::") + 2);
    const size_t dot = bare.find('.');
    if (!dispatcher.findOp({"aten::" + bare.substr(0, dot), dot == std::string::npos ? "" : bare.substr(dot + 1)})) {
      state->info.absent_ops.push_back(op.name);
      continue;
    }
    const bool stub = op.note.find("stub") != std::string::npos;
    if (op.status == OpStatus::kCpuFallback) {
      state->kernels->impl(bare.c_str(), boxed<&always_cpu_kernel>());
      ++state->info.cpu_fallback_kernels;
    } else if (stub) {
      state->kernels->impl(bare.c_str(), boxed<&stub_kernel>());
      ++state->info.stub_kernels;
    } else {
      state->kernels->impl(bare.c_str(), kernel_for(op.name));
      ++state->info.native_kernels;
    }
  }
  for (const char* op : kPlumbingOps) state->kernels->impl(op, plumbing_kernel_for(op));
  state->fallback =
      std::make_unique<torch::Library>(torch::Library::IMPL, "_", c10::DispatchKey::MPS, __FILE__, __LINE__);
  if (state->info.fallback_enabled) {
    state->fallback->fallback(boxed<&warn_and_fall_back>());
  } else {
    state->fallback->fallback(boxed<&error_fallback>());
  }
  return state->info;
}

}  // namespace mps_audit::emu
