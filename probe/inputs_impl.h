// What the files of input synthesis share (inputs.cc, well_posed.cc, out_variants.cc): what an operator's name
// and schema say about its arguments, and the well-posed adjustment of synthesized inputs. Only they include it.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Generator.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>

namespace mps_audit::detail {

// What an operator's name says about its arguments.
struct OpTraits {
  std::string base;      // "upsample_nearest2d_backward"
  std::string overload;  // "vec"
  int spatial = 0;       // N of an N-d operator (conv2d, max_pool3d, reflection_pad1d, grid_sampler_2d), else 0
  bool pad = false;      // a padding operator: two padding entries per spatial dimension
  bool named = false;    // a Dimname overload: the input gets dimension names d0, d1, ...
};
OpTraits traits_of(const c10::FunctionSchema& schema);

// n copies of v: the size lists of an N-d operator.
std::vector<int64_t> repeat(int n, int64_t v);
// The shape of an N-d operator's input: a batch of 2 with 3 channels, 6 along each spatial dimension.
std::vector<int64_t> spatial_shape(int n);

// An argument the operator writes (in-place self, out=).
bool is_write(const c10::Argument& a);
// An out= argument: a kwarg-only Tensor (or Tensor[]) the operator writes.
bool is_out_argument(const c10::Argument& a);

// Adjusts the synthesized `args` (in schema order) of an operator with a well_posed_rule() so that its result is well
// defined (Note [well-posed synthesis] in probe/well_posed.cc).
void make_well_posed(const c10::FunctionSchema& schema, const OpTraits& op, std::vector<c10::IValue>& args,
                     c10::ScalarType dtype, at::Generator& gen);

}  // namespace mps_audit::detail
