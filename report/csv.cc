// results.csv: one row per op x dtype (RFC 4180), for spreadsheets and scripts.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/renderers.h"
#include "results/analysis.h"

namespace mps_audit {
namespace {

std::string field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string render_csv(const Results& results) {
  std::string out =
      "op,dtype,verdict,group,registry_status,skip_reason,fallback_ops,message,sample,samples,max_abs_error,"
      "max_rel_error,mismatches,seconds\r\n";
  for (const auto& r : results.records) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\r\n", field(r.op), field(r.dtype),
                       to_string(r.verdict), op_group(r.op), field(r.registry_status), skip_reason(r),
                       field(fmt::format("{}", fmt::join(r.fallback_ops, " "))), field(r.message), field(r.sample),
                       r.samples, r.max_abs_error, r.max_rel_error, r.mismatches, r.seconds);
  }
  return out;
}

}  // namespace mps_audit
