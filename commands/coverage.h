// `mps-audit coverage`: the coverage page of every operator across the shipped releases (report/coverage_page.h),
// which docs/coverage.md and docs/coverage.html are (`make coverage` writes both; a test checks they are current).
#pragma once

#include <ostream>
#include <string>

namespace mps_audit {

struct CoverageOptions {
  std::string format = "md";   // md, html
  std::string macos = "14.0";  // the macOS PyTorch's lists' conditions are read for, major.minor
  std::string output;          // a file (written atomically); empty or "-": standard output
};

int run_coverage(const CoverageOptions& options, std::ostream& out);

}  // namespace mps_audit
