// The terminal's closing summary of a run.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/renderers.h"
#include "results/analysis.h"

namespace mps_audit {
namespace {

// "float32,float16" or, for more than three, "float32,float16,+8": the table stays one line a row.
std::string dtype_list(const std::vector<std::string>& dtypes) {
  if (dtypes.size() <= 3) return fmt::format("{}", fmt::join(dtypes, ","));
  return fmt::format("{},{},+{}", dtypes[0], dtypes[1], dtypes.size() - 2);
}

}  // namespace

std::string render_summary(const Results& results) {
  const RunEnvironment& env = results.environment;
  const Analysis a = analyze(results);
  const RunProgress& p = results.run;
  std::string out =
      fmt::format("{} op x dtype probes on {}, fallback {}:\n", a.counts.total, where_it_ran(env), env.fallback_mode);
  if (!p.complete()) {
    out += fmt::format("  INCOMPLETE{}: {} of {} planned probes finished, {} not run\n",
                       p.interrupted.empty() ? "" : " (stopped by " + p.interrupted + ")", p.finished, p.planned,
                       p.not_run());
  }
  for (Verdict v : kAllVerdicts) {
    const size_t k = a.counts.of(v);
    if (k == 0) continue;
    out += fmt::format("  {:<13} {:>6}  {:>5.1f}%\n", to_string(v), k,
                       100.0 * static_cast<double>(k) / static_cast<double>(a.counts.total));
  }
  if (a.conditional_records) {  // counted apart from the verdicts (Note [Conditional failures in reports])
    std::vector<std::string> ops;
    for (const auto& f : a.conditional) {
      if (std::find(ops.begin(), ops.end(), f.op) == ops.end()) ops.push_back(f.op);
    }
    const size_t shown = std::min<size_t>(ops.size(), 4);
    out += fmt::format("  conditional   {:>6}  pass or fall back, and fail under a condition: {}{}\n",
                       a.conditional_records,
                       fmt::join(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
                       ops.size() > shown ? fmt::format(" and {} more operators", ops.size() - shown) : "");
  }
  out += "coverage:\n";
  for (const auto& s : coverage_sentences(results, a)) out += "  " + s + "\n";
  out += fmt::format("environment: libtorch {} on {}; spec {}{}\n", env.torch_version, env.os, env.spec,
                     p.shard.empty() ? "" : "; shard " + p.shard);
  if (const std::string e = expectations_sentence(results); !e.empty()) out += "expectations: " + e + "\n";
  if (!a.worst.empty()) {
    out += "worst offenders (the Core ATen operators first):\n";
    for (const auto& o : a.worst) {
      std::string message = o.message.substr(0, o.message.find('\n'));
      if (message.size() > 100) message = message.substr(0, 97) + "...";
      out += fmt::format("  {:<8} {:<13} {:<40} {:<24} {}\n", to_string(o.tier), to_string(o.worst), o.op,
                         dtype_list(o.dtypes), message);
    }
  }
  return out;
}

}  // namespace mps_audit
