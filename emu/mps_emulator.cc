// The MPS emulation backend.
//
// Note [MPS emulation]
// On a libtorch built without MPS, DispatchKey::MPS and DeviceType::MPS exist but nothing is registered for them.
// activate_mps_emulator registers, for this process only:
//  - an allocator for DeviceType::MPS (its DataPtrs say mps:0) whose memory code on the CPU cannot reach at the
//    addresses tensors hold, as on a Mac, where the emulator's kernels reach it through host views (Note [Emulated MPS
//    memory] in device_memory.cc), and a device guard of one device and one stream (emulated_device.cc);
//  - for every operator the chosen release implements for MPS (registry/static_registry.cc, hand registrations
//    included), one boxed kernel:
//      native        computes with the operator's CPU kernel on CPU views of the same memory: no copy through
//                    at::_to_cpu, and RecordFunction is off inside, so a dispatcher trace sees one native MPS op;
//                    view and metadata operators (see is_metadata_op) run their device-agnostic CPU kernel on the
//                    MPS tensors themselves, so views alias MPS storage, and those that may move a storage's bytes
//                    (resize_, set_) in a DeviceMemoryWindow;
//      cpu_fallback  MPS's warning once, then at::native::cpu_fallback, whatever PYTORCH_ENABLE_MPS_FALLBACK says;
//      stub          raises, as the real stub does;
//    and dedicated kernels for the operators that make or move memory (empty, empty_strided, _copy_from,
//    _copy_from_and_resize, set_) and for as_strided (whose CPU kernel refuses MPS tensors), all in every
//    release's MPS set;
//  - kernels for copy_, convolution_overrideable and convolution_backward_overrideable, registrations the real
//    backend does not make (kPlumbingOps): there, CompositeExplicitAutograd's copy_ calls mps_copy_ from a branch
//    compiled only with USE_MPS (native/Copy.cpp), and DispatchStub has no MPS slot without USE_MPS either, so the
//    emulator must take copy_ at the MPS key; likewise _convolution picks its MPS backend (_mps_convolution and
//    friends) only with USE_MPS and otherwise calls the *_overrideable operators, which here make the same calls
//    (emulated_convolution.cc);
//  - the backend fallback of MPSFallback.mm: cpu_fallback with MPS's warning when PYTORCH_ENABLE_MPS_FALLBACK is a
//    non-zero integer at activation, otherwise NotImplementedError with MPS's message.
// Anything else that reads or writes an MPS tensor's memory (a CPU kernel PyTorch registers for every backend) faults,
// as on a Mac. Data types MPS refuses (emu/dtype_rules.cc) are refused where MPS tensors are created. A process that
// trains on emulated MPS with libtorch 2.x makes it the accelerator too (Note [Emulated MPS as the accelerator] in
// emulated_accelerator.cc).
#include "emu/mps_emulator.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/record_function.h>
#include <c10/core/DefaultDtype.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <torch/library.h>
#include <unistd.h>

#include "common/diagnostics.h"
#include "common/ivalue_tensors.h"
#include "common/text.h"
#include "common/torch_compat.h"
#include "emu/device_memory.h"
#include "emu/emulated_convolution.h"
#include "emu/emulated_device.h"
#include "emu/enforced_limits.h"
#include "emu/faults.h"
#include "registry/extra_registrations.h"
#include "registry/native_functions.h"
#include "registry/release_data.h"
#include "registry/static_registry.h"

