// When something first held across the shipped releases, said as what is known: a range between two shipped
// releases, never a release that was not looked at (Note [Since, as a range]).
#pragma once

#include <string>
#include <vector>

namespace mps_audit {

struct ReleaseRange {
  // The last shipped release before `by`, where it did not hold yet; empty when `by` is the oldest shipped one. When
  // it holds in none, the newest shipped release.
  std::string after;
  std::string by;  // the first shipped release where it holds; empty: none of them
  bool holds() const { return !by.empty(); }
};

// `releases` are the shipped ones, oldest first; `first` the first of them where it holds (empty: none). A `first`
// not among them (read from a file) is all that is known: by that release.
ReleaseRange since_range(const std::vector<std::string>& releases, const std::string& first);

// "by 1.13.1" (it holds in the oldest shipped release, perhaps long before), "after 1.13.1, by 2.6.0", "not yet".
std::string since_text(const ReleaseRange& range);

}  // namespace mps_audit
