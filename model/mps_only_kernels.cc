// CPU references for MPS-only operators: see mps_only_kernels.h.
#include "model/mps_only_kernels.h"

#include <tuple>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/max_pool2d_with_indices.h>
#include <ATen/ops/max_pool2d_with_indices_backward.h>
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

// What mps_max_pool2d_backward (aten/src/ATen/native/mps/operations/Pooling.mm, 2.x: MPS implements max_pool2d
// itself, with this derivative) computes: each output's gradient goes to the input element it took the maximum of.
at::Tensor max_pool2d_backward_reference(const at::Tensor& grad_output, const at::Tensor& self,
                                         at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                                         at::IntArrayRef dilation, bool ceil_mode) {
  const at::Tensor indices =
      std::get<1>(at::max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
  return at::max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                              indices);
}

// An operator of the linked libtorch without a CPU kernel.
bool lacks_cpu_kernel(const char* name) {
  auto op = c10::Dispatcher::singleton().findOp({name, ""});
  return op && !op->hasKernelForDispatchKey(c10::DispatchKey::CPU);
}

}  // namespace

void register_cpu_references_for_mps_only_ops() {
  static const bool registered = [] {
    // Lives as long as the process: the dispatcher keeps the registrations while the Library exists.
    auto* lib = new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
    if (lacks_cpu_kernel("aten::linear_backward")) lib->impl("linear_backward", TORCH_FN(linear_backward_reference));
    if (lacks_cpu_kernel("aten::max_pool2d_backward")) {
      lib->impl("max_pool2d_backward", TORCH_FN(max_pool2d_backward_reference));
    }
    return true;
  }();
  (void)registered;
}

}  // namespace mps_audit
