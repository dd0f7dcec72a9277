// The optimizer step against torch.optim's own first step (Note [Optimizer steps]).
#include "model/optimizer_step.h"

#include <gtest/gtest.h>

#include <ATen/ops/tensor.h>

namespace mps_audit {
namespace {

// torch.optim.{Adam, AdamW, SGD(lr=0.01)} with their defaults, one step of p = [1, -2, 3] with grad [0.5, 0.25, -1]
// (torch 1.13.1: p.grad set, o.step()).
TEST(OptimizerStep, MatchesTorchOptimsFirstStep) {
  const std::vector<std::pair<Optimizer, std::vector<float>>> cases = {
      {Optimizer::kAdam, {0.9990000128746033f, -2.000999927520752f, 3.000999927520752f}},
      {Optimizer::kAdamW, {0.998989999294281f, -2.0009799003601074f, 3.000969886779785f}},
      {Optimizer::kSgd, {0.9950000047683716f, -2.002500057220459f, 3.009999990463257f}},
  };
  for (const auto& [optimizer, expected] : cases) {
    at::Tensor p = at::tensor(std::vector<float>{1.0f, -2.0f, 3.0f});
    p.mutable_grad() = at::tensor(std::vector<float>{0.5f, 0.25f, -1.0f});
    std::vector<at::Tensor> params = {p};
    optimizer_step(optimizer, default_learning_rate(optimizer), params);
    for (int64_t i = 0; i < 3; ++i)
      EXPECT_NEAR(p[i].item<float>(), expected[i], 1e-6) << to_string(optimizer) << " " << i;
  }
}

TEST(OptimizerStep, NamesAndDefaults) {
  EXPECT_EQ(parse_optimizer("adamw"), Optimizer::kAdamW);
  EXPECT_FALSE(parse_optimizer("rmsprop").has_value());
  EXPECT_EQ(to_string(Optimizer::kAdam), "Adam");
  EXPECT_EQ(default_learning_rate(Optimizer::kAdam), 1e-3);
  EXPECT_EQ(default_learning_rate(Optimizer::kSgd), 0.01);
}

}  // namespace
}  // namespace mps_audit
