// `mps-audit diff` and `compare` output: text, Markdown and JSON.
#include "report/diff_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "report/markdown_writer.h"
#include "report/renderers.h"

namespace mps_audit {
namespace {

struct Category {
  const char* name;
  const std::vector<RecordChange>* changes;
};

std::vector<Category> categories(const RunDiff& d) {
  return {{"regressions", &d.regressions},   {"improvements", &d.improvements},
          {"changed", &d.changed},           {"new", &d.added},
          {"newly probed", &d.newly_probed}, {"no longer probed", &d.no_longer_probed},
          {"removed skips", &d.removed},     {"new conditional failures", &d.conditional}};
}

std::string before(const RecordChange& c) {
  return c.in_base ? std::string(to_string(c.before)) : "(absent)";
}
std::string after(const RecordChange& c) {
  return c.in_new ? std::string(to_string(c.after)) : "(absent)";
}

std::string headline(const RunDiff& d) {
  return fmt::format(
      "{} regressions, {} improvements, {} changed, {} new, {} newly probed, {} no longer probed, "
      "{} unchanged{}",
      d.regressions.size(), d.improvements.size(), d.changed.size(), d.added.size(), d.newly_probed.size(),
      d.no_longer_probed.size(), d.unchanged,
      d.conditional.empty() ? "" : fmt::format(", {} new conditional failures", d.conditional.size()));
}

// "3 regressions", "3 regressions and 1 new conditional failures" (Note [What counts as a regression]).
std::string gate_failures(const RunDiff& d) {
  return d.gate_conditional && !d.conditional.empty()
             ? fmt::format("{} regressions and {} new conditional failures", d.regressions.size(), d.conditional.size())
             : fmt::format("{} regressions", d.regressions.size());
}

std::string incompleteness(const char* which, const RunProgress& p) {
  if (p.complete()) return "";
  return fmt::format("the {} run is incomplete ({} of {} probes finished{}{})", which, p.finished, p.planned,
                     p.interrupted.empty() ? "" : ", stopped by " + p.interrupted,
                     p.shard.empty() ? "" : ", shard " + p.shard);
}

std::string render_text(const RunDiff& d) {
  std::string out = fmt::format("mps-audit diff: {}\n  base: {}\n  new:  {}\n", headline(d), where_it_ran(d.base_env),
                                where_it_ran(d.new_env));
  if (!d.environment_differences.empty()) {
    out += fmt::format("the runs' environments differ ({}): verdicts may have changed with them\n",
                       fmt::join(d.environment_differences, "; "));
  }
  for (const auto& note : {incompleteness("base", d.base_run), incompleteness("new", d.new_run)}) {
    if (!note.empty()) out += note + "\n";
  }
  for (const auto& c : categories(d)) {
    if (c.changes->empty()) continue;
    out += fmt::format("{}:\n", c.name);
    for (const auto& ch : *c.changes) {
      std::string message = ch.message.substr(0, ch.message.find('\n'));
      if (message.size() > 100) message = message.substr(0, 97) + "...";
      out += fmt::format("  {} {}: {} -> {}{}\n", ch.op, ch.dtype, before(ch), after(ch),
                         message.empty() ? "" : "  (" + message + ")");
    }
  }
  out += d.has_regressions() ? fmt::format("gate: FAILED, {}\n", gate_failures(d)) : "gate: passed, no regressions\n";
  return out;
}

std::string render_md(const RunDiff& d, size_t limit) {
  MarkdownWriter w(limit, "the output of `mps-audit diff BASE NEW --format json`");
  w.add(d.has_regressions() ? fmt::format("## mps-audit diff: ❌ {}\n\n", gate_failures(d))
                            : "## mps-audit diff: ✅ no regressions\n\n");
  w.add(fmt::format("Base: {}; new: {}.\n\n", where_it_ran(d.base_env), where_it_ran(d.new_env)));
  if (!d.environment_differences.empty()) {
    w.add(fmt::format("> [!IMPORTANT]\n> The runs' environments differ ({}): verdicts may have changed with them.\n\n",
                      markdown_cell(fmt::format("{}", fmt::join(d.environment_differences, "; ")), 1000)));
  }
  for (const auto& note : {incompleteness("base", d.base_run), incompleteness("new", d.new_run)}) {
    if (!note.empty()) w.add(fmt::format("> [!WARNING]\n> {}.\n\n", note));
  }
  w.add("| change | op x dtype |\n| --- | ---: |\n");
  for (const auto& c : categories(d)) w.add(fmt::format("| {} | {} |\n", c.name, c.changes->size()));
  w.add(fmt::format("| unchanged | {} |\n", d.unchanged));
  for (const auto& c : categories(d)) {
    if (c.changes->empty()) continue;
    std::vector<std::string> rows;
    for (const auto& ch : *c.changes) {
      rows.push_back(fmt::format("| `{}` | {} | {} | {} | {} |\n", ch.op, ch.dtype, before(ch), after(ch),
                                 markdown_cell(ch.message, 200)));
    }
    w.details(
        fmt::format("<b>{}</b> ({})", c.name, c.changes->size()),
        [&] {
          w.table("| operator | dtype | before | after | message |\n| --- | --- | --- | --- | --- |\n", rows, c.name);
        },
        c.changes == &d.regressions || (d.gate_conditional && c.changes == &d.conditional));
  }
  return w.finish();
}

nlohmann::json change_json(const RecordChange& c) {
  nlohmann::json j = {{"op", c.op}, {"dtype", c.dtype}, {"message", c.message}};
  j["before"] = c.in_base ? nlohmann::json(std::string(to_string(c.before))) : nlohmann::json();
  j["after"] = c.in_new ? nlohmann::json(std::string(to_string(c.after))) : nlohmann::json();
  return j;
}

std::string render_diff_json(const RunDiff& d) {
  nlohmann::json doc = {{"base", to_json(d.base_env)},
                        {"new", to_json(d.new_env)},
                        {"environment_differences", d.environment_differences},
                        {"unchanged", d.unchanged},
                        {"gate", d.has_regressions() ? "failed" : "passed"},
                        {"gate_on_conditional", d.gate_conditional}};
  const char* keys[] = {"regressions",  "improvements",     "changed", "new",
                        "newly_probed", "no_longer_probed", "removed", "conditional"};
  size_t k = 0;
  for (const auto& c : categories(d)) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& ch : *c.changes) list.push_back(change_json(ch));
    doc[keys[k++]] = std::move(list);
  }
  return doc.dump(1) + "\n";
}

