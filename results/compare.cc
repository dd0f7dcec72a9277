// Putting runs side by side (see compare.h).
#include "results/compare.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace mps_audit {

std::string run_label(const RunEnvironment& env) {
  if (!env.emulator.empty()) return env.emulator;
  return fmt::format("{}, libtorch {}", env.target.empty() ? "unknown target" : env.target, env.torch_version);
}

RunComparison compare_runs(const std::vector<Results>& runs) {
  RunComparison c;
  std::map<std::string, size_t> row_of;
  std::set<std::string> dtypes_seen;
  for (size_t i = 0; i < runs.size(); ++i) {
    std::string label = run_label(runs[i].environment);
    if (std::count(c.labels.begin(), c.labels.end(), label)) label += fmt::format(" (run {})", i + 1);
    c.labels.push_back(label);
    c.counts.push_back(count_verdicts(runs[i].records));
    for (const auto& r : runs[i].records) {
      if (dtypes_seen.insert(r.dtype).second) c.dtypes.push_back(r.dtype);
      row_of.emplace(r.op, 0);
    }
  }
  for (auto& [op, index] : row_of) {  // by name
    index = c.rows.size();
    c.rows.push_back({op, std::vector<std::map<std::string, Verdict>>(runs.size()), false});
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& r : runs[i].records) c.rows[row_of[r.op]].cells[i][r.dtype] = r.verdict;
  }
  for (auto& row : c.rows) {
    for (size_t i = 1; i < row.cells.size() && !row.differs; ++i) row.differs = row.cells[i] != row.cells[0];
  }
  for (size_t i = 0; i + 1 < runs.size(); ++i) c.steps.push_back(diff_runs(runs[i], runs[i + 1]));
  return c;
}

namespace {

DtypesByOp changes_from_to(const std::vector<RecordChange>& changes, Verdict from, Verdict to) {
  DtypesByOp out;
  for (const auto& ch : changes) {
    if (!ch.in_base || !ch.in_new || ch.before != from || ch.after != to) continue;
    if (out.empty() || out.back().first != ch.op) out.push_back({ch.op, {}});
    out.back().second.push_back(ch.dtype);
  }
  return out;
}

}  // namespace

DtypesByOp fallbacks_fixed(const RunDiff& step) {
  return changes_from_to(step.improvements, Verdict::kFallback, Verdict::kPass);
}

DtypesByOp fallbacks_introduced(const RunDiff& step) {
  return changes_from_to(step.regressions, Verdict::kPass, Verdict::kFallback);
}

}  // namespace mps_audit
