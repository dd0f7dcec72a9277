// results.html: one self-contained page (inline CSS, JS and SVG, nothing fetched) of one or more runs: environment,
// charts, and the op x dtype matrix with filters, search, sorting and details on click.
//
// Everything the page shows is decided here: verdicts, groups, worst verdicts, chart numbers. The script (with the
// style sheet, in report/html_assets.cc) only lays out the matrix from an embedded JSON document and toggles what is
// visible. Every string from results is untrusted (messages come from libraries): the HTML written here goes through
// escape_html(), the JSON through script_json(), and the script inserts text with textContent or its own escape
// function.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/text.h"
#include "registry/op_tier.h"
#include "registry/release_range.h"
#include "report/html_assets.h"
#include "report/renderers.h"
#include "results/analysis.h"

namespace mps_audit {
namespace {

std::string with_commas(size_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string percent(size_t k, size_t n) {
  return n == 0 ? "0%" : fmt::format("{:.1f}%", 100.0 * static_cast<double>(k) / static_cast<double>(n));
}

// JSON for a <script> element: nothing in it can end the element or start markup (`<`, `>`, `&` become \u
// escapes, which only ever occur inside JSON strings), and U+2028/U+2029 are escaped too, so the text is also
// valid JavaScript. Bytes that are not UTF-8 become U+FFFD rather than failing the report.
std::string script_json(const nlohmann::json& doc) {
  const std::string text = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 32);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
               (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

// Interns strings for the embedded JSON: messages repeat across dtypes and samples across operators, so records
// refer to them by number. 0 is the empty string.
class StringTable {
 public:
  StringTable() { id(""); }
  size_t id(const std::string& s) {
    auto [it, added] = ids_.emplace(s, strings_.size());
    if (added) strings_.push_back(s);
    return it->second;
  }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::unordered_map<std::string, size_t> ids_;
  std::vector<std::string> strings_;
};

// What most of a run's verdicts rest on: the emulated release's registry, or the kernels of a real target.
std::string run_basis(const RunEnvironment& env) {
  return env.emulator.empty() ? kBasisKernel : kBasisRegistry;
}

// A run's name in column groups: "1: mps-emu — emulated MPS (...)"; a single run (named in full above) its target.
std::vector<std::string> run_names(const std::vector<Results>& runs) {
  std::vector<std::string> names;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string where = where_it_ran(runs[i].environment);
    names.push_back(runs.size() == 1 ? runs[i].environment.target : fmt::format("{}: {}", i + 1, where));
  }
  return names;
}

// The registry statuses of all runs, in the order the analysis lists them (native first, then registry order), then
// any it does not list.
std::vector<std::string> statuses_of(const std::vector<Results>& runs, const std::vector<Analysis>& analyses) {
  std::vector<std::string> out;
  for (const auto& a : analyses) {
    for (const auto& c : a.coverage) {
      if (std::find(out.begin(), out.end(), c.status) == out.end()) out.push_back(c.status);
    }
  }
  for (const auto& run : runs) {
    for (const auto& r : run.records) {
      if (std::find(out.begin(), out.end(), r.registry_status) == out.end()) out.push_back(r.registry_status);
    }
  }
  return out;
}

// The document the script lays the matrix out from. Records are arrays, not objects, and trailing fields that
// hold their default are left out: the default audit has ~28,000 of them.
//   records: [op, column, verdict, message, sample, samples, seconds, fallback_ops, warnings, skip_reason,
//             max_abs_error, max_rel_error, mismatches, first_mismatch, basis (0: the run's, `bases`), observed,
//             PyTorch's expectation]   (strings as numbers into `strings`)
//   ops:     [name, group, worst verdict, [registry status per run, -1 where the run lacks the operator], tier
//             (into `tiers`)], then with a timeline: when it got a native MPS kernel, as a range of the releases
//             looked at (a string: Note [Since, as a range] in registry/release_range.cc), and the index of the
//             first of them with one (the releases' count: none), which orders the column
//             Operators come by tier (Note [Operator tiers] in registry/op_tier.cc)
//   timeline: the releases the runs' timeline looked at (results.json's "timeline"), empty without one
//   columns: [run, dtype]
nlohmann::json page_data(const std::vector<Results>& runs, const std::vector<std::string>& names,
                         const std::vector<std::string>& statuses) {
  using nlohmann::json;
  StringTable strings;
  json verdicts = json::array();
  for (const auto& s : detail::kVerdictStyles) {
    verdicts.push_back({{"name", to_string(s.verdict)},
                        {"symbol", verdict_symbol(s.verdict)},
                        {"severity", static_cast<int>(s.verdict)}});
  }
  json groups = json::array();
  for (auto g : op_groups()) groups.push_back(g);
  json tier_names = json::array();
  for (OpTier t : kAllOpTiers) tier_names.push_back(to_string(t));

  // Operators by tier (Note [Operator tiers] in registry/op_tier.cc), in each in the order they first appear;
  // columns are each run's dtypes.
  std::vector<std::string> op_names;
  std::vector<OpTier> tiers;
  {
    std::set<std::string> seen;
    for (const auto& run : runs) {
      for (const ProbeResult& r : run.records) {
        if (seen.insert(r.op).second) op_names.push_back(r.op);
      }
    }
    const CoreOps& core = shipped_core_ops();
    std::stable_sort(op_names.begin(), op_names.end(),
                     [&](const std::string& x, const std::string& y) { return op_tier(x, core) < op_tier(y, core); });
    for (const auto& op : op_names) tiers.push_back(op_tier(op, core));
  }
  std::unordered_map<std::string, size_t> op_index;
  for (size_t i = 0; i < op_names.size(); ++i) op_index.emplace(op_names[i], i);
  std::vector<Verdict> worst(op_names.size(), Verdict::kPass);
  std::vector<bool> any(op_names.size(), false);
  std::vector<std::vector<int>> op_status(op_names.size(), std::vector<int>(runs.size(), -1));
  json columns = json::array();
  json records = json::array();
  for (size_t run = 0; run < runs.size(); ++run) {
    const std::vector<std::string> dtypes = dtypes_of(runs[run].records);
    std::map<std::string, size_t> column;
    for (const auto& d : dtypes) {
      column[d] = columns.size();
      columns.push_back({run, d});
    }
    for (const ProbeResult& r : runs[run].records) {
      const size_t op = op_index.at(r.op);
      worst[op] = any[op] ? worse(worst[op], r.verdict) : r.verdict;
      any[op] = true;
      const auto status = std::find(statuses.begin(), statuses.end(), r.registry_status);
      op_status[op][run] = static_cast<int>(status - statuses.begin());

      json fallback_ops = json::array(), warnings = json::array();
      for (const auto& f : r.fallback_ops) fallback_ops.push_back(strings.id(f));
      for (const auto& w : r.warnings) warnings.push_back(strings.id(w));
      // Seconds to 0.1 ms: more digits are noise, and cost bytes.
      const double seconds = std::round(r.seconds * 1e4) / 1e4;
      std::string expectation;
      if (const auto& e = r.expectation) {
        expectation = fmt::format("{} ({}): PyTorch {}'s {} ({}){}{}; macOS {}{}", e->kind, e->scope, e->release,
                                  e->list, e->source, e->reason.empty() ? "" : ": ", e->reason, e->macos,
                                  e->decided ? "" : " (a note: it decided nothing)");
      }
      // The known bugs the record met or may meet (Note [Known bugs] in emu/known_bugs.cc), in the same detail; a
      // conditional failure apart (Note [Conditional failures in reports] in markdown.cc).
      std::string conditional;
      for (const auto& f : conditional_failures(r)) {
        conditional += fmt::format(
            "{}{} under {}{}{}", conditional.empty() ? "" : "\n", f.failure, f.condition, evidence_words(f),
            f.bug.empty() ? (f.message.empty() ? "" : ": " + first_line(f.message))
                          : fmt::format(": {} {} ({})", f.bug, f.link, fixed_words(f.fixed_in, f.fix_candidate)));
      }
      for (const auto& b : r.known_bugs) {
        if (b.applies) continue;  // conditional, above
        expectation += fmt::format("{}known bug {} ({} when {}{}; {}): {} {}", expectation.empty() ? "" : " · ", b.id,
                                   b.kind, b.when, b.met_by.empty() ? ", not met here" : ", met by " + b.met_by,
                                   fixed_words(b), b.summary, b.source);
      }
      json rec = {op,
                  column.at(r.dtype),
                  verdict_index(r.verdict),
                  strings.id(r.message),
                  strings.id(r.sample),
                  r.samples,
                  seconds,
                  fallback_ops,
                  warnings,
                  strings.id(std::string(skip_reason(r))),
                  r.max_abs_error,
                  r.max_rel_error,
                  r.mismatches,
                  strings.id(r.first_mismatch),
                  strings.id(r.basis == run_basis(runs[run].environment) ? std::string() : r.basis),
                  strings.id(r.observed),
                  strings.id(expectation),
                  strings.id(conditional)};
      while (rec.size() > 3) {
        const json& last = rec.back();
        const bool is_default = (last.is_number() && last.get<double>() == 0) || (last.is_array() && last.empty());
        if (!is_default) break;
        rec.erase(rec.size() - 1);
      }
      records.push_back(std::move(rec));
    }
  }
  // The releases of the first run with a timeline head the column; an operator's range is from the first run that
  // knows it.
  const ReleaseTimeline* timeline = nullptr;
  for (const auto& run : runs) {
    if (!timeline && !run.timeline.releases.empty()) timeline = &run.timeline;
  }
  json ops = json::array();
  for (size_t i = 0; i < op_names.size(); ++i) {
    json op = {op_names[i],
               std::find(op_groups().begin(), op_groups().end(), op_group(op_names[i])) - op_groups().begin(),
               verdict_index(worst[i]), op_status[i], static_cast<int>(tiers[i])};
    if (timeline) {
      const ReleaseTimeline* knows = timeline;  // the first run's that knows the operator
      for (const auto& run : runs) {
        if (run.timeline.native_since.count(op_names[i])) {
          knows = &run.timeline;
          break;
        }
      }
      const auto it = knows->native_since.find(op_names[i]);
      const ReleaseRange since =
          since_range(knows->releases, it == knows->native_since.end() ? std::string() : it->second);
      op.push_back(strings.id(since_text(since)));
      op.push_back(std::find(knows->releases.begin(), knows->releases.end(), since.by) - knows->releases.begin());
    }
    ops.push_back(std::move(op));
  }
  json bases = json::array();
  for (const auto& run : runs) bases.push_back(run_basis(run.environment));
  return {{"runs", names},      {"verdicts", verdicts},
          {"groups", groups},   {"statuses", statuses},
          {"columns", columns}, {"ops", ops},
          {"records", records}, {"strings", strings.strings()},
          {"bases", bases},     {"timeline", timeline ? json(timeline->releases) : json::array()},
          {"tiers", tier_names}};
}

// --- charts (inline SVG) ---------------------------------------------------------------------------------------

constexpr int kChartWidth = 760;
constexpr int kLabelWidth = 110;
constexpr int kBarWidth = 440;  // then the totals, right of the bars

// One horizontal bar of verdict counts at (kLabelWidth, y), as wide as kBarWidth for all records; each segment
// says its verdict, count and share in a tooltip.
std::string stacked_bar(const VerdictCounts& counts, int y, int height, bool numbers) {
  std::string out;
  double x = kLabelWidth;
  for (const auto& s : detail::kVerdictStyles) {
    const size_t n = counts.of(s.verdict);
    if (n == 0 || counts.total == 0) continue;
    const double w = kBarWidth * static_cast<double>(n) / static_cast<double>(counts.total);
    out += fmt::format(
        "<rect class=\"f{}\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\"><title>{}: {} ({})</title></rect>",
        verdict_index(s.verdict), x, y, w, height, to_string(s.verdict), with_commas(n), percent(n, counts.total));
    const std::string label = with_commas(n);
    if (numbers && w > 8.0 * static_cast<double>(label.size()) + 6) {
      out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"in\" fill=\"{}\">{}</text>", x + w / 2,
                         y + height / 2 + 4, s.text, label);
    }
    x += w;
  }
  return out;
}

std::string svg_open(int height, const std::string& label) {
  return fmt::format(
      "<svg class=\"chart\" role=\"img\" aria-label=\"{}\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" "
      "xmlns=\"http://www.w3.org/2000/svg\">",
      escape_html(label), kChartWidth, height, kChartWidth, height);
}

// Coverage by verdict: one bar per run.
std::string verdict_chart(const std::vector<std::string>& short_names, const std::vector<VerdictCounts>& counts) {
  constexpr int kBar = 26, kGap = 10;
  const int height = static_cast<int>(counts.size()) * (kBar + kGap);
  std::string out = svg_open(height, "op x dtype records by verdict");
  for (size_t i = 0; i < counts.size(); ++i) {
    const int y = static_cast<int>(i) * (kBar + kGap);
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"lab\">{}</text>", kLabelWidth - 8, y + kBar / 2 + 5,
                       escape_html(short_names[i]));
    out += stacked_bar(counts[i], y, kBar, true);
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"tot\">{} records, {} pass</text>", kLabelWidth + kBarWidth + 8,
                       y + kBar / 2 + 5, with_commas(counts[i].total),
                       percent(counts[i].of(Verdict::kPass), counts[i].total));
  }
  return out + "</svg>";
}

