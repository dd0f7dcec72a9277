// The optimizer step of `mps-audit model --train`: SGD, Adam or AdamW, one step, with PyTorch's defaults, running the
// operators torch.optim's single-tensor implementation runs (the one it takes off CUDA, MPS included), so that the
// audit traces what a training loop with that optimizer calls on the target.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ATen/core/Tensor.h>

namespace mps_audit {

enum class Optimizer { kSgd, kAdam, kAdamW };

std::optional<Optimizer> parse_optimizer(std::string_view name);  // "sgd", "adam", "adamw"
std::string_view to_string(Optimizer o);                          // "SGD", "Adam", "AdamW"
// The learning rate when --lr is not given: torch.optim's default for Adam and AdamW (1e-3); 0.01 for SGD.
double default_learning_rate(Optimizer o);

// One step of `o` over `params`, whose gradients are set (those without one are left as they are), from a fresh
// optimizer state, under no_grad.
void optimizer_step(Optimizer o, double lr, std::vector<at::Tensor>& params);

}  // namespace mps_audit
