// results.html: one self-contained page of one or more runs.
#include <fmt/format.h>

#include "report/renderers.h"
#include "results/analysis.h"

namespace mps_audit {

std::string render_html(const std::vector<Results>& runs) {
  std::string out = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>mps-audit</title></head><body>\n";
  for (const auto& run : runs) {
    out += fmt::format("<h1>{}</h1>\n<table>\n", escape_html(where_it_ran(run.environment)));
    for (const auto& r : run.records) {
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", escape_html(r.op),
                         escape_html(r.dtype), to_string(r.verdict), escape_html(r.message));
    }
    out += "</table>\n";
  }
  return out + "</body></html>\n";
}

}  // namespace mps_audit
