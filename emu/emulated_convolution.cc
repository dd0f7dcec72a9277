// The convolution kernels of emulated MPS: see emulated_convolution.h.
#include "emu/emulated_convolution.h"

#include <cstdint>
#include <tuple>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/_mps_convolution.h>
#include <ATen/ops/_mps_convolution_transpose.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>
#include <ATen/ops/mps_convolution_backward.h>
#include <ATen/ops/mps_convolution_transpose_backward.h>
#include <ATen/record_function.h>

#include "emu/emulated_device.h"

namespace mps_audit::emu {
namespace {

std::vector<int64_t> zeros_like_list(const std::vector<int64_t>& v) {
  return std::vector<int64_t>(v.size(), 0);
}

// A CPU tensor to compute with: float32 for half and bfloat16, which Metal convolves and the CPU may not.
at::Tensor computable(const at::Tensor& t) {
  if (!t.defined()) return t;
  const at::Tensor v = host_view(t);
  return low_precision(v.scalar_type()) ? v.to(c10::ScalarType::Float) : v;
}

at::Tensor optional_computable(const c10::IValue& v) {
  return v.isNone() ? at::Tensor() : computable(v.toTensor());
}

// A CPU result as an MPS tensor of the inputs' dtype.
c10::IValue result_as(const at::Tensor& result, c10::ScalarType type) {
  return result.defined() ? c10::IValue(to_mps(result.to(type))) : c10::IValue(result);
}

void check_same_type(const at::Tensor& input, const at::Tensor& other, const char* what) {
  TORCH_CHECK(!other.defined() || input.options().type_equal(other.options()), "Input type (", input.toString(),
              ") and ", what, " type (", other.toString(), ") should be the same");
}

}  // namespace

// _mps_convolution(Tensor self, Tensor weight, Tensor? bias, int[] padding, int[] stride, int[] dilation, int groups)
void mps_convolution_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  auto a = torch::jit::pop(*stack, op.schema().arguments().size());
  const at::Tensor input = a[0].toTensor();
  at::DisableRecordFunctionGuard no_trace;
  const auto padding = a[3].toIntVector();
  torch::jit::push(*stack, result_as(at::convolution(computable(input), computable(a[1].toTensor()),
                                                     optional_computable(a[2]), a[4].toIntVector(), padding,
                                                     a[5].toIntVector(), false, zeros_like_list(padding), a[6].toInt()),
                                     input.scalar_type()));
}

// _mps_convolution_transpose(Tensor self, Tensor weight, int[] padding, int[] output_padding, int[] stride,
//                            int[] dilation, int groups)
void mps_convolution_transpose_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  auto a = torch::jit::pop(*stack, op.schema().arguments().size());
  at::DisableRecordFunctionGuard no_trace;
  const at::Tensor input = a[0].toTensor();
  torch::jit::push(*stack, result_as(at::convolution(computable(input), computable(a[1].toTensor()), at::Tensor(),
                                                     a[4].toIntVector(), a[2].toIntVector(), a[5].toIntVector(), true,
                                                     a[3].toIntVector(), a[6].toInt()),
                                     input.scalar_type()));
}

// mps_convolution_backward(Tensor self, Tensor grad_output, Tensor weight, int[] padding, int[] stride,
//                          int[] dilation, int groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
void mps_convolution_backward_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  auto a = torch::jit::pop(*stack, op.schema().arguments().size());
  at::DisableRecordFunctionGuard no_trace;
  const at::Tensor input = a[0].toTensor(), weight = computable(a[2].toTensor());
  const auto padding = a[3].toIntVector();
  const auto mask = a[7].toBoolList();
  const std::vector<int64_t> bias_sizes = {weight.size(0)};
  const auto grads = at::convolution_backward(computable(a[1].toTensor()), computable(input), weight, bias_sizes,
                                              a[4].toIntVector(), padding, a[5].toIntVector(), false,
                                              zeros_like_list(padding), a[6].toInt(), {mask[0], mask[1], mask[2]});
  const auto type = input.scalar_type();
  torch::jit::push(*stack, result_as(std::get<0>(grads), type), result_as(std::get<1>(grads), type),
                   result_as(std::get<2>(grads), type));
}

