// The one place that knows how libtorch 1.13 and 2.x differ; everything else includes this instead of
// testing versions itself. What needs ATen's own headers is implemented in torch_compat.cc.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <c10/util/Exception.h>
#include <c10/util/Logging.h>
#include <torch/csrc/api/include/torch/version.h>

#define MPS_AUDIT_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// Whether this libtorch's autograd engine synchronizes a backward pass on the streams of the process's accelerator
// (at::accelerator::getAccelerator(), decided by the device hooks' isBuilt()), so that an emulated MPS device must be
// that accelerator to train on: from 2.6, with AcceleratorHooksInterface::isBuilt and at::accelerator. 1.13's
// engine never asks; 2.0 to 2.5 are not supported for training on emulated MPS. See Note [Emulated MPS as the
// accelerator] in emu/mps_emulator.cc.
#define MPS_AUDIT_TORCH_ACCELERATOR_HOOKS MPS_AUDIT_TORCH_AT_LEAST(2, 6)

// Named tensors (Tensor::names(), at::Dimname, ATen/NamedTensorUtils.h, and the Dimname overloads of
// native_functions.yaml) are gone from libtorch 2.14's headers. Asked of the headers themselves rather than of a
// version number, since the release that dropped them is the headers' business.
#if __has_include(<ATen/NamedTensorUtils.h>)
#define MPS_AUDIT_TORCH_NAMED_TENSORS 1
#else
#define MPS_AUDIT_TORCH_NAMED_TENSORS 0
#endif

namespace at {
class Tensor;
}  // namespace at

namespace mps_audit::compat {

// The version of the libtorch this binary was compiled against, "1.13.0" for instance. Debian's 1.13.1
// package reports itself as 1.13.0 here (its version.h says so).
inline constexpr const char* kTorchVersion = TORCH_VERSION;

// The warning utilities (WarningHandlerGuard, set_warnAlways) moved from c10::Warning to c10::WarningUtils in 2.0.
#if MPS_AUDIT_TORCH_AT_LEAST(2, 0)
namespace torch_warnings = ::c10::WarningUtils;
#else
namespace torch_warnings = ::c10::Warning;
#endif

// A warning handler that keeps the messages instead of printing them. WarningHandler::process took
// (SourceLocation, msg, verbatim) before 2.0 and takes a c10::Warning since.
class CollectingWarningHandler : public c10::WarningHandler {
 public:
#if MPS_AUDIT_TORCH_AT_LEAST(2, 0)
  void process(const c10::Warning& warning) override {
    messages.push_back(warning.msg());
  }
#else
  void process(const c10::SourceLocation&, const std::string& msg, const bool) override {
    messages.push_back(msg);
  }
#endif
  std::vector<std::string> messages;
};

// c10::Allocator::allocate is const in 1.13 and not in 2.x, which also added copy_data: an allocator declares
// both allocate() overloads and copy_data() without `override`, and whichever the base has is overridden
// (see emu/mps_emulator.cc).

// The hooks registries' creators took an Args struct (at::MPSHooksArgs, at::CUDAHooksArgs) up to 2.11; 2.14's
// MPSHooksRegistry passes none. emu/emulated_accelerator.cc registers generic lambdas that take either.

// What a c10::Error carries instead of a C++ backtrace once install_cheap_stack_trace_fetcher() ran.
inline constexpr const char* kNoBacktrace = "(backtrace not collected)";

// Every c10::Error (TORCH_CHECK and the like) asks the process's stack-trace fetcher for a backtrace when it is
// made; libtorch's default walks and, in 1.13, symbolizes the stack then, which costs far more than the error
// itself. Probing throws one for every input a CPU kernel refuses, so workers replace it with one that returns a
// constant; the messages the audit keeps come from what_without_backtrace(), which the fetcher does not touch.
// The fetcher took std::function<std::string()> in 1.13; 2.x prefers a lazy c10::Backtrace and keeps a
// std::string overload, which the explicit std::function picks.
inline void install_cheap_stack_trace_fetcher() {
  ::c10::SetStackTraceFetcher(std::function<std::string()>([] { return std::string(kNoBacktrace); }));
}

// Named tensors, where the linked libtorch has them. Without them (2.14 on) a tensor has no names: has_names() is
// false, dimension_names() empty, and the functions that set or carry names do nothing. A probe that needs names
// is a skip that says so (kNoNamedTensors), never a silent drop.
inline constexpr bool kNamedTensors = MPS_AUDIT_TORCH_NAMED_TENSORS;
inline constexpr const char* kNoNamedTensors = "named tensors do not exist in this libtorch (" TORCH_VERSION ")";
bool has_names(const at::Tensor& t);
// Each dimension's name with its namespace ("dimname::d0"); empty when the tensor has none.
std::vector<std::string> dimension_names(const at::Tensor& t);
// `t` without its names (a view), or `t` itself when it has none.
at::Tensor without_names(const at::Tensor& t);
// Names `t`'s dimensions in place (qualified names, or "*" for a wildcard, one per dimension, checked as PyTorch
// checks them).
void set_dimension_names(const at::Tensor& t, const std::vector<std::string>& qualified);
void copy_names(const at::Tensor& from, const at::Tensor& to);
// Runs `body` with name inference off, then gives `self` the names that broadcasting `self` with `other` yields, as
// the composite copy_ does (native/Copy.cpp).
void with_broadcast_names(const at::Tensor& self, const at::Tensor& other, const std::function<void()>& body);
// Name inference off for a scope (at::NoNamesGuard where names exist).
class NoNamesGuard {
 public:
  NoNamesGuard();
  ~NoNamesGuard();
  NoNamesGuard(const NoNamesGuard&) = delete;
  NoNamesGuard& operator=(const NoNamesGuard&) = delete;

 private:
  bool previous_ = false;
};

}  // namespace mps_audit::compat