// Coverage by operator group: per group, one bar per run, each the group's records split by verdict (100% wide,
// so groups of any size compare), its size at the right.
std::string group_chart(const std::vector<std::string>& short_names,
                        const std::vector<std::map<std::string_view, VerdictCounts>>& by_group) {
  constexpr int kBar = 14, kRunGap = 3, kGroupGap = 9;
  std::vector<std::string_view> present;
  for (auto g : op_groups()) {
    for (const auto& run : by_group) {
      if (run.count(g) != 0) {
        present.push_back(g);
        break;
      }
    }
  }
  const int runs = static_cast<int>(by_group.size());
  const int per_group = runs * kBar + (runs - 1) * kRunGap + kGroupGap;
  const int height = std::max(1, static_cast<int>(present.size()) * per_group);
  std::string out = svg_open(height, "op x dtype records by operator group and verdict");
  for (size_t gi = 0; gi < present.size(); ++gi) {
    const int y0 = static_cast<int>(gi) * per_group;
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"lab grp\">{}</text>", kLabelWidth - 8,
                       y0 + (runs * kBar + (runs - 1) * kRunGap) / 2 + 5, present[gi]);
    for (int run = 0; run < runs; ++run) {
      const int y = y0 + run * (kBar + kRunGap);
      const auto it = by_group[run].find(present[gi]);
      const VerdictCounts counts = it == by_group[run].end() ? VerdictCounts{} : it->second;
      out += stacked_bar(counts, y, kBar, false);
      std::string total = fmt::format("{} records, {} pass", with_commas(counts.total),
                                      percent(counts.of(Verdict::kPass), counts.total));
      if (runs > 1) total = short_names[run] + ": " + total;
      out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"tot sm\">{}</text>", kLabelWidth + kBarWidth + 8,
                         y + kBar - 4, escape_html(total));
    }
  }
  return out + "</svg>";
}