std::string render_comparison_md(const RunComparison& c, const std::vector<Results>& runs, size_t limit) {
  MarkdownWriter w(limit, "the output of `mps-audit compare ... --format html` (or json)");
  w.add(fmt::format("# mps-audit compare: {} runs\n\n| run | environment | probes |", c.labels.size()));
  for (Verdict v : kAllVerdicts) w.add(fmt::format(" {} |", to_string(v)));
  w.add("\n| --- | --- | ---: |");
  for (size_t k = 0; k < kAllVerdicts.size(); ++k) w.add(" ---: |");
  w.add("\n");
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunEnvironment& e = runs[i].environment;
    w.add(fmt::format(
        "| {} | {} | {} |", i + 1,
        markdown_cell(
            fmt::format("{}; libtorch {}; {}; fallback {}", c.labels[i], e.torch_version, e.os, e.fallback_mode), 300),
        c.counts[i].total));
    for (Verdict v : kAllVerdicts) w.add(fmt::format(" {} |", c.counts[i].of(v)));
    w.add("\n");
  }
  for (size_t s = 0; s < c.steps.size(); ++s) {
    const RunDiff& step = c.steps[s];
    const DtypesByOp fixed = fallbacks_fixed(step), introduced = fallbacks_introduced(step);
    const auto pairs = [](const DtypesByOp& by_op) {
      size_t n = 0;
      for (const auto& [op, dtypes] : by_op) n += dtypes.size();
      return n;
    };
    w.add(
        fmt::format("\n## From run {} to run {}\n\n{}.\n\nFallbacks introduced (pass -> fallback): {} op x dtype of {} "
                    "operators; fixed (fallback -> pass): {} of {}.\n",
                    s + 1, s + 2, headline(step), pairs(introduced), introduced.size(), pairs(fixed), fixed.size()));
    for (const auto& [what, list] :
         {std::pair{"Fallbacks introduced", &introduced}, std::pair{"Fallbacks fixed", &fixed}}) {
      if (list->empty()) continue;
      std::vector<std::string> rows;
      for (const auto& [op, dtypes] : *list)
        rows.push_back(fmt::format("| `{}` | {} |\n", op, fmt::join(dtypes, ", ")));
      w.details(fmt::format("{} ({} operators)", what, list->size()),
                [&] { w.table("| operator | dtypes |\n| --- | --- |\n", rows, what); });
    }
  }
  size_t same = 0;
  std::vector<std::string> rows;
  for (const auto& row : c.rows) {
    if (!row.differs) {
      ++same;
      continue;
    }
    std::string line = fmt::format("| `{}` |", row.op);
    for (const auto& per_run : row.cells) line += verdict_cells(c.dtypes, per_run);
    rows.push_back(line + "\n");
  }
  w.add(fmt::format("\n## Operators whose verdicts differ: {} (and {} the same in every run)\n\n", rows.size(), same));
  std::string legend = "Legend:";
  for (Verdict v : kAllVerdicts) legend += fmt::format(" {} {},", verdict_symbol(v), to_string(v));
  legend.back() = '.';
  w.add(legend + " Column groups are runs 1 to " + std::to_string(runs.size()) +
        ", each in these dtypes: " + fmt::format("{}", fmt::join(c.dtypes, ", ")) + ".\n\n");
  std::string head = "| operator |", rule = "| --- |";
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& dt : c.dtypes) {
      head += fmt::format(" {}:{} |", i + 1, dt);
      rule += " :-: |";
    }
  }
  w.table(head + "\n" + rule + "\n", rows, "differing operators");
  return w.finish();
}

