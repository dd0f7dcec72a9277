// The prober's typed result: one record per operator x dtype, the worst sample deciding. Reporters render these;
// they never decide a verdict.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mps_audit {

// In order of severity, worst last (see worse()).
enum class Verdict {
  kSkip,          // not probed: no reference, no inputs, or the spec says so
  kPass,          // native, and matches the CPU
  kXfail,         // failed, as the spec (or, on real MPS, PyTorch's own MPS test lists) says it does
  kFallback,      // matches, but (part of) the work ran on the CPU
  kUnsupported,   // the target refuses the op or dtype (NotImplementedError, dtype TypeError)
  kKnownFailure,  // ran fine here, but PyTorch's own MPS test lists expect it to fail on a real Mac (emulated MPS)
  kXpass,         // passed, though the spec (or, on real MPS, PyTorch's own MPS test lists) says it fails
  kMismatch,      // differs from the CPU beyond tolerance
  kError,         // another exception on the target while the CPU succeeded
  kTimeout,       // the probe did not finish in time
  kCrash,         // the probe killed its worker process
};

inline constexpr std::array<Verdict, 11> kAllVerdicts = {
    Verdict::kPass,        Verdict::kFallback, Verdict::kKnownFailure, Verdict::kMismatch,
    Verdict::kUnsupported, Verdict::kError,    Verdict::kCrash,        Verdict::kTimeout,
    Verdict::kSkip,        Verdict::kXfail,    Verdict::kXpass};

std::string_view to_string(Verdict v);
std::optional<Verdict> parse_verdict(std::string_view name);
// A verdict's position in kAllVerdicts (the order reports list verdicts in).
size_t verdict_index(Verdict v);
// The worse of two verdicts of one op x dtype (the worst sample decides).
Verdict worse(Verdict a, Verdict b);

// What a verdict rests on (every record says): a kernel that ran on the target; the emulated release's registry
// (which kernels it has, MPS's dtype rules) with the CPU's numbers; or PyTorch's own expectations of real MPS.
inline constexpr const char* kBasisKernel = "kernel";
inline constexpr const char* kBasisRegistry = "registry";
inline constexpr const char* kBasisExpectations = "expectations";

// PyTorch's own expectation of real MPS for a record (emu/expectations.h): the entry of its MPS test lists that
// applies to the op x dtype, as the record carries it.
struct ExpectationNote {
  std::string kind;     // unimplemented, wrong, error, crash, flaky, not_a_bug
  std::string scope;    // forward, gradient
  std::string release;  // "2.11.0": whose lists
  std::string list;     // "UNIMPLEMENTED_XFAILLIST"
  std::string opinfo;   // the OpInfo the list names
  std::string source;   // "torch/testing/_internal/common_mps.py:412"
  std::string reason;   // the list's comment
  std::string macos;    // the condition: "*", "<15.0"
};

struct ProbeResult {
  std::string op;     // "aten::add.Tensor"
  std::string dtype;  // "float32"
  Verdict verdict = Verdict::kSkip;
  std::vector<std::string> fallback_ops;  // operators that ran aten::_to_cpu on the target
  std::string message;                    // why, for anything but pass
  std::string sample;                     // the sample that decided the verdict
  std::string registry_status;            // the registry's static classification for the target's key
  std::vector<std::string> warnings;      // what the target run warned (warn-always on), each message once
  int samples = 0;                        // samples run
  // Comparison of the deciding sample (zero when values were not compared).
  double max_abs_error = 0, max_rel_error = 0;
  int64_t mismatches = 0;
  std::string first_mismatch;  // "[1, 2]"
  double seconds = 0;
  std::string basis;     // kBasisKernel, kBasisRegistry or kBasisExpectations; empty in files older than it
  std::string observed;  // the verdict the target gave, where PyTorch's expectations changed it; else empty
  std::optional<ExpectationNote> expectation;
};

// Why an op x dtype was not probed, from a skip's message (empty for other verdicts):
//   spec                the spec says so
//   no_inputs           no inputs could be made for an argument's type: a sample in the spec would help
//   no_cpu_kernel       the CPU has no kernel for the operator (CUDA-only, or a library this libtorch lacks), or
//                       only a stub that raises for any input (a Dimname overload not supported yet), or a CPU
//                       path that needs a backend this libtorch lacks
//   cpu_dtype           the CPU kernel refuses the dtype: the operator does not take it
//   cpu_rejects_inputs  the CPU refused every synthesized input: a sample in the spec would help
//   cpu_crash           the CPU reference crashed or did not finish
//   cpu_unstable        the CPU reference differs from run to run (reads memory it never wrote): nothing to compare
//   linked_libtorch     the linked libtorch cannot show what the emulated release does (Note [Kernels the linked
//                       libtorch lacks] in emu/linked_gaps.cc), or cannot make the input (named tensors, gone in 2.14)
//   recording_device    a replayed call the recording's CPU made with an operator of its own, which a Mac does not
//                       call (Note [The recording device's own choices] in probe/device_choices.cc)
std::string_view skip_reason(const ProbeResult& r);
inline constexpr std::array<std::string_view, 9> kSkipReasons = {
    "spec",      "no_inputs",    "no_cpu_kernel",   "cpu_dtype",       "cpu_rejects_inputs",
    "cpu_crash", "cpu_unstable", "linked_libtorch", "recording_device"};

}  // namespace mps_audit
