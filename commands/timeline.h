// `mps-audit timeline`: per operator, the first shipped release with a native MPS kernel, and what PyTorch's own MPS
// test lists expect of it per macOS version (emu/timeline.h).
#pragma once

#include <ostream>
#include <string>

namespace mps_audit::emu {

struct TimelineOptions {
  std::string ops;              // regular expression on "aten::name.overload"; empty: every operator
  std::string macos = "14.0";   // major.minor
  std::string format = "text";  // text, md, json
  std::string output;           // a file; empty or "-": standard output
};

int run_timeline(const TimelineOptions& options, std::ostream& out);

}  // namespace mps_audit::emu
