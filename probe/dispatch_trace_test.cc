// Tests of the rule that names the operators that fell back to the CPU (Note [Operators that fell back]), on traces
// written out by hand: the shapes cpu_fallback leaves in a trace, as run and model read them.
#include "probe/dispatch_trace.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace mps_audit {
namespace {

TraceEvent event(const std::string& name, long parent) {
  TraceEvent e;
  e.name = name;
  e.parent = parent;
  return e;
}

// aten::cumsum decomposes into aten::cumsum.out, which falls back: the leaf is named, not the composite.
TEST(FallbackRule, NamesTheLeafThatRanToCpu) {
  const std::vector<TraceEvent> events = {
      event("aten::cumsum", -1),
      event("aten::cumsum.out", 0),
      event("aten::_to_cpu", 1),
      event("aten::cumsum.out", 1),
      event("aten::_copy_from_and_resize", 1),
  };
  EXPECT_EQ(fallback_events(events), std::vector<size_t>{1});
  EXPECT_EQ(fallback_ops(events), std::vector<std::string>{"aten::cumsum.out"});
}

// An aten::_to_cpu at the top level is an operator probed for itself, not a fallback.
TEST(FallbackRule, ToCpuAtTheTopLevelIsNoFallback) {
  const std::vector<TraceEvent> events = {event("aten::_to_cpu", -1), event("aten::empty.memory_format", 0)};
  EXPECT_TRUE(fallback_events(events).empty());
  EXPECT_TRUE(fallback_ops(events).empty());
}

// Each event once, in the order the fallbacks began; each operator's name once, though it fell back twice.
TEST(FallbackRule, EachOnceInTheOrderTheyFellBack) {
  const std::vector<TraceEvent> events = {
      event("aten::linear", -1), event("aten::addmm", 0),   event("aten::bmm", -1), event("aten::_to_cpu", 2),
      event("aten::_to_cpu", 1), event("aten::_to_cpu", 2), event("aten::bmm", -1), event("aten::_to_cpu", 6),
  };
  EXPECT_EQ(fallback_events(events), (std::vector<size_t>{2, 1, 6}));
  EXPECT_EQ(fallback_ops(events), (std::vector<std::string>{"aten::bmm", "aten::addmm"}));
}

// A parent index that does not come before its event is not one of the trace's events (a thread's stack left over
// from an earlier trace): it names nothing.
TEST(FallbackRule, ParentsComeBeforeTheirEvents) {
  const std::vector<TraceEvent> events = {event("aten::_to_cpu", 0), event("aten::_to_cpu", 7)};
  EXPECT_TRUE(fallback_events(events).empty());
}

}  // namespace
}  // namespace mps_audit
