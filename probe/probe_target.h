// The target a probe runs on, and the rules each sample's probe shares with the probe of its operator (probe_op.h,
// sample_probe.h): the tolerance of a comparison, which outputs are indices, what an exception says.
#pragma once

#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "probe/compare.h"
#include "probe/spec.h"

namespace mps_audit {

struct ProbeTarget {
  std::string name;  // "mps-emu", "mps", "cuda", "cpu", "meta"
  c10::Device device = c10::Device(c10::kCPU);
  int macos_major = 0;        // of the (real or emulated) MPS device; 0 for other targets
  std::string torch_version;  // of the linked libtorch, for the spec's conditions
  // A device shared in turns: a probe's recorded samples, and the probes a worker is handed together, run each stage
  // together, every operator before any output is copied back, with one wait (Note [Samples in one round trip] in
  // sample_probe.cc and Note [Probes in one turn] in probe_op.cc). The run sets it for CUDA.
  bool in_turns = false;
};

// The tolerance a comparison uses: the spec's for the operator and dtype, else (nullopt) each output's dtype's
// default; where the CPU has no kernel for a low-precision dtype and the reference was computed in float32, the
// spec's or the probed dtype's, widened to at least atol = rtol = 1e-2.
std::optional<Tolerance> comparison_tolerance(const Tolerance* spec_tolerance, c10::ScalarType dtype,
                                              bool reference_in_float32);

// The first line of what an exception says; for a c10::Error, without the C++ backtrace libtorch appends.
std::string error_text(const std::exception& e);

// For CompareMode::kIndicesByValues: the first tensor argument, the `dim` argument, and which outputs (in the order
// the prober compares them: returns, then written arguments) are indices: returns named so, the written arguments
// that alias them (max.dim_max names its indices argument max_values), and every output of an arg* operator.
IndexSource index_source(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args);

}  // namespace mps_audit
