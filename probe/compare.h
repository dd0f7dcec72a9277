// Compares a target's outputs with the CPU reference: dtype and shape must match; floating point within
// tolerance with NaN and infinities in the same places; integers and booleans exactly; complex by parts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

namespace mps_audit {

struct Tolerance {
  double atol = 0, rtol = 0;
};

// torch.testing.assert_close's defaults for the dtype (exact for integers and booleans).
Tolerance default_tolerance(c10::ScalarType type);

enum class CompareMode {
  kValues,            // element by element
  kShape,             // dtype and shape only: random and uninitialised outputs
  kSorted,            // values after sorting each output: ties and unordered results
  kIndicesByValues,   // index outputs by the input values they point at: sort, topk, max.dim, argmax with ties
  kVectorsUpToPhase,  // matrices as vectors each right up to a sign (real) or a unit phase (complex): the
                      // eigenvectors and singular vectors of eigh and svd; other outputs by values
};

// What index outputs point into, for CompareMode::kIndicesByValues. Without it the mode compares values.
struct IndexSource {
  at::Tensor input;                   // the operator's input, on the CPU
  std::optional<int64_t> dim;         // the dimension indexed; none: the flattened input (argmax without dim)
  std::vector<size_t> index_outputs;  // which outputs (top-level positions) are indices
};

struct Comparison {
  bool equal = true;
  std::string message;  // what differs, when not equal
  double max_abs_error = 0, max_rel_error = 0;
  int64_t mismatches = 0;
  std::string first_mismatch;  // index of the first mismatching element, "[i, j]"
};

// `actual` must already be on the CPU. Tuples, lists, scalars and None are compared element by element.
// Index outputs (with kIndicesByValues and a source) are equal when they are in range and point at input values
// equal to those the CPU's indices point at: ties may pick different positions.
Comparison compare_outputs(const c10::IValue& expected, const c10::IValue& actual, CompareMode mode,
                           const Tolerance* tolerance_override = nullptr, const IndexSource* indices = nullptr);

}  // namespace mps_audit
