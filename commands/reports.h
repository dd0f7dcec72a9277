// The subcommands that read results.json files: `render` (any report from a results.json), `diff` (the CI gate),
// `compare` (runs side by side).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "results/results_file.h"

namespace mps_audit {

struct RenderCommandOptions {
  std::string input;                                  // a results.json
  std::vector<std::string> formats = {"md", "html"};  // report/renderers.h report_formats()
  std::string out_dir;                                // default: the folder of the input
  bool strict = false;                                // JUnit: unsupported and fallback fail too
};
int run_render(const RenderCommandOptions& options, std::ostream& out);

struct DiffCommandOptions {
  std::string base, now;             // results.json files
  std::string format = "text";       // text, md, json
  std::string output;                // default: standard output
  std::string update_baseline;       // write `now` here when the gate passes
  bool fail_on_conditional = false;  // a new conditional failure fails the gate too
};
// Exit code 1 when a record regressed (Note [What counts as a regression]).
int run_diff(const DiffCommandOptions& options, std::ostream& out);

struct CompareCommandOptions {
  std::vector<std::string> inputs;  // two or more results.json files
  std::string format = "md";        // md, html, json
  std::string output;               // default: standard output
};
int run_compare(const CompareCommandOptions& options, std::ostream& out);

}  // namespace mps_audit
