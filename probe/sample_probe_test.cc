// Tests of how a record's verdict comes from its samples' (Note [A record rests on its own samples]).
#include "probe/sample_probe.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace mps_audit::detail
