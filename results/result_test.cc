// Tests of verdict ordering and of the skip reasons read from a skip's message.
#include "results/result.h"

#include <gtest/gtest.h>

namespace mps_audit {
namespace {

std::string_view reason_of(const std::string& message, Verdict v = Verdict::kSkip) {
  ProbeResult r;
  r.verdict = v;
  r.message = message;
  return skip_reason(r);
}

TEST(Result, WorseIsTheMoreSevere) {
  EXPECT_EQ(worse(Verdict::kPass, Verdict::kMismatch), Verdict::kMismatch);
  EXPECT_EQ(worse(Verdict::kCrash, Verdict::kFallback), Verdict::kCrash);
  for (Verdict v : kAllVerdicts) EXPECT_EQ(parse_verdict(to_string(v)), v);
}

TEST(Result, SkipReasonsNameWhoseLimitItIs) {
  EXPECT_EQ(reason_of("spec: reads uninitialised memory"), "spec");
  EXPECT_EQ(reason_of("not judged: the emulator cannot hold the sparse result of aten::_to_sparse on emulated MPS"),
            "not_judged");
  EXPECT_EQ(reason_of("cannot synthesize argument 'filename' of type str; give a sample in the spec"), "no_inputs");
  EXPECT_EQ(reason_of("no reference: the CPU raised: Could not run 'aten::_amp_update_scale_' with arguments from "
                      "the 'CPU' backend. This could be because the operator doesn't exist for this backend"),
            "no_cpu_kernel");
  EXPECT_EQ(reason_of("no reference: the CPU raised: This PyTorch installation was not built with FBGEMM operators"),
            "no_cpu_kernel");
  EXPECT_EQ(reason_of("no reference: the CPU raised: gather: You passed a dimname (string) to this op in place of a "
                      "dimension index but it does not yet support this behavior. Please pass a dimension index to "
                      "work around this."),
            "no_cpu_kernel");
  EXPECT_EQ(reason_of("no reference: the CPU raised: convolution_overrideable not implemented. You are likely "
                      "triggering this with tensor backend other than CPU/CUDA/MKLDNN, if this is intended, please use "
                      "TORCH_LIBRARY_IMPL to override this function "),
            "no_cpu_kernel");
  EXPECT_EQ(reason_of("no reference: the CPU raised: aten::norm.ScalarOpt_dim is not yet supported with named tensors. "
                      "Please drop names via `tensor = tensor.rename(None)`, call the op with an unnamed tensor, and "
                      "set names on the result of the operation."),
            "no_cpu_kernel");
  EXPECT_EQ(reason_of("no reference: the CPU raised: Could not run 'aten::_pin_memory' with arguments from the 'CUDA' "
                      "backend. This could be because the operator doesn't exist for this backend"),
            "no_cpu_kernel");
  EXPECT_EQ(reason_of("no reference: the CPU raised: the base given to float_power_ has dtype Float but the "
                      "operation's result requires dtype Double"),
            "cpu_dtype");
  EXPECT_EQ(reason_of("no reference: the CPU raised: \"elu_cpu\" not implemented for 'Long'"), "cpu_dtype");
  EXPECT_EQ(
      reason_of("no reference: the CPU takes this operator's inputs in float32 but not in int64: linalg.cholesky: "
                "A must be batches of square matrices, but they are 3 by 4 matrices"),
      "cpu_dtype");
  EXPECT_EQ(reason_of("no reference: the CPU raised: result type Float can't be cast to the desired output type Int"),
            "cpu_dtype");
  EXPECT_EQ(reason_of("no reference: the CPU raised: Dimension out of range (expected to be in range of [-2, 1], "
                      "but got 2)"),
            "cpu_rejects_inputs");
  EXPECT_EQ(reason_of("no reference: the CPU run killed the worker (it died of signal 11 (Segmentation fault))"),
            "cpu_crash");
  EXPECT_EQ(reason_of("no reference: the CPU run did not finish in 30 s"), "cpu_crash");
  EXPECT_EQ(reason_of("not probed: libtorch 1.13.0 lacks the CompositeExplicitAutograd kernel that PyTorch 2.11.0 "
                      "runs for aten::_foreach_sqrt on MPS"),
            "linked_libtorch");
  EXPECT_EQ(reason_of("named tensors do not exist in this libtorch (2.14.1)"), "linked_libtorch");
  EXPECT_EQ(reason_of("not probed: the recording's CPU chose this operator for itself (the backward of its flash "
                      "attention)"),
            "recording_device");
  EXPECT_EQ(reason_of("no reference: the CPU gives different results from run to run (12 of 12 elements differ)"),
            "cpu_unstable");
  EXPECT_EQ(reason_of("anything", Verdict::kError), "");
}

}  // namespace
}  // namespace mps_audit
