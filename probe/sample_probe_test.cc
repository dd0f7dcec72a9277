// Tests of how a record's verdict comes from its samples' (Note [A record rests on its own samples]).
#include "probe/sample_probe.h"

#include <gtest/gtest.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>

#include "probe/inputs.h"
#include "probe/spec.h"

namespace mps_audit::detail {
namespace {

TakenSample taken(size_t index, Verdict v, std::string message = "", bool other_dtype = false) {
  TakenSample t;
  t.index = index;
  t.name = "recorded:" + std::to_string(index);
  t.outcome.verdict = v;
  t.outcome.message = std::move(message);
  t.outcome.other_dtype = other_dtype;
  return t;
}

const std::string kComplex = "MPS complex types are only supported on MacOS 14.0 or newer.";

TEST(RecordVerdict, TheWorstSampleDecidesTheFirstOfEqualOnes) {
  ProbeResult r;
  decide_record({taken(0, Verdict::kPass), taken(1, Verdict::kMismatch, "differs"), taken(2, Verdict::kPass)}, r);
  EXPECT_EQ(r.verdict, Verdict::kMismatch);
  EXPECT_EQ(r.sample, "recorded:1");
  EXPECT_EQ(r.message, "differs");
  ProbeResult ties;
  decide_record({taken(0, Verdict::kError, "first"), taken(1, Verdict::kError, "second")}, ties);
  EXPECT_EQ(ties.message, "first");
  EXPECT_TRUE(ties.sample_notes.empty());
}

TEST(RecordVerdict, ASampleRefusedForAnOperandOfAnotherDtypeIsANoteWhereOthersRan) {
  ProbeResult r;
  decide_record({taken(0, Verdict::kPass), taken(1, Verdict::kUnsupported, kComplex, true), taken(2, Verdict::kPass)},
                r);
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_EQ(r.sample, "recorded:0");
  EXPECT_EQ(r.sample_notes, std::vector<std::string>{"sample 1: unsupported: " + kComplex});
  // The record's own failures still decide, beside the note.
  ProbeResult worse;
  decide_record({taken(0, Verdict::kUnsupported, kComplex, true), taken(1, Verdict::kFallback, "ran on the CPU")},
                worse);
  EXPECT_EQ(worse.verdict, Verdict::kFallback);
  EXPECT_EQ(worse.sample_notes.size(), 1u);
}

TEST(RecordVerdict, ARecordWhoseEverySampleFailedThatWayKeepsItsVerdict) {
  ProbeResult r;
  decide_record({taken(0, Verdict::kUnsupported, kComplex, true), taken(3, Verdict::kError, "other", true)}, r);
  EXPECT_EQ(r.verdict, Verdict::kError);
  EXPECT_EQ(r.message, "other");
  EXPECT_TRUE(r.sample_notes.empty());
  ProbeResult none;
  none.verdict = Verdict::kSkip;
  decide_record({}, none);
  EXPECT_EQ(none.verdict, Verdict::kSkip);
}

// Note [Known bugs' own calls] in repros.cc: a call the CPU refuses, where the bug is that MPS does not.
SampleInputs refused_call(int64_t index) {
  SampleInputs in;
  in.name = "repro:pytorch-1";
  in.args = {at::randn({3, 2}), int64_t{0}, at::tensor(std::vector<int64_t>{index, 0}).view({1, 2}), false};
  in.cpu_refuses = true;
  return in;
}

SampleOutcome probed(const ProbeTarget& target, const SampleInputs& in) {
  const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::gather", "");
  const Spec spec = parse_spec("", "s.yaml", {});
  SampleProbe p(target, op, c10::kFloat, in);
  p.reference();
  if (!p.decided) p.rest_of_inputs();
  if (!p.decided) p.run_on_target({});
  std::vector<c10::Device> wait_for;
  if (!p.decided) p.copy_back(wait_for);
  if (!p.decided) p.judge(spec, nullptr, "float32");
  return p.out;
}

TEST(CpuRefusal, ATargetThatRefusesItTooIsItsPass) {
  ProbeTarget cpu;
  cpu.name = "cpu";
  const SampleOutcome refused = probed(cpu, refused_call(7));
  EXPECT_EQ(refused.verdict, Verdict::kPass);
  EXPECT_EQ(refused.message.rfind("refused, as the CPU refuses it: ", 0), 0u) << refused.message;
  // The CPU took it: the call is not the one the bug says, and no reference for it.
  const SampleOutcome taken = probed(cpu, refused_call(1));
  EXPECT_EQ(taken.verdict, Verdict::kSkip);
  EXPECT_NE(taken.message.find("the CPU took a call the known bug says it refuses"), std::string::npos);
}

TEST(CpuRefusal, TheMetaDeviceReadsNoValuesAndACudaDeviceIsNotGivenThem) {
  ProbeTarget meta;
  meta.name = "meta";
  meta.device = c10::Device(c10::kMeta);
  const SampleOutcome on_meta = probed(meta, refused_call(7));  // shapes only: the meta kernel takes it
  EXPECT_EQ(on_meta.verdict, Verdict::kSkip);
  EXPECT_NE(on_meta.message.find("which the meta device does not read"), std::string::npos) << on_meta.message;
  ProbeTarget cuda;  // decided before any tensor reaches the device: no CUDA device is needed to tell
  cuda.name = "cuda";
  cuda.device = c10::Device(c10::kCUDA, 0);
  const SampleOutcome on_cuda = probed(cuda, refused_call(7));
  EXPECT_EQ(on_cuda.verdict, Verdict::kSkip);
  EXPECT_EQ(on_cuda.message.rfind("not run on a CUDA device", 0), 0u) << on_cuda.message;
}

}  // namespace
}  // namespace mps_audit::detail
