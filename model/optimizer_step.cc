// One optimizer step, as torch.optim takes it.
#include "model/optimizer_step.h"

#include <cmath>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/zeros_like.h>

#include "common/torch_compat.h"

namespace mps_audit {

// Note [Optimizer steps]
// torch.optim's defaults: Adam(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0), AdamW(the same, but
// weight_decay=1e-2, applied to the parameter before the step). Off CUDA (MPS and CPU alike) they run the
// single-tensor implementation (_single_tensor_adam), whose first step from a fresh state is, per parameter:
//   exp_avg = zeros_like(p); exp_avg_sq = zeros_like(p)
//   exp_avg.lerp_(grad, 1 - beta1)                    (1.13: exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1))
//   exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
//   denom = (exp_avg_sq.sqrt() / sqrt(1 - beta2)).add_(eps)
//   p.addcdiv_(exp_avg, denom, value=-lr / (1 - beta1))
// (the step counter is a CPU tensor, not the target's). SGD without momentum is p.add_(grad, alpha=-lr).

std::optional<Optimizer> parse_optimizer(std::string_view name) {
  if (name == "sgd") return Optimizer::kSgd;
  if (name == "adam") return Optimizer::kAdam;
  if (name == "adamw") return Optimizer::kAdamW;
  return std::nullopt;
}

std::string_view to_string(Optimizer o) {
  switch (o) {
    case Optimizer::kSgd: return "SGD";
    case Optimizer::kAdam: return "Adam";
    case Optimizer::kAdamW: return "AdamW";
  }
  return "SGD";
}

double default_learning_rate(Optimizer o) {
  return o == Optimizer::kSgd ? 0.01 : 1e-3;
}

void optimizer_step(Optimizer o, double lr, std::vector<at::Tensor>& params) {
  at::NoGradGuard no_grad;
  constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8, kAdamWDecay = 1e-2;
  for (auto& p : params) {
    const at::Tensor grad = p.grad();
    if (!grad.defined()) continue;
    if (o == Optimizer::kSgd) {
      p.add_(grad, -lr);
      continue;
    }
    if (o == Optimizer::kAdamW) p.mul_(1 - lr * kAdamWDecay);
    at::Tensor exp_avg = at::zeros_like(p), exp_avg_sq = at::zeros_like(p);
#if MPS_AUDIT_TORCH_AT_LEAST(2, 0)
    exp_avg.lerp_(grad, 1 - kBeta1);
#else
    exp_avg.mul_(kBeta1).add_(grad, 1 - kBeta1);
#endif
    exp_avg_sq.mul_(kBeta2).addcmul_(grad, grad, 1 - kBeta2);
    const at::Tensor denom = exp_avg_sq.sqrt().div(std::sqrt(1 - kBeta2)).add_(kEps);
    p.addcdiv_(exp_avg, denom, -lr / (1 - kBeta1));
  }
}

}  // namespace mps_audit