// --- the page --------------------------------------------------------------------------------------------------

std::string environment_html(const Results& run, const std::string& name, const Analysis& a) {
  const RunEnvironment& env = run.environment;
  const RunProgress& p = run.run;
  const bool emulated = !env.emulator.empty();
  std::string out =
      fmt::format("<section class=\"run{}\"><h3>{}<span class=\"tag {}\">{}</span>{}</h3>", emulated ? " emulated" : "",
                  escape_html(name), emulated ? "emu" : "real", emulated ? "emulated" : "real device",
                  p.complete() ? "" : "<span class=\"tag inc\">incomplete run</span>");
  out += "<dl class=\"env\">";
  auto row = [&out](const char* what, const std::string& value) {
    if (!value.empty()) out += fmt::format("<dt>{}</dt><dd>{}</dd>", what, escape_html(value));
  };
  row("target", env.requested.empty() || env.requested == env.target
                    ? env.target
                    : fmt::format("{} (asked for {})", env.target, env.requested));
  row("emulator", emulated ? env.emulator + " — not a real Mac" : "");
  row("device", env.device);
  row("libtorch", env.torch_version);
  row("OS", env.os);
  row("CPU fallback", env.fallback_mode.empty() ? ""
                                                : fmt::format("{} (PYTORCH_ENABLE_MPS_FALLBACK {})", env.fallback_mode,
                                                              env.fallback_mode == "on" ? "set" : "unset"));
  row("spec", env.spec);
  row("expectations", expectations_sentence(run));
  row("probes", fmt::format("{} finished of {} planned{}{}", with_commas(p.finished), with_commas(p.planned),
                            p.not_run() ? fmt::format(", {} not run", with_commas(p.not_run())) : "",
                            p.interrupted.empty() ? "" : " (stopped by " + p.interrupted + ")"));
  row("shard", p.shard);
  row("records", fmt::format("{} op x dtype records of {} operators in {} dtypes", with_commas(a.counts.total),
                             with_commas(a.operators), a.dtypes.size()));
  out += "</dl><ul>";
  for (const auto& s : coverage_sentences(run, a)) out += "<li>" + escape_html(s) + "</li>";
  return out + "</ul></section>\n";
}

