// Rendering a diff of two runs (results/diff.h) and a comparison of several (results/compare.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "results/compare.h"
#include "results/diff.h"

namespace mps_audit {

// format: text, md (made for a PR comment, size-limited) or json.
std::string render_diff(const RunDiff& diff, std::string_view format, size_t markdown_limit = 65000);
// format: md or json (html is render_html of the runs).
std::string render_comparison(const RunComparison& comparison, const std::vector<Results>& runs,
                              std::string_view format, size_t markdown_limit = 65000);

}  // namespace mps_audit
