// A model's inputs: `--input SHAPE[:DTYPE]` read, and random tensors of those shapes made on the CPU, the same every
// run, with the labels of a --train step's cross-entropy loss.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <c10/core/ScalarType.h>

namespace mps_audit {

struct InputSpec {
  std::vector<int64_t> shape;
  c10::ScalarType dtype = c10::kFloat;
  std::string text;  // "4x3x32x32:float32"
};

// "4x3x32x32", "2x16:int64" (float32 when no dtype is given). Throws UserError for a bad one.
InputSpec parse_input(const std::string& text);

// Random inputs on the CPU, the same every run for a seed: floats from a standard normal, integers (token ids, class
// indices) uniform in [0, high), booleans 0 or 1.
std::vector<c10::IValue> make_inputs(const std::vector<InputSpec>& specs, int64_t high, uint64_t seed);

// Class labels in [0, classes), one per row of the first input, for a cross-entropy loss; from a generator of its
// own (seed + 1), so that the inputs are the same with and without labels.
at::Tensor make_labels(const std::vector<InputSpec>& specs, int64_t classes, uint64_t seed);

}  // namespace mps_audit