// Colour, symbol and name of each verdict; its meaning shows on hover.
std::string legend_html() {
  std::string out = "<ul class=\"legend\">";
  for (const auto& s : detail::kVerdictStyles) {
    out += fmt::format("<li title=\"{3}\"><span class=\"sw v{0}\">{1}</span>{2}</li>", verdict_index(s.verdict),
                       verdict_symbol(s.verdict), to_string(s.verdict), s.meaning);
  }
  return out + "</ul>\n";
}

// A fieldset of checkboxes, all on: (value, label, count) per box.
struct Choice {
  std::string value, label;
  size_t count;
  std::string swatch;  // a verdict's class and symbol, or ""
};
std::string filter_set(const char* legend, const char* key, const std::vector<Choice>& choices) {
  std::string out = fmt::format(
      "<fieldset id=\"filter-{1}\"><legend>{0} <button type=\"button\" data-all=\"1\">all</button>"
      "<button type=\"button\" data-all=\"0\">none</button></legend>",
      legend, key);
  for (const auto& c : choices) {
    out += fmt::format(
        "<label><input type=\"checkbox\" data-f=\"{}\" value=\"{}\" checked>{}{} <span class=\"n\">{}</span></label>",
        key, escape_html(c.value), c.swatch, escape_html(c.label), with_commas(c.count));
  }
  return out + "</fieldset>";
}

}  // namespace

