// "Which release do I need?": over the shipped releases (data/pytorch-X.Y.Z), for each operator, the first release
// with a native MPS kernel and the first that PyTorch's own MPS test lists expect to work, per dtype where they say
// more (docs/expectations.md). `mps-audit timeline`, and the "native since" column of the HTML report.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "emu/expectations.h"
#include "registry/registry.h"
#include "results/results_file.h"

namespace mps_audit::emu {

struct OpTimeline {
  std::string op;                   // "aten::pow.Tensor_Scalar"
  std::vector<std::string> status;  // per release: its registry status for MPS, "absent" where it lacks the operator
  std::string native_since;         // the first release with a native MPS kernel; empty: none yet
  // The first release where it runs on MPS without the CPU fallback (a native kernel or a composite of other
  // operators) and PyTorch's lists expect no failure for float32; empty: none yet.
  std::string works_since;
  // Dtypes the lists say something of in any release (not their every-operator rules): the first release expected to
  // work in that dtype; empty: none yet. With the list entry that holds it back in the newest release.
  std::map<std::string, std::string> dtype_works_since;
  std::map<std::string, std::string> dtype_held_back_by;
  // Per release: whether its lists expect a failure of the operator on MPS (forward, on this macOS) in some dtype.
  std::vector<bool> partial;
  // What the newest release's lists still expect to fail: "UNIMPLEMENTED_XFAILLIST unimplemented" (list and kind) ->
  // its dtypes, "*" for every dtype.
  std::map<std::string, std::set<std::string>> still_failing;
  // The known MPS bugs of the ledger that name the operator (emu/known_bugs.h), each with the release that fixed it.
  std::vector<KnownBugNote> known_bugs;
};

struct Timeline {
  std::vector<std::string> releases;  // oldest first
  std::vector<std::string> dirs;
  std::string macos;                              // the macOS the lists' conditions were read for ("14")
  std::vector<std::string> without_expectations;  // releases that ship no mps_expectations.tsv
  std::string known_bugs;                         // the ledger read, empty when none
  std::vector<OpTimeline> ops;                    // by name
};

// Over the shipped releases (registry/release_data.h). Throws UserError for a bad --ops or when none is shipped.
// `macos`: 1303 for 13.3 (emu/emulated_mac.h).
Timeline compute_timeline(const std::string& ops_regex, MacosVersion macos);
// Only the native-since column, for the operators of a run: the shipped releases, and for each of `ops` the first of
// them with a native MPS kernel. `loaded`: a release's MPS registry the caller has already (version -> registry).
ReleaseTimeline native_since(const std::vector<std::string>& ops,
                             const std::map<std::string, const Registry*>& loaded = {});
// Note [Native since, when asked]: the same for the operators of a run on MPS (real or emulated), in `results`, when
// it has none yet: what the HTML report's "native since" column shows. A run reads the shipped releases for it only
// when it writes that report; `render` and `merge` fill it in for one that did not. Nothing for another target.
void add_native_since(Results& results, const std::map<std::string, const Registry*>& loaded = {});

std::string render_timeline(const Timeline& t, const std::string& format);

}  // namespace mps_audit::emu
