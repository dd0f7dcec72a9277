// The coverage page (docs/coverage.md, docs/coverage.html; `mps-audit coverage`): every operator of the shipped
// releases, how each runs on MPS release by release, since when (as ranges), and what the newest release's own MPS
// test lists still expect to fail, the Core ATen operators first. Only the registries and the lists go in: nothing of
// the linked libtorch, the machine or the date, so the checked-in page is what `make coverage` gives anywhere.
#pragma once

#include <string>

#include "emu/timeline.h"
#include "registry/op_tier.h"

namespace mps_audit {

// `timeline` is of every operator (emu::compute_timeline), `core` the Core ATen opset (shipped_core_ops()).
std::string render_coverage_md(const emu::Timeline& timeline, const CoreOps& core);
// One self-contained page with the HTML report's style sheet; internal and test operators in collapsed sections.
std::string render_coverage_html(const emu::Timeline& timeline, const CoreOps& core);

}  // namespace mps_audit