// mps_convolution_transpose_backward(Tensor self, Tensor grad_output, Tensor weight, int[] padding,
//     int[] output_padding, int[] stride, int[] dilation, int groups, bool[2] output_mask) -> (Tensor, Tensor)
void mps_convolution_transpose_backward_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  auto a = torch::jit::pop(*stack, op.schema().arguments().size());
  at::DisableRecordFunctionGuard no_trace;
  const auto mask = a[8].toBoolList();
  const at::Tensor input = a[0].toTensor();
  const auto grads = at::convolution_backward(
      computable(a[1].toTensor()), computable(input), computable(a[2].toTensor()), c10::nullopt, a[5].toIntVector(),
      a[3].toIntVector(), a[6].toIntVector(), true, a[4].toIntVector(), a[7].toInt(), {mask[0], mask[1], false});
  const auto type = input.scalar_type();
  torch::jit::push(*stack, result_as(std::get<0>(grads), type), result_as(std::get<1>(grads), type));
}

// convolution_overrideable(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding,
//     int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor
void convolution_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  auto a = torch::jit::pop(*stack, op.schema().arguments().size());
  const at::Tensor input = a[0].toTensor(), weight = a[1].toTensor();
  const at::Tensor bias = a[2].isNone() ? at::Tensor() : a[2].toTensor();
  check_same_type(input, weight, "weight");
  check_same_type(input, bias, "bias");
  const auto stride = a[3].toIntVector(), padding = a[4].toIntVector(), dilation = a[5].toIntVector();
  const int64_t groups = a[8].toInt();
  at::Tensor out;
  if (!a[6].toBool()) {
    out = at::_mps_convolution(input.contiguous(), weight,
                               bias.defined() ? c10::optional<at::Tensor>(bias.contiguous()) : c10::nullopt, padding,
                               stride, dilation, groups);
  } else {
    out = at::_mps_convolution_transpose(input.contiguous(), weight, padding, a[7].toIntVector(), stride, dilation,
                                         groups);
    if (bias.defined()) {
      std::vector<int64_t> shape(static_cast<size_t>(input.dim()), 1);
      shape[1] = -1;
      out.add_(bias.reshape(shape));
    }
  }
  torch::jit::push(*stack, out);
}

// convolution_backward_overrideable(Tensor grad_output, Tensor input, Tensor weight, int[] stride, int[] padding,
//     int[] dilation, bool transposed, int[] output_padding, int groups, bool[3] output_mask)
//     -> (Tensor grad_input, Tensor grad_weight, Tensor grad_bias)
void convolution_backward_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  auto a = torch::jit::pop(*stack, op.schema().arguments().size());
  const at::Tensor grad = a[0].toTensor(), input = a[1].toTensor(), weight = a[2].toTensor();
  check_same_type(input, weight, "weight");
  const auto stride = a[3].toIntVector(), padding = a[4].toIntVector(), dilation = a[5].toIntVector();
  const int64_t groups = a[8].toInt();
  const auto mask = a[9].toBoolList();
  if (!a[6].toBool()) {
    const auto grads = at::mps_convolution_backward(input, grad, weight, padding, stride, dilation, groups,
                                                    {mask[0], mask[1], mask[2]});
    torch::jit::push(*stack, std::get<0>(grads), std::get<1>(grads), std::get<2>(grads));
  } else {  // the caller sums grad_output for the bias
    const auto grads = at::mps_convolution_transpose_backward(input, grad, weight, padding, a[7].toIntVector(), stride,
                                                              dilation, groups, {mask[0], mask[1]});
    torch::jit::push(*stack, std::get<0>(grads), std::get<1>(grads), at::Tensor());
  }
}

}  // namespace mps_audit::emu
