// Calls a recording's CPU made with operators it chose for itself.
//
// Note [The recording device's own choices]
// A program's calls are recorded below autograd, after composite operators have decomposed, and some composites choose
// their operators by device. F.scaled_dot_product_attention (aten/src/ATen/native/transformers/attention.cpp) runs
// _scaled_dot_product_flash_attention_for_cpu on the CPU, and autograd then its backward. A Mac chooses otherwise:
// under autograd, _scaled_dot_product_attention_math, whose operators (matmul, softmax, ...) autograd then
// differentiates; without grad, with contiguous inputs and no dropout, _scaled_dot_product_attention_math_for_mps.
// Replaying the CPU's choice on MPS would report a fallback no Mac meets. So a replay runs the operator a Mac calls in
// the CPU's operator's place where one takes the same arguments by name (_scaled_dot_product_attention_math takes
// query, key, value, attn_mask, dropout_p, is_causal and scale as the CPU's does; the CPU's second output, logsumexp,
// has no counterpart and is not compared), and leaves the CPU's own backward out, saying why (skip reason
// `recording_device`). The table is the CPU's choices that a recording on the CPU holds; a recording made on a Mac
// holds MPS's own choices and needs none.
#include "probe/device_choices.h"

#include <array>

namespace mps_audit {
namespace {

const std::array<DeviceChoice, 2>& choices() {
  static const std::array<DeviceChoice, 2> table = {{
      {"aten::_scaled_dot_product_flash_attention_for_cpu", "aten::_scaled_dot_product_attention_math", ""},
      {"aten::_scaled_dot_product_flash_attention_for_cpu_backward", "",
       "not probed: the recording's CPU chose this operator for itself (the backward of its flash attention); on a "
       "Mac, autograd differentiates the operators of _scaled_dot_product_attention_math (matmul, softmax) instead, "
       "as a TorchScript training step audits them"},
  }};
  return table;
}

}  // namespace

const DeviceChoice* recording_device_choice(const std::string& op) {
  for (const auto& c : choices()) {
    if (c.recorded == op) return &c;
  }
  return nullptr;
}

std::string replayed_operator(const std::string& op) {
  const DeviceChoice* c = recording_device_choice(op);
  return c && !c->replayed.empty() ? c->replayed : op;
}

}  // namespace mps_audit