std::string render_html(const std::vector<Results>& runs) {
  std::vector<Analysis> analyses;
  for (const auto& r : runs) analyses.push_back(analyze(r));
  const std::vector<std::string> names = run_names(runs);
  const std::vector<std::string> statuses = statuses_of(runs, analyses);

  // Chart and filter numbers: per run, per group; and over all runs, per verdict, group, status and dtype.
  std::vector<VerdictCounts> counts;
  std::vector<std::map<std::string_view, VerdictCounts>> by_group(runs.size());
  VerdictCounts all;
  std::map<std::string_view, size_t> group_records;
  std::map<OpTier, size_t> tier_records;
  const CoreOps& core = shipped_core_ops();
  std::map<std::string, size_t> status_records, dtype_records;
  std::vector<std::string> dtypes;
  for (size_t i = 0; i < runs.size(); ++i) {
    counts.push_back(analyses[i].counts);
    for (const auto& r : runs[i].records) {
      const std::string_view g = op_group(r.op);
      by_group[i][g].add(r.verdict);
      all.add(r.verdict);
      ++group_records[g];
      ++tier_records[op_tier(r.op, core)];
      ++status_records[r.registry_status];
      ++dtype_records[r.dtype];
    }
    for (const auto& d : analyses[i].dtypes) {
      if (std::find(dtypes.begin(), dtypes.end(), d) == dtypes.end()) dtypes.push_back(d);
    }
  }
  std::vector<std::string> short_names;
  for (size_t i = 0; i < runs.size(); ++i) {
    short_names.push_back(runs.size() == 1 ? "all records" : fmt::format("run {}", i + 1));
  }

  const std::string title = runs.size() == 1 ? "mps-audit: " + where_it_ran(runs[0].environment)
                                             : fmt::format("mps-audit: {} runs", runs.size());
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      // Nothing is fetched: no network, no injected source can load.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "script-src 'unsafe-inline'; img-src data:\">\n"
      "<link rel=\"icon\" href=\"data:,\">\n<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n",
      escape_html(title), detail::style_sheet());

  // "Emulated" cannot be missed: a banner above everything, for every emulated run.
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunEnvironment& env = runs[i].environment;
    if (env.emulator.empty()) continue;
    out += fmt::format(
        "<p class=\"banner emu\" role=\"note\"><strong>Emulated MPS, not a real Mac</strong>{} — {}: the kernels are "
        "those the release registers for MPS, the numbers are the CPU's.</p>\n",
        runs.size() == 1 ? "" : fmt::format(" (run {})", i + 1), escape_html(env.emulator));
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunProgress& p = runs[i].run;
    if (p.complete()) continue;
    out += fmt::format(
        "<p class=\"banner incomplete\" role=\"note\">Incomplete run{}{}: {} of {} planned probes finished, {} not "
        "run; what follows covers only what finished.</p>\n",
        runs.size() == 1 ? "" : fmt::format(" (run {})", i + 1),
        p.interrupted.empty() ? "" : " (stopped by " + escape_html(p.interrupted) + ")", with_commas(p.finished),
        with_commas(p.planned), with_commas(p.not_run()));
  }

  // The overview fits a screen: environments on the left, the charts on the right.
  out += fmt::format("<header><h1>{}</h1></header>\n<main>\n<div class=\"overview\"><div>\n<div class=\"runs\">\n",
                     escape_html(title));
  for (size_t i = 0; i < runs.size(); ++i) {
    out += environment_html(runs[i], runs.size() == 1 ? "Environment" : names[i], analyses[i]);
  }
  out +=
      "</div></div><div>\n<h2>Coverage by verdict</h2>\n" + verdict_chart(short_names, counts) + "\n" + legend_html();
  out += "<h2>Coverage by operator group</h2>\n" + group_chart(short_names, by_group) + "\n</div></div>\n";

  // The matrix, with its filters in a column beside it.
  out += "<h2>Operators \u00d7 dtypes</h2>\n<div class=\"explorer\"><div id=\"filters\">";
  out +=
      "<fieldset><legend>search</legend><input id=\"search\" type=\"search\" "
      "placeholder=\"operator name contains\u2026\" aria-label=\"search operators\"></fieldset>";
  std::vector<Choice> choices;
  for (const auto& s : detail::kVerdictStyles) {
    if (all.of(s.verdict) == 0) continue;
    const size_t v = verdict_index(s.verdict);
    choices.push_back({std::to_string(v), std::string(to_string(s.verdict)), all.of(s.verdict),
                       fmt::format("<span class=\"sw v{}\">{}</span>", v, verdict_symbol(s.verdict))});
  }
  out += filter_set("verdict", "v", choices);
  choices.clear();
  for (size_t g = 0; g < op_groups().size(); ++g) {
    const auto it = group_records.find(op_groups()[g]);
    if (it != group_records.end()) choices.push_back({std::to_string(g), std::string(it->first), it->second, ""});
  }
  out += filter_set("group", "g", choices);
  choices.clear();
  for (OpTier t : kAllOpTiers) {
    const auto it = tier_records.find(t);
    if (it != tier_records.end()) {
      choices.push_back({std::to_string(static_cast<int>(t)), std::string(to_string(t)), it->second, ""});
    }
  }
  out += filter_set("set", "t", choices);
  choices.clear();
  for (size_t s = 0; s < statuses.size(); ++s) {
    choices.push_back(
        {std::to_string(s), statuses[s].empty() ? "no registry" : statuses[s], status_records[statuses[s]], ""});
  }
  out += filter_set("registry status", "s", choices);
  choices.clear();
  for (const auto& d : dtypes) choices.push_back({d, d, dtype_records[d], ""});
  out += filter_set("dtype", "d", choices);
  out += "</div>\n<div><p id=\"shown\" aria-live=\"polite\"></p>";
  out +=
      "<p class=\"hint\">Core ATen operators first (set). Click a column's heading to sort (operator, set, group, "
      "registry status, native since, worst verdict), a cell for its details.</p>\n";
  out += "<div class=\"wrap\"><table id=\"matrix\"><thead></thead><tbody></tbody></table></div></div></div>\n";
  out +=
      "<aside id=\"details\" hidden aria-live=\"polite\"><button type=\"button\" class=\"close\" "
      "aria-label=\"close\">\u00d7</button><h3></h3><dl></dl></aside>\n</main>\n";
  out += "<footer>Written by mps-audit from results.json; the page is self-contained and fetches nothing.</footer>\n";
  out += "<style id=\"column-filter\"></style>\n";
  out += "<script type=\"application/json\" id=\"mps-audit-data\">" + script_json(page_data(runs, names, statuses)) +
         "</script>\n";
  out += std::string("<script>") + detail::kScript + "</script>\n</body></html>\n";
  return out;
}

}  // namespace mps_audit
