// Makes the arguments of one sample on the CPU: from the spec's sample where it names an argument, else from the
// argument's default, else synthesized from its type in the schema.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>

#include "probe/spec.h"

namespace mps_audit {

struct SampleInputs {
  std::string name;               // the sample's name ("default" when synthesized)
  std::vector<c10::IValue> args;  // in schema order, on the CPU
  std::string unsupported;        // non-empty: no inputs could be made, and why
};

// Deterministic: the values depend only on op, dtype and sample name.
SampleInputs make_inputs(const c10::FunctionSchema& schema, c10::ScalarType dtype, const Spec& spec,
                         const SampleSpec* sample, const std::string& seed_key);

}  // namespace mps_audit
