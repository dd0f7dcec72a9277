// Format names, their files, escaping, and writing a run's reports.
#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/diagnostics.h"
#include "common/flags.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "common/text.h"
#include "report/renderers.h"

namespace mps_audit {

const std::vector<std::string>& report_formats() {
  static const std::vector<std::string> formats = {"json", "md", "html", "junit", "csv", "badge"};
  return formats;
}

std::string report_file_name(std::string_view format) {
  if (format == "junit") return "results.junit.xml";
  if (format == "badge") return "badge.svg";
  return "results." + std::string(format);
}

void check_report_formats(const std::vector<std::string>& formats) {
  check_choices("--format", formats, report_formats());
}

bool shows_native_since(const std::vector<std::string>& formats) {
  return std::find(formats.begin(), formats.end(), "html") != formats.end();
}

std::string render_report(const Results& results, std::string_view format, const RenderOptions& options) {
  if (format == "json") return render_results_json(results);
  if (format == "md") return render_markdown(results, options);
  if (format == "html") return render_html({results});
  if (format == "junit") return render_junit(results, options);
  if (format == "csv") return render_csv(results);
  if (format == "badge") return render_badge(results);
  MPS_AUDIT_ASSERT(false, "unknown report format " + std::string(format));
}

std::vector<std::string> write_reports(const Results& results, const std::vector<std::string>& formats,
                                       const std::string& dir, const RenderOptions& options) {
  check_report_formats(formats);
  make_directories(dir);
  std::vector<std::string> written;
  for (const auto& f : formats) {
    const std::string text = render_report(results, f, options);
    const std::string path = join_path(dir, report_file_name(f));
    write_file_atomically(path, text);
    written.push_back(path);
    if (f != "md") continue;
    // GitHub Actions shows what a step appends to this file on the run's summary page.
    if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY"); summary && *summary) {
      std::ofstream out(summary, std::ios::app);
      out << text << "\n";
      if (!out) throw UserError("cannot append to $GITHUB_STEP_SUMMARY", {summary});
    }
  }
  return written;
}

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += "\xEF\xBF\xBD";  // U+FFFD
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string markdown_cell(std::string_view text, size_t limit) {
  std::string flat;
  for (char c : text) flat += (c == '\n' || c == '\r') ? ' ' : c;
  if (flat.size() > limit) {
    size_t cut = limit - 3;
    while (cut > 0 && (static_cast<unsigned char>(flat[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
    flat = flat.substr(0, cut) + "...";
  }
  // Markdown shows HTML tags as HTML: escape what starts one; quotes may stay as they are.
  std::string out;
  for (char c : flat) {
    if (c == '<') {
      out += "&lt;";
      continue;
    }
    if (c == '>') {
      out += "&gt;";
      continue;
    }
    if (c == '&') {
      out += "&amp;";
      continue;
    }
    if (c == '|' || c == '`' || c == '*' || c == '_' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace mps_audit
