// CPU references for MPS-only operators: see mps_only_kernels.h.
#include "model/mps_only_kernels.h"

#include <tuple>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/matmul.h>
#include <torch/library.h>

namespace mps_audit {
namespace {

// What mps_linear_backward (aten/src/ATen/native/mps/operations/Linear.mm) computes: the gradients of
// linear(self, weight, bias) for the outputs the mask asks for.
std::tuple<at::Tensor, at::Tensor, at::Tensor> linear_backward_reference(const at::Tensor& self,
                                                                         const at::Tensor& grad_output,
                                                                         const at::Tensor& weight,
                                                                         std::array<bool, 3> output_mask) {
  at::Tensor grad_input, grad_weight, grad_bias;
  const at::Tensor grad_2d = grad_output.reshape({-1, grad_output.size(-1)});
  if (output_mask[0]) grad_input = at::matmul(grad_output, weight);
  if (output_mask[1]) grad_weight = grad_2d.t().matmul(self.reshape({-1, self.size(-1)}));
  if (output_mask[2]) grad_bias = grad_2d.sum(0);
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace

void register_cpu_references_for_mps_only_ops() {
  static const bool registered = [] {
    auto op = c10::Dispatcher::singleton().findOp({"aten::linear_backward", ""});
    if (!op || op->hasKernelForDispatchKey(c10::DispatchKey::CPU)) return false;
    // Lives as long as the process: the dispatcher keeps the registration while the Library exists.
    auto* lib = new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
    lib->impl("linear_backward", TORCH_FN(linear_backward_reference));
    return true;
  }();
  (void)registered;
}

}  // namespace mps_audit
