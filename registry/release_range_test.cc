// Tests of the "since" ranges (Note [Since, as a range]).
#include "registry/release_range.h"

#include <gtest/gtest.h>

namespace mps_audit {
namespace {

const std::vector<std::string> kReleases = {"1.13.1", "2.6.0", "2.11.0", "2.14.1"};

TEST(ReleaseRange, ThePreviousShippedReleaseBoundsItFromBelow) {
  const ReleaseRange r = since_range(kReleases, "2.6.0");
  EXPECT_EQ(r.after, "1.13.1");
  EXPECT_EQ(r.by, "2.6.0");
  EXPECT_EQ(since_text(r), "after 1.13.1, by 2.6.0");
  EXPECT_EQ(since_text(since_range(kReleases, "2.14.1")), "after 2.11.0, by 2.14.1");
}

TEST(ReleaseRange, TheOldestShippedReleaseHasNoLowerBound) {
  const ReleaseRange r = since_range(kReleases, "1.13.1");
  EXPECT_TRUE(r.after.empty());
  EXPECT_EQ(since_text(r), "by 1.13.1");
  // Whatever is oldest: with 1.13.1 gone, 2.6.0 is.
  EXPECT_EQ(since_text(since_range({"2.6.0", "2.11.0"}, "2.6.0")), "by 2.6.0");
}

TEST(ReleaseRange, NoneYetIsAfterTheNewest) {
  const ReleaseRange r = since_range(kReleases, "");
  EXPECT_FALSE(r.holds());
  EXPECT_EQ(r.after, "2.14.1");
  EXPECT_EQ(since_text(r), "not yet");
}

TEST(ReleaseRange, AReleaseNotShippedIsAllThatIsKnown) {
  const ReleaseRange r = since_range(kReleases, "2.0.0");
  EXPECT_TRUE(r.after.empty());
  EXPECT_EQ(since_text(r), "by 2.0.0");
}

}  // namespace
}  // namespace mps_audit
