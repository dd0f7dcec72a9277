// The report formats of a run. Each is a pure function of the result model (results/results_file.h) and of what
// results/analysis.h computes from it; one file per format (markdown.cc, html.cc, junit.cc, csv.cc, badge.cc,
// summary.cc). write_reports() is what `run`, `render` and `merge` call.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "results/results_file.h"

namespace mps_audit {

struct RenderOptions {
  // JUnit: unsupported and fallback are failures too (otherwise they pass, with the verdict in system-out).
  bool strict = false;
  // Markdown: the most characters a report may have (GitHub truncates comments at 65,536); sections that do not
  // fit are cut, and the report says what was left out and where to find it.
  size_t markdown_limit = 65000;
};

// Every format name, in the order reports are written: json, md, html, junit, csv, badge.
const std::vector<std::string>& report_formats();
// The file a format is written to in an output folder: results.json, results.md, results.html, results.junit.xml,
// results.csv, badge.svg.
std::string report_file_name(std::string_view format);
// Throws UserError for a name that is not a format, with a suggestion.
void check_report_formats(const std::vector<std::string>& formats);
// Whether `formats` include the report that shows which release first had a native MPS kernel of each operator (the
// HTML report's "native since" column: Note [Native since, when asked] in emu/timeline.cc).
bool shows_native_since(const std::vector<std::string>& formats);

std::string render_report(const Results& results, std::string_view format, const RenderOptions& options = {});
// Writes each format's file into `dir` (made if missing), each atomically. When `format` includes md and
// $GITHUB_STEP_SUMMARY is set, the Markdown is appended to that file too. Returns the paths written.
std::vector<std::string> write_reports(const Results& results, const std::vector<std::string>& formats,
                                       const std::string& dir, const RenderOptions& options = {});

std::string render_markdown(const Results& results, const RenderOptions& options = {});
// One self-contained page (inline CSS, JS and SVG) of one or more runs: the op x dtype matrix with one column group
// per run, filters, search, details on click, and charts. One run is a run's report; several are `compare`.
std::string render_html(const std::vector<Results>& runs);
std::string render_junit(const Results& results, const RenderOptions& options = {});
std::string render_csv(const Results& results);
// A shields-style SVG: the share of probed (not skipped) op x dtype pairs that pass natively.
std::string render_badge(const Results& results);
// The terminal's closing summary: coverage with its denominators, counts per verdict, the environment, and the 10
// worst offenders.
std::string render_summary(const Results& results);

// Escaping for untrusted text (messages come from libraries).
std::string escape_html(std::string_view text);  // also right for XML text and attribute values
// A Markdown table cell: pipes escaped, newlines flattened, HTML escaped, cut to `limit` characters.
std::string markdown_cell(std::string_view text, size_t limit = 300);

}  // namespace mps_audit
