// Tests of summarize_trace: which events are a model's calls, how they are grouped per operator and phase, what a
// fallback inside a call copied, which call raised or first differed, and the order the reports list them in.
#include "model/trace_summary.h"

#include <gtest/gtest.h>

namespace mps_audit {
namespace {

TraceEvent event(const std::string& name, long parent, std::vector<std::string> inputs = {}, double seconds = 0,
                 std::vector<int64_t> input_bytes = {}) {
  TraceEvent e;
  e.name = name;
  e.parent = parent;
  e.depth = parent < 0 ? 0 : 1;
  e.inputs = std::move(inputs);
  e.input_bytes = std::move(input_bytes);
  e.seconds = seconds;
  return e;
}

// A forward pass: linear twice (with addmm inside, not a call of its own), and cumsum, whose cumsum.out fell back.
std::vector<TraceEvent> forward_trace() {
  return {event("aten::linear", -1, {"float32[4, 3]", "float32[2, 3]"}, 0.5),
          event("aten::addmm", 0, {"float32[2]"}, 0.4),
          event("aten::cumsum", -1, {"float32[4]"}, 0.25),
          event("aten::cumsum.out", 2, {"float32[4]"}, 0.2),
          event("aten::_to_cpu", 3, {"float32[4]"}, 0.01, {16}),
          event("aten::_copy_from_and_resize", 3, {"float32[4]", "float32[4]"}, 0.01, {24, 16}),
          event("aten::linear", -1, {"float32[8, 3]", "float32[2, 3]"}, 0.125)};
}

TEST(SummarizeTrace, GroupsTheTopLevelCallsPerOperatorAndPhaseFallbacksFirst) {
  const std::vector<ModelOpCall> ops = summarize_trace(forward_trace(), {{"forward", 7}}, -1, "", false, {});
  ASSERT_EQ(ops.size(), 2u);
  const ModelOpCall& cumsum = ops[0];
  EXPECT_EQ(cumsum.op, "aten::cumsum");
  EXPECT_EQ(cumsum.phase, "forward");
  EXPECT_EQ(cumsum.dtype, "float32");
  EXPECT_EQ(cumsum.status, CallStatus::kFallback);
  EXPECT_EQ(cumsum.calls, 1);
  EXPECT_EQ(cumsum.fallback_ops, std::vector<std::string>({"aten::cumsum.out"}));
  EXPECT_EQ(cumsum.bytes_to_cpu, 16);    // aten::_to_cpu's inputs
  EXPECT_EQ(cumsum.bytes_from_cpu, 24);  // the copy back's first input: the CPU result
  const ModelOpCall& linear = ops[1];
  EXPECT_EQ(linear.op, "aten::linear");
  EXPECT_EQ(linear.status, CallStatus::kNative);
  EXPECT_EQ(linear.calls, 2);
  EXPECT_DOUBLE_EQ(linear.seconds, 0.625);
  EXPECT_EQ(linear.input_signatures,
            std::vector<std::string>({"float32[4, 3], float32[2, 3]", "float32[8, 3], float32[2, 3]"}));
  EXPECT_TRUE(linear.fallback_ops.empty());
  EXPECT_EQ(linear.bytes_to_cpu, 0);
}

TEST(SummarizeTrace, WithoutPhasesEveryCallIsForward) {
  const std::vector<ModelOpCall> ops = summarize_trace(forward_trace(), {}, -1, "", false, {});
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].phase, "forward");
  EXPECT_EQ(ops[1].phase, "forward");
}

// A training step: mul, the loss's sum, autograd's node event with mul inside it (a call, the wrapper is not), the
// optimizer's add_, and the audit's own clone after the last phase (no call). The backward mul raised; sum differed.
TEST(SummarizeTrace, MarksTheCallThatRaisedAndTheFirstMismatchAndListsThemAfterFallbacks) {
  const std::vector<TraceEvent> events = {event("aten::mul", -1, {"float32[3]"}, 0.1),
                                          event("aten::sum", -1, {"float32[3]"}, 0.01),
                                          event("autograd::engine::evaluate_function: MulBackward0", -1, {}, 0.3),
                                          event("aten::mul", 2, {}, 0.05),
                                          event("aten::add_", -1, {"float32[3]"}, 0.2),
                                          event("aten::clone", -1, {"float32[3]"}, 0.9)};
  CallMismatch mismatch;
  mismatch.event = 1;
  mismatch.comparison.equal = false;
  mismatch.comparison.message = "values differ";
  mismatch.comparison.max_abs_error = 0.5;
  mismatch.comparison.max_rel_error = 0.25;
  const std::vector<ModelOpCall> ops =
      summarize_trace(events, {{"forward", 1}, {"loss", 2}, {"backward", 4}, {"optimizer", 5}},
                      /*failed_event=*/3, "boom", /*failure_unsupported=*/true, mismatch);
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].op, "aten::mul");
  EXPECT_EQ(ops[0].phase, "backward");
  EXPECT_EQ(ops[0].dtype, "none");
  EXPECT_EQ(ops[0].status, CallStatus::kFailed);
  EXPECT_EQ(ops[0].message, "boom");
  EXPECT_TRUE(ops[0].unsupported);
  EXPECT_EQ(ops[1].op, "aten::sum");
  EXPECT_EQ(ops[1].phase, "loss");
  EXPECT_EQ(ops[1].status, CallStatus::kNative);
  EXPECT_TRUE(ops[1].mismatch);
  EXPECT_EQ(ops[1].mismatch_message, "values differ");
  EXPECT_EQ(ops[1].max_abs_error, 0.5);
  EXPECT_EQ(ops[1].max_rel_error, 0.25);
  // The rest by time, longest first.
  EXPECT_EQ(ops[2].op, "aten::add_");
  EXPECT_EQ(ops[2].phase, "optimizer");
  EXPECT_EQ(ops[3].op, "aten::mul");
  EXPECT_EQ(ops[3].phase, "forward");
  EXPECT_FALSE(ops[3].mismatch);
  for (const auto& c : ops) EXPECT_NE(c.op, "aten::clone");
}

// An operator called many times keeps at most 8 distinct input signatures.
TEST(SummarizeTrace, KeepsAtMostEightDistinctInputSignatures) {
  std::vector<TraceEvent> events;
  for (int i = 0; i < 12; ++i) events.push_back(event("aten::relu", -1, {"float32[" + std::to_string(i % 10) + "]"}));
  const std::vector<ModelOpCall> ops = summarize_trace(events, {{"forward", events.size()}}, -1, "", false, {});
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].calls, 12);
  EXPECT_EQ(ops[0].input_signatures.size(), 8u);
}

}  // namespace
}  // namespace mps_audit