namespace mps_audit::emu {
namespace {

constexpr c10::DeviceType kMps = c10::DeviceType::MPS;

struct State {
  EmulatorInfo info;
  EmulatorOptions options;
  FaultPlan faults;
  std::string poisoned_by;  // the operator whose poison fault made the device unusable
  std::string touched_by;   // the operator (without overload) whose touch fault left this process's state behind
  std::unique_ptr<torch::Library> kernels, fallback;
  std::optional<MpsLimits> limits;  // data/mps_limits.yaml (Note [MPS limits] in mps_limits.cc)
  pid_t device_pid = 0;  // the process whose device memory is set up (Note [Kernels registered before the fork])
};
State* g_state = nullptr;
std::mutex g_activation;

// "aten::add.Tensor"
std::string op_name(const c10::OperatorHandle& op) {
  const auto& name = op.schema().operator_name();
  return name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
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

// Metadata operators whose CPU kernel may move a storage's bytes into a larger allocation (resize_bytes_cpu's memcpy
// at the tensors' own addresses): they run in a DeviceMemoryWindow (Note [Emulated MPS memory]).
bool may_move_storage(const c10::FunctionSchema& schema) {
  static const std::unordered_set<std::string> kMoving = {"aten::resize_", "aten::resize_as_", "aten::_resize_output_",
                                                          "aten::set_"};
  return kMoving.count(schema.name()) > 0;
}

// The memory of the MPS tensors and storages among the top `num_args` values of the stack.
std::vector<const void*> mps_memory_of(const torch::jit::Stack& stack, size_t num_args) {
  std::vector<const void*> blocks;
  for (size_t i = stack.size() - num_args; i < stack.size(); ++i) {
    if (stack[i].isStorage()) {
      blocks.push_back(stack[i].toStorage().data());
      continue;
    }
    map_tensors(stack[i], [&](const at::Tensor& t) {
      if (t.defined() && t.device().type() == kMps && t.has_storage()) blocks.push_back(t.storage().data());
      return t;
    });
  }
  return blocks;
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
    compat::copy_names(t, copy);
    writes.push_back({t, copy});
    return copy;
  };
  return map_tensors(v, convert);
}

c10::IValue to_mps_result(const std::string& op_name, const c10::IValue& v, const std::vector<Written>& writes,
                          const std::unordered_map<const c10::TensorImpl*, at::Tensor>& inputs) {
  auto convert = [&](const at::Tensor& t) -> at::Tensor {
    if (!t.defined() || !t.is_cpu()) return t;
    // Emulated MPS memory holds strided tensors only; a real Mac's sparse MPS kernels have no CPU twin here.
    if (t.layout() != c10::kStrided || t.is_quantized()) {
      throw NotJudged(fmt::format("the emulator cannot hold the {} result of {} on emulated MPS",
                                  t.is_quantized() ? "quantized"
                                  : t.is_sparse()  ? "sparse"
                                                   : "non-strided",
                                  op_name));
    }
    for (const auto& w : writes) {
      if (w.cpu.unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) return w.mps;
    }
    if (auto it = inputs.find(t.unsafeGetTensorImpl()); it != inputs.end()) return it->second;
    return to_mps(t);
  };
  return map_tensors(v, convert);
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

// The limits of MPS of the emulated release and macOS for this call (Note [MPS limits] in mps_limits.cc).
LimitCheck check_limits(const c10::OperatorHandle& op, const std::string& name, const torch::jit::Stack& stack) {
  const MpsLimits* limits = g_state->limits ? &*g_state->limits : nullptr;
  return LimitCheck(limits, op, name, stack, g_state->info.release_version, g_state->info.macos);
}

void native_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::string name = op_name(op);
  const auto fault = g_state->faults.fault_for(name);
  inject_before(name, fault, *stack, op.schema().arguments().size());
  LimitCheck limits = check_limits(op, name, *stack);
  const auto& schema = op.schema();
  at::DisableRecordFunctionGuard no_trace;  // one native op in a trace, however it is computed here
  const size_t num_args = schema.arguments().size();
  if (is_metadata_op(schema)) {
    std::optional<DeviceMemoryWindow> window;
    if (may_move_storage(schema)) window.emplace(mps_memory_of(*stack, num_args));
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
    limits.after(*stack);
    return;
  }
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
      compat::NoNamesGuard no_names;
      cpu_view(w.mps).copy_(w.cpu);
    }
    compat::copy_names(w.cpu, w.mps);
  }
  const size_t num_returns = schema.returns().size();
  const size_t first_return = stack->size() - num_returns;
  for (size_t i = 0; i < num_returns; ++i) {
    (*stack)[first_return + i] = to_mps_result(name, (*stack)[first_return + i], writes, inputs);
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
  limits.after(*stack);
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
  at::Tensor t(at::detail::empty_generic(args[0].toIntVector(), &emulated_allocator(),
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
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, &emulated_allocator(), /*resizable=*/true);
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
  compat::with_broadcast_names(self, src, [&] {
    if (src._is_zerotensor()) {  // a ZeroTensor has no memory to view: it reads as zeros
      host_view(self).zero_();
    } else {
      host_view(self).copy_(host_view(src));
    }
  });
  torch::jit::push(*stack, self);
}

using BoxedKernel = void (*)(const c10::OperatorHandle&, torch::jit::Stack*);

template <BoxedKernel K>
torch::CppFunction boxed() {
  return torch::CppFunction::makeFromBoxedFunction<K>();
}

// MPSFallback.mm's backend fallback: the CPU's, with MPS's warning, when PYTORCH_ENABLE_MPS_FALLBACK was set at
// activation, else MPS's NotImplementedError.
torch::CppFunction mps_fallback(bool enabled) {
  return enabled ? boxed<&warn_and_fall_back>() : boxed<&error_fallback>();
}

// A kernel that computes without the emulator's state (emulated_convolution.h), after the faults planned for its
// operator and within the limits of MPS.
template <BoxedKernel K>
void with_faults(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  inject_faults(op, stack);
  LimitCheck limits = check_limits(op, op_name(op), *stack);
  K(op, stack);
  limits.after(*stack);
}

// _mps_convolution as the release has it: 1.x's refuses a 5-d input (Conv3D came to MPS in 2.0).
void release_mps_convolution_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const at::Tensor input = torch::jit::peek(*stack, 0, op.schema().arguments().size()).toTensor();
  TORCH_CHECK(active_mps_emulator()->release_version.rfind("1.", 0) != 0 || input.dim() < 5,
              "Conv3D is not supported on MPS");
  mps_convolution_kernel(op, stack);
}

torch::CppFunction kernel_for(const std::string& name) {
  if (name == "aten::empty.memory_format") return boxed<&empty_kernel>();
  if (name == "aten::empty_strided") return boxed<&empty_strided_kernel>();
  if (name == "aten::_copy_from") return boxed<&copy_from_kernel>();
  if (name == "aten::_copy_from_and_resize") return boxed<&copy_from_and_resize_kernel>();
  if (name == "aten::as_strided") return boxed<&as_strided_kernel>();
  if (name == "aten::set_") return boxed<&set_empty_kernel>();
  if (name == "aten::_mps_convolution") return boxed<&with_faults<&release_mps_convolution_kernel>>();
  if (name == "aten::_mps_convolution_transpose") return boxed<&with_faults<&mps_convolution_transpose_kernel>>();
  if (name == "aten::mps_convolution_backward") return boxed<&with_faults<&mps_convolution_backward_kernel>>();
  if (name == "aten::mps_convolution_transpose_backward") {
    return boxed<&with_faults<&mps_convolution_transpose_backward_kernel>>();
  }
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
  return a.release_dir == b.release_dir && a.macos_major == b.macos_major && a.macos == b.macos;
}

}  // namespace

