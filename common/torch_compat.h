// The one place that knows how libtorch 1.13 and 2.x differ; everything else includes this instead of
// testing versions itself.
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

}  // namespace mps_audit::compat
