// `mps-audit merge`: see merge.h.
#include "commands/merge.h"

#include <climits>
#include <cstdlib>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/diagnostics.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "emu/timeline.h"
#include "report/renderers.h"
#include "results/merge.h"

namespace mps_audit {
namespace {

std::string real_path(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  std::string out = resolved ? resolved : path;
  std::free(resolved);
  return out;
}

}  // namespace

int run_merge(const MergeOptions& o, std::ostream& out) {
  check_report_formats(o.formats);
  if (o.output.empty()) throw UserError("merge: -o OUT.json is required");
  std::map<std::string, std::string> real;  // resolved path -> as given
  for (const auto& path : o.inputs) {
    const auto [it, fresh] = real.emplace(real_path(path), path);
    if (!fresh) throw UserError(fmt::format("given twice (also as {})", it->second), {path});
  }
  if (real.count(real_path(o.output))) {
    throw UserError("-o would overwrite one of the inputs", {o.output});
  }
  std::vector<MergeInput> parts;
  for (const auto& path : o.inputs) parts.push_back({path, load_results(path)});
  Results merged = merge_results(parts);
  // Shards that wrote no HTML report read no timeline for it (Note [Native since, when asked] in emu/timeline.cc).
  if (shows_native_since(o.formats)) emu::add_native_since(merged);

  // results.json's text goes to OUT.json; the other formats are written beside it under their usual names.
  std::vector<std::string> others;
  for (const auto& f : o.formats) {
    if (f != "json") others.push_back(f);
  }
  const std::string dir = parent_path(o.output);
  make_directories(dir);
  write_file_atomically(o.output, render_results_json(merged));
  std::vector<std::string> written = {o.output};
  for (const auto& path : write_reports(merged, others, dir)) written.push_back(path);
  out << render_summary(merged);
  out << fmt::format("merged {} files into {}\n", parts.size(), fmt::join(written, ", "));
  return kExitOk;
}

}  // namespace mps_audit