std::string emulator_label(const std::string& release_version, int macos_major) {
  return fmt::format("emulated MPS (PyTorch {} registry, macOS {} rules)", release_version, macos_major);
}

std::string EmulatorInfo::label() const {
  return emulator_label(release_version, macos_major);
}

const EmulatorInfo* active_mps_emulator() {
  return g_state ? &g_state->info : nullptr;
}

bool is_emulated_mps_address(uintptr_t address) {
  return is_device_address(address);
}

void after_caught_fault() {
  close_abandoned_windows();
}

namespace {

// Whether the linked libtorch serves an operator on every backend with a CompositeExplicitAutograd kernel.
bool linked_composite_explicit(const c10::OperatorHandle& op) {
  return op.hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) ||
         op.hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutogradNonFunctional);
}

// Note [Kernels registered before the fork]
// Registering the emulator's kernels writes the dispatch table of every operator the release has (about 2,000 for
// 2.14.1): in a forked worker those writes copied, page by page, what it shared with the run, and the kernel's copy-on-
// write faults and TLB shootdowns were a third of the default audit's samples, paid again by every worker started
// after a crash. So a run that forks its workers registers the kernels once, before the first fork
// (prepare_mps_emulator), and its workers find them there. The device memory cannot be shared that way: it is one
// memfd per process, mapped MADV_DONTFORK (Note [Emulated MPS memory] in device_memory.cc), so each process sets up
// its own when it activates the emulator (State::device_pid).
State& register_kernels(const EmulatorOptions& requested) {
  EmulatorOptions options = requested;
  if (options.release_dir.empty()) {
    options.release_dir = default_release_dir();
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
    return *g_state;
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
  std::optional<MpsLimits> limits = load_shipped_mps_limits();

  // From here on the state lives as long as the process: the dispatcher keeps pointers into it.
  State* state = new State();
  g_state = state;
  state->options = options;
  state->faults = std::move(fault_plan);
  state->limits = std::move(limits);
  state->info.release_dir = options.release_dir;
  // A folder not named pytorch-X.Y.Z (a wheel's torchgen/packaged/ATen/native) is the linked release's.
  state->info.release_version = files.version.empty() ? std::string(compat::kTorchVersion) : files.version;
  state->info.macos_major = options.macos_major;
  state->info.macos = options.macos ? options.macos : options.macos_major * 100;
  state->info.fallback_enabled = options.fallback.value_or(fallback_enabled_by_environment());

  state->kernels =
      std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::MPS, __FILE__, __LINE__);
  for (const auto& op : release.ops) {
    const std::string bare = op.name.substr(op.name.find("::") + 2);
    const size_t dot = bare.find('.');
    const auto handle =
        dispatcher.findOp({"aten::" + bare.substr(0, dot), dot == std::string::npos ? "" : bare.substr(dot + 1)});
    if (op.status == OpStatus::kNone && handle && linked_composite_explicit(*handle)) {
      // Note [Kernels the linked libtorch lacks]: the release has no kernel for it, the linked libtorch one for every
      // backend; a Mac with the release reaches MPS's fallback, and so does this.
      state->kernels->impl(bare.c_str(), mps_fallback(state->info.fallback_enabled));
      ++state->info.release_fallbacks;
      continue;
    }
    if (op.status != OpStatus::kNative && op.status != OpStatus::kCpuFallback) continue;
    if (!handle) {
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
  state->fallback->fallback(mps_fallback(state->info.fallback_enabled));
  return *state;
}

}  // namespace

void prepare_mps_emulator(const EmulatorOptions& options) {
  std::lock_guard<std::mutex> lock(g_activation);
  register_kernels(options);
}

const EmulatorInfo& activate_mps_emulator(const EmulatorOptions& options) {
  std::lock_guard<std::mutex> lock(g_activation);
  State& state = register_kernels(options);
  if (state.device_pid != ::getpid()) {
    state.info.memory_kept_from_cpu =
        register_emulated_device(state.faults.plans(FaultKind::kTouch) || state.faults.plans(FaultKind::kTouchThenHang),
                                 state.options.macos_major);
    state.device_pid = ::getpid();
  }
  return state.info;
}

}  // namespace mps_audit::emu
