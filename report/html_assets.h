// The fixed parts of results.html: the colours of each verdict, the page's style sheet, and the script that lays out
// the op x dtype matrix. Only report/html.cc, which writes the page, report/html_assets.cc, and
// report/coverage_page.cc (whose page takes the same look) include this header.
#pragma once

#include <array>
#include <string>

#include "results/result.h"

namespace mps_audit::detail {

// Colours of each verdict: a cell's background and text, also the charts' fills.
struct VerdictStyle {
  Verdict verdict;
  const char* background;
  const char* text;
  const char* meaning;
};
inline constexpr std::array<VerdictStyle, kAllVerdicts.size()> kVerdictStyles = {{
    {Verdict::kPass, "#a7e3b5", "#0f4a22", "ran on the target and matches the CPU"},
    {Verdict::kFallback, "#fbd96a", "#6b3a05", "matches, but (part of) it ran on the CPU"},
    {Verdict::kKnownFailure, "#d9c2f0", "#3f1466",
     "expected to fail on real MPS: PyTorch's own MPS test lists say so; the emulator cannot reproduce it"},
    {Verdict::kMismatch, "#f49ac9", "#6d0f3f", "differs from the CPU beyond tolerance"},
    {Verdict::kUnsupported, "#fdb07a", "#6b2508", "the target refused the op or dtype"},
    {Verdict::kError, "#f47e7e", "#5c0b0b", "another exception on the target while the CPU succeeded"},
    {Verdict::kCrash, "#a31515", "#ffffff", "the probe killed its worker process"},
    {Verdict::kTimeout, "#b9a5f7", "#2e0b5e", "the probe did not finish in time"},
    {Verdict::kSkip, "#e9eaed", "#5b6270", "not probed: no inputs, no CPU reference, or the spec says so"},
    {Verdict::kXfail, "#b3d4fb", "#15306b", "failed, as the spec or PyTorch's own MPS test lists say it does"},
    {Verdict::kXpass, "#8de8d8", "#0b4740", "passed, though the spec or PyTorch's own MPS test lists say it fails"},
}};

// The page's CSS: the fixed rules, then per verdict its colours and the rule that hides its cells.
std::string style_sheet();

// Lays out the matrix from the embedded document, and does filters, search, sorting and details. Untrusted text
// goes in through esc() (in the one innerHTML string of rows) or textContent.
extern const char* const kScript;

}  // namespace mps_audit::detail