nlohmann::json by_op_json(const DtypesByOp& by_op) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [op, dtypes] : by_op) j[op] = dtypes;
  return j;
}

std::string render_comparison_json(const RunComparison& c, const std::vector<Results>& runs) {
  nlohmann::json doc;
  doc["runs"] = nlohmann::json::array();
  for (size_t i = 0; i < runs.size(); ++i) {
    nlohmann::json counts;
    for (Verdict v : kAllVerdicts) counts[std::string(to_string(v))] = c.counts[i].of(v);
    doc["runs"].push_back({{"label", c.labels[i]}, {"environment", to_json(runs[i].environment)}, {"summary", counts}});
  }
  doc["dtypes"] = c.dtypes;
  doc["operators"] = nlohmann::json::array();
  for (const auto& row : c.rows) {
    nlohmann::json per_run = nlohmann::json::array();
    for (const auto& cellmap : row.cells) {
      nlohmann::json m = nlohmann::json::object();
      for (const auto& [dt, v] : cellmap) m[dt] = to_string(v);
      per_run.push_back(m);
    }
    doc["operators"].push_back({{"op", row.op}, {"differs", row.differs}, {"verdicts", per_run}});
  }
  doc["steps"] = nlohmann::json::array();
  for (size_t s = 0; s < c.steps.size(); ++s) {
    doc["steps"].push_back({{"from", s + 1},
                            {"to", s + 2},
                            {"fallbacks_fixed", by_op_json(fallbacks_fixed(c.steps[s]))},
                            {"fallbacks_introduced", by_op_json(fallbacks_introduced(c.steps[s]))},
                            {"regressions", c.steps[s].regressions.size()},
                            {"improvements", c.steps[s].improvements.size()}});
  }
  return doc.dump(1) + "\n";
}

}  // namespace

std::string render_diff(const RunDiff& diff, std::string_view format, size_t markdown_limit) {
  if (format == "md") return render_md(diff, markdown_limit);
  if (format == "json") return render_diff_json(diff);
  return render_text(diff);
}

std::string render_comparison(const RunComparison& comparison, const std::vector<Results>& runs,
                              std::string_view format, size_t markdown_limit) {
  if (format == "json") return render_comparison_json(comparison, runs);
  if (format == "html") return render_html(runs);
  return render_comparison_md(comparison, runs, markdown_limit);
}

}  // namespace mps_audit
