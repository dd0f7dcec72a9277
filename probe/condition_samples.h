// Samples that meet the input conditions known MPS bugs depend on (non-contiguous, at a storage offset, rank 5, a size
// past the sizes where kernels change route, repeated indices, a CPU scalar operand), derived from a sample the CPU
// took: Note [Condition samples] in condition_samples.cc.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/ScalarType.h>

#include "probe/inputs.h"

namespace mps_audit {

enum class Condition : unsigned {
  kView,       // non-contiguous, at a storage offset
  kRank5,      // rank 5
  kSize1025,   // a dimension of 1,025: past 256 and 1,024
  kSize32769,  // a dimension of 32,769: past 32,768
  kDuplicateIndices,
  kCpuScalar,
  kRepro,  // a known bug's own call (probe/repros.h), not derived from a base
};
inline constexpr unsigned condition_bit(Condition c) {
  return 1u << static_cast<unsigned>(c);
}
// The suffix of a condition sample's name: "recorded:0+view".
std::string_view condition_name(Condition c);

// The sizes of one dimension the size samples have: past every route change of the known bugs that is cheap to reach
// (256, 1024, 32768 elements along one dimension).
inline constexpr int64_t kSmallerSize = 1025;
inline constexpr int64_t kLargerSize = 32769;

struct ConditionSample {
  Condition condition;
  SampleInputs inputs;
};

// What a worker has learnt of an operator's condition samples in its earlier dtypes: the condition_bit()s the CPU, or
// a check on the meta device, refused (a sample the CPU would refuse again is not made again).
struct ConditionMemory {
  unsigned refused = 0;
};

// The condition samples of `op` in `dtype` derived from `base` (a sample the CPU took), in Condition order: each where
// it is well-posed for the operator and the dtype (Note [Condition samples]), but those `memory` says were refused; a
// check on the meta device that fails leaves its condition out and adds it to `memory`.
std::vector<ConditionSample> condition_samples(const c10::OperatorHandle& op, c10::ScalarType dtype,
                                               const SampleInputs& base, ConditionMemory& memory);

}  // namespace mps_audit
