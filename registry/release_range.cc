// Ranges of shipped releases: see release_range.h.
#include "registry/release_range.h"

#include <algorithm>

#include <fmt/format.h>

namespace mps_audit {

// Note [Since, as a range]
// Only some releases are shipped (data/pytorch-X.Y.Z: 1.13.1, 2.6.0, 2.11.0 today), so the first shipped release
// where an operator has a native kernel is not the release that brought it: a kernel first seen in 2.6.0 may have
// come in 2.0. What the data shows is a range: it holds by that release, and did not in the shipped release before
// it. So "after 1.13.1, by 2.6.0"; and "by 1.13.1" when it already holds in the oldest shipped release, which says
// nothing of how much earlier it came. `timeline`, the coverage page and the HTML report's "native since" column say
// it so, and the JSON of `timeline` keeps both ends ({"after": "1.13.1", "by": "2.6.0"}).

ReleaseRange since_range(const std::vector<std::string>& releases, const std::string& first) {
  if (first.empty()) return {releases.empty() ? std::string() : releases.back(), ""};
  const auto it = std::find(releases.begin(), releases.end(), first);
  return {it == releases.begin() || it == releases.end() ? std::string() : *(it - 1), first};
}

std::string since_text(const ReleaseRange& range) {
  if (!range.holds()) return "not yet";
  if (range.after.empty()) return "by " + range.by;
  return fmt::format("after {}, by {}", range.after, range.by);
}

}  // namespace mps_audit
