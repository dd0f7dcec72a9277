// Makes the arguments of one sample on the CPU: from the spec's sample where it names an argument, else from the
// argument's default, else synthesized from its type in the schema.
// Implemented in inputs.cc, with the inputs of out= variants in out_variants.cc and the well-posed rules in
// well_posed.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>

#include "probe/spec.h"

namespace mps_audit {

struct SampleInputs {
  std::string name;               // the sample's name ("default" when synthesized)
  std::vector<c10::IValue> args;  // in schema order, on the CPU
  std::string unsupported;        // non-empty: no inputs could be made, and why
  // A condition sample's (probe/condition_samples.h): its views (a storage offset, gaps between elements) reach the
  // reference and the target as views of the same layout, where a plain copy would make them contiguous; and the
  // arguments at these positions (0-d tensors) stay on the CPU when the others go to the target.
  bool keep_views = false;
  std::vector<size_t> on_cpu;
  // Device arguments (on the CPU for the reference) that are the target's device on the target: a sample's `device:
  // mps`, a copy to the device.
  std::vector<size_t> target_device;
  // A known bug's own call that the CPU refuses (an index out of range): the bug is that MPS does not. The target
  // refusing it too is its pass; returning a result, its failure.
  bool cpu_refuses = false;
  bool cpu_may_refuse = false;  // one whose CPU rule changed between releases: a refusal, where it refuses, as above
};

// Ways to synthesize inputs when the spec gives no sample, tried in order until the CPU accepts them: the spec's
// default shape, then other ranks (many operators want a square matrix, an image batch, a vector), with optional
// arguments left out or filled in (clamp needs min or max); for an N-d operator (conv2d, max_pool3d, upsample_linear1d)
// a batch of N-d images with kernel, stride, padding and output sizes of N entries; for a backward operator, each of
// those again with the arguments its forward's run gives it (the incoming gradient shaped like the forward's output,
// the forward's indices).
struct Synthesis {
  std::string name;            // "default", "4x4", "2x3x4x4+optionals", "2-d", "from-forward:2-d", ...
  std::vector<int64_t> shape;  // empty: the spec's default shape
  bool fill_optionals = false;
  bool spatial = false;       // N-d operator: N-entry size lists, convolution weights and grids to match
  bool from_forward = false;  // backward operator: arguments from a run of the forward
};
// The variants for an operator, in the order they are tried; the same for every call with one schema.
std::vector<Synthesis> synthesis_variants(const c10::FunctionSchema& schema);

// Deterministic: the values depend only on op, dtype and sample name. `how` applies when `sample` is null.
SampleInputs make_inputs(const c10::FunctionSchema& schema, c10::ScalarType dtype, const Spec& spec,
                         const SampleSpec* sample, const std::string& seed_key, const Synthesis* how = nullptr);

// The functional twin of an out= variant (a schema with kwarg-only Tensor arguments it writes): the overload of the
// same name that writes nothing and whose arguments are the out= variant's others, by name and type
// (add.out -> add.Tensor, max.dim_max -> max.dim). Nullopt for other schemas, or when there is none.
std::optional<c10::OperatorHandle> functional_twin(const c10::FunctionSchema& schema);

// The arguments of an out= variant from inputs of its functional twin: the twin's arguments by name, and for each
// out argument a tensor of zeros of the dtype and shape of the twin's matching return, found by running the twin on
// the CPU (size 0, which the operator resizes, for a sparse or quantized return). When the twin rejects the inputs the
// out tensors get `dtype` (Long for indices), and the CPU run of the out= variant will say why.
SampleInputs out_variant_inputs(const c10::FunctionSchema& out_schema, const c10::OperatorHandle& twin,
                                const SampleInputs& twin_inputs, c10::ScalarType dtype);

// Operators whose synthesized inputs are adjusted to make the result well defined (see docs/synthesis.md).
enum class WellPosed {
  kNone,
  kUniqueIndices,    // writes by index: index_add, index_copy, index_put, put, scatter without reduction
  kSpd,              // symmetric (Hermitian) positive definite matrices: cholesky*, eigh, eigvalsh
  kWellConditioned,  // diagonally dominant matrices: solvers, inverses, decompositions, determinants
  kNonOverlapping,   // as_strided_scatter, set_: a contiguous stride for the size, storage offset 0
  kFromPooling,      // max_unpool*: values and indices of a max pooling with stride = kernel
};
WellPosed well_posed_rule(const std::string& base_name);

// Well-posed tensors, made in float64 and cast to `type`, of shape [..., m, n].
at::Tensor spd_matrix(const std::vector<int64_t>& shape, c10::ScalarType type, at::Generator& gen);
at::Tensor well_conditioned_matrix(const std::vector<int64_t>& shape, c10::ScalarType type, at::Generator& gen);

}  // namespace mps_audit
