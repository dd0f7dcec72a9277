// results.html: one self-contained page (inline CSS, JS and SVG, nothing fetched) of one or more runs: environment,
// charts, and the op x dtype matrix with filters, search, sorting and details on click.
//
// Everything the page shows is decided here: verdicts, groups, worst verdicts, chart numbers. The script only lays
// out the matrix from an embedded JSON document and toggles what is visible. Every string from results is
// untrusted (messages come from libraries): the HTML written here goes through escape_html(), the JSON through
// script_json(), and the script inserts text with textContent or its own escape function.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/renderers.h"
#include "results/analysis.h"

namespace mps_audit {
namespace {

// Colours of each verdict: a cell's background and text, also the charts' fills.
struct VerdictStyle {
  Verdict verdict;
  const char* background;
  const char* text;
  const char* meaning;
};
constexpr std::array<VerdictStyle, kAllVerdicts.size()> kStyles = {{
    {Verdict::kPass, "#a7e3b5", "#0f4a22", "ran on the target and matches the CPU"},
    {Verdict::kFallback, "#fbd96a", "#6b3a05", "matches, but (part of) it ran on the CPU"},
    {Verdict::kKnownFailure, "#d9c2f0", "#3f1466",
     "expected to fail on real MPS: PyTorch's own MPS test lists say so; the emulator cannot reproduce it"},
    {Verdict::kMismatch, "#f49ac9", "#6d0f3f", "differs from the CPU beyond tolerance"},
    {Verdict::kUnsupported, "#fdb07a", "#6b2508", "the target refused the op or dtype"},
    {Verdict::kError, "#f47e7e", "#5c0b0b", "another exception on the target while the CPU succeeded"},
    {Verdict::kCrash, "#a31515", "#ffffff", "the probe killed its worker process"},
    {Verdict::kTimeout, "#b9a5f7", "#2e0b5e", "the probe did not finish in time"},
    {Verdict::kSkip, "#e9eaed", "#5b6270", "not probed: no inputs, no CPU reference, or the spec says so"},
    {Verdict::kXfail, "#b3d4fb", "#15306b", "failed, as the spec or PyTorch's own MPS test lists say it does"},
    {Verdict::kXpass, "#8de8d8", "#0b4740", "passed, though the spec or PyTorch's own MPS test lists say it fails"},
}};

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
//   ops:     [name, group, worst verdict, [registry status per run, -1 where the run lacks the operator],
//             the first release with a native MPS kernel (a string; 0: none, or no timeline)]
//   timeline: the releases the runs' timeline looked at (results.json's "timeline"), empty without one
//   columns: [run, dtype]
nlohmann::json page_data(const std::vector<Results>& runs, const std::vector<std::string>& names,
                         const std::vector<std::string>& statuses) {
  using nlohmann::json;
  StringTable strings;
  json verdicts = json::array();
  for (const auto& s : kStyles) {
    verdicts.push_back({{"name", to_string(s.verdict)},
                        {"symbol", verdict_symbol(s.verdict)},
                        {"severity", static_cast<int>(s.verdict)}});
  }
  json groups = json::array();
  for (auto g : op_groups()) groups.push_back(g);

  // Operators in the order they first appear; columns are each run's dtypes.
  std::unordered_map<std::string, size_t> op_index;
  std::vector<std::string> op_names;
  std::vector<Verdict> worst;
  std::vector<std::vector<int>> op_status;
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
      auto [it, added] = op_index.emplace(r.op, op_names.size());
      if (added) {
        op_names.push_back(r.op);
        worst.push_back(r.verdict);
        op_status.emplace_back(runs.size(), -1);
      }
      const size_t op = it->second;
      worst[op] = worse(worst[op], r.verdict);
      const auto status = std::find(statuses.begin(), statuses.end(), r.registry_status);
      op_status[op][run] = static_cast<int>(status - statuses.begin());

      json fallback_ops = json::array(), warnings = json::array();
      for (const auto& f : r.fallback_ops) fallback_ops.push_back(strings.id(f));
      for (const auto& w : r.warnings) warnings.push_back(strings.id(w));
      // Seconds to 0.1 ms: more digits are noise, and cost bytes.
      const double seconds = std::round(r.seconds * 1e4) / 1e4;
      std::string expectation;
      if (const auto& e = r.expectation) {
        expectation = fmt::format("{} ({}): PyTorch {}'s {} ({}){}{}; macOS {}", e->kind, e->scope, e->release, e->list,
                                  e->source, e->reason.empty() ? "" : ": ", e->reason, e->macos);
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
                  strings.id(expectation)};
      while (rec.size() > 3) {
        const json& last = rec.back();
        const bool is_default = (last.is_number() && last.get<double>() == 0) || (last.is_array() && last.empty());
        if (!is_default) break;
        rec.erase(rec.size() - 1);
      }
      records.push_back(std::move(rec));
    }
  }
  json ops = json::array();
  for (size_t i = 0; i < op_names.size(); ++i) {
    std::string since;  // the first run's that knows it
    for (const auto& run : runs) {
      if (const auto it = run.timeline.native_since.find(op_names[i]); it != run.timeline.native_since.end()) {
        since = it->second;
        break;
      }
    }
    ops.push_back({op_names[i],
                   std::find(op_groups().begin(), op_groups().end(), op_group(op_names[i])) - op_groups().begin(),
                   verdict_index(worst[i]), op_status[i], strings.id(since)});
  }
  json timeline = json::array();
  for (const auto& run : runs) {
    if (timeline.empty() && !run.timeline.releases.empty()) timeline = run.timeline.releases;
  }
  json bases = json::array();
  for (const auto& run : runs) bases.push_back(run_basis(run.environment));
  return {{"runs", names},      {"verdicts", verdicts}, {"groups", groups},   {"statuses", statuses},
          {"columns", columns}, {"ops", ops},           {"records", records}, {"strings", strings.strings()},
          {"bases", bases},     {"timeline", timeline}};
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
  for (const auto& s : kStyles) {
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

std::string style_sheet() {
  std::string css = R"CSS(
:root{--fg:#1d2129;--muted:#5b6270;--line:#d5d8de;--bg:#fff;--head:#f4f5f7}
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header,main{padding:0 20px}
h1{font-size:22px;margin:14px 0 6px}
h2{font-size:17px;margin:18px 0 8px}
h3{font-size:15px;margin:10px 0 6px}
.banner{margin:0;padding:12px 20px;font-size:16px;font-weight:600}
.banner.emu{background:#7a1fa2;color:#fff}
.banner.emu strong{font-size:19px;letter-spacing:.02em;text-transform:uppercase}
.banner.incomplete{background:#b3261e;color:#fff}
.overview{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:0 28px;align-items:start}
.runs{display:flex;flex-wrap:wrap;gap:12px;margin-top:4px}
.run{flex:1 1 400px;border:1px solid var(--line);border-radius:6px;padding:8px 12px}
.run.emulated{border:3px solid #7a1fa2}
.tag{display:inline-block;border-radius:4px;padding:1px 6px;margin-left:6px;font-size:12px;font-weight:700;
  vertical-align:middle}
.tag.emu{background:#7a1fa2;color:#fff}.tag.real{background:#1b6e35;color:#fff}.tag.inc{background:#b3261e;color:#fff}
dl.env{display:grid;grid-template-columns:max-content 1fr;gap:0 12px;margin:4px 0}
dl.env dt{color:var(--muted)}dl.env dd{margin:0;overflow-wrap:anywhere}
.run ul{margin:4px 0;padding-left:18px;color:var(--muted);font-size:13px}
svg.chart{display:block;max-width:100%;height:auto;margin:4px 0 10px}
svg.chart text{font:13px system-ui,sans-serif;fill:var(--fg)}
svg.chart text.lab{text-anchor:end}svg.chart text.in{text-anchor:middle;font-size:12px}
svg.chart text.sm{font-size:12px;fill:var(--muted)}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:4px 0 8px;padding:0;list-style:none;font-size:13px}
.legend li{display:flex;align-items:baseline;gap:5px;cursor:help}
.sw{display:inline-block;min-width:22px;text-align:center;border-radius:3px;padding:0 3px;font-weight:700}
.legend .m,.hint{color:var(--muted);font-size:12px}
.explorer{display:grid;grid-template-columns:270px minmax(0,1fr);gap:14px;align-items:start}
#filters{display:flex;flex-direction:column;gap:6px}
#filters fieldset{border:1px solid var(--line);border-radius:6px;margin:0;padding:2px 8px 5px}
#filters legend{color:var(--muted);font-size:12px;padding:0 4px}
#filters label{display:inline-flex;align-items:center;gap:3px;margin-right:6px;white-space:nowrap;font-size:13px}
#filters .n{color:var(--muted);font-size:11px}
#filters button{font-size:11px;margin-left:4px}
#search{font-size:14px;padding:3px 6px;width:100%}
#shown{margin:0 0 2px}.hint{margin:0 0 6px}
.wrap{overflow:auto;max-height:85vh;border:1px solid var(--line)}
#matrix{border-collapse:separate;border-spacing:0;font-size:13px}
#matrix th,#matrix td{border-bottom:1px solid #eceef1;padding:1px 6px;white-space:nowrap}
#matrix thead th{position:sticky;background:var(--head);z-index:2;border-bottom:1px solid var(--line)}
#matrix thead tr:first-child th{top:0}#matrix thead tr.dt th{top:var(--dt-top,24px);font-weight:500;font-size:12px}
#matrix thead th.sort{cursor:pointer;user-select:none}
#matrix thead th.sort:after{content:" \2195";color:#aab}
#matrix thead th[aria-sort=ascending]:after{content:" \25B2";color:var(--fg)}
#matrix thead th[aria-sort=descending]:after{content:" \25BC";color:var(--fg)}
#matrix th.run{border-left:2px solid #9aa0aa;max-width:420px;white-space:normal;font-size:12px}
#matrix tbody th{max-width:330px;overflow:hidden;text-overflow:ellipsis;text-align:left;font-weight:500;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
#matrix tbody td{text-align:center;min-width:30px;cursor:pointer}
#matrix tbody td.g,#matrix tbody td.s{text-align:left;color:var(--muted);cursor:default}
#matrix tbody td.n,#matrix tbody td.w{cursor:default}
#matrix td.w{border-left:2px solid #9aa0aa}
#matrix td.first,#matrix th.first{border-left:2px solid #9aa0aa}
#matrix td.sel{outline:3px solid #1d2129;outline-offset:-3px}
#matrix tbody tr:hover th{background:#eef2ff}
#details{position:fixed;right:16px;bottom:16px;width:min(520px,calc(100vw - 32px));max-height:60vh;overflow:auto;
  background:#fff;border:1px solid #9aa0aa;border-radius:8px;box-shadow:0 6px 24px rgba(0,0,0,.2);padding:10px 14px;
  z-index:5}
#details h3{margin:0 24px 6px 0;font-family:ui-monospace,Menlo,Consolas,monospace;overflow-wrap:anywhere}
#details .close{position:absolute;right:8px;top:6px;border:0;background:none;font-size:20px;cursor:pointer}
#details dl{display:grid;grid-template-columns:max-content 1fr;gap:3px 12px;margin:0}
#details dt{color:var(--muted)}
#details dd{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;font-family:ui-monospace,Menlo,Consolas,monospace;
  font-size:12px}
footer{color:var(--muted);padding:16px 20px;font-size:12px}
)CSS";
  // Per verdict: the cell and legend colours, the chart fill, and the rule that hides its cells when its filter
  // is off (a class on the table, so one toggle hides thousands of cells).
  for (const auto& s : kStyles) {
    const size_t v = verdict_index(s.verdict);
    css += fmt::format(
        ".v{0}{{background:{1};color:{2}}}.f{0}{{fill:{1}}}#matrix.h{0} td.v{0}:not(.w){{visibility:hidden}}\n", v,
        s.background, s.text);
  }
  return css;
}

// Lays out the matrix from the embedded document, and does filters, search, sorting and details. Untrusted text
// goes in through esc() (in the one innerHTML string of rows) or textContent.
constexpr const char* kScript = R"JS(
"use strict";
(function () {
  const t0 = performance.now();
  const D = JSON.parse(document.getElementById("mps-audit-data").textContent);
  const S = D.strings, V = D.verdicts, ops = D.ops, recs = D.records, cols = D.columns;
  // With a release timeline (MPS runs), a fourth fixed column: the first shipped release with a native MPS kernel.
  const SINCE = D.timeline.length > 0, nc = cols.length, FIXED = SINCE ? 4 : 3;
  const table = document.getElementById("matrix"), tbody = table.tBodies[0];
  const ESC = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c]);

  // The record of each (operator, column), -1 where there is none.
  const cell = new Int32Array(ops.length * nc).fill(-1);
  for (let r = 0; r < recs.length; r++) cell[recs[r][0] * nc + recs[r][1]] = r;
  const statusText = (o) => {
    const seen = [];
    for (const s of o[3]) if (s >= 0 && !seen.includes(s)) seen.push(s);
    return seen.map((s) => D.statuses[s] || "\u2014").join(" / ");
  };

  // The header: operator, group, status, then one column group per run with its dtypes.
  const runCols = D.runs.map(() => []);
  cols.forEach((c, i) => runCols[c[0]].push(i));
  let head = '<tr><th class="sort" data-sort="name" rowspan="2" scope="col">operator</th>' +
      '<th class="sort" data-sort="group" rowspan="2" scope="col">group</th>' +
      '<th class="sort" data-sort="status" rowspan="2" scope="col">registry status</th>' +
      (SINCE ? '<th class="sort" data-sort="since" rowspan="2" scope="col" title="the first of the releases ' +
               esc(D.timeline.join(", ")) + ' with a native MPS kernel">native since</th>' : "");
  D.runs.forEach((name, r) => {
    if (runCols[r].length) {
      head += '<th class="run" data-run="' + r + '" colspan="' + runCols[r].length + '" scope="colgroup">' +
          esc(name) + "</th>";
    }
  });
  head += '<th class="sort" data-sort="worst" rowspan="2" scope="col">worst</th></tr><tr class="dt">';
  cols.forEach((c, i) => {
    head += "<th" + (runCols[c[0]][0] === i ? ' class="first"' : "") + ' scope="col">' + esc(c[1]) + "</th>";
  });
  table.tHead.innerHTML = head + "</tr>";
  // The dtype row sticks below the run row, whatever height the run names wrap to.
  const runTh = table.tHead.querySelector("th.run");
  if (runTh) table.style.setProperty("--dt-top", runTh.offsetHeight + "px");

  // The body: one string, one innerHTML.
  const sym = V.map((v) => esc(v.symbol));
  const firstCol = new Uint8Array(nc);
  runCols.forEach((cs) => { if (cs.length) firstCol[cs[0]] = 1; });
  const parts = new Array(ops.length);
  for (let i = 0; i < ops.length; i++) {
    const o = ops[i];
    const name = esc(o[0]);
    let row = '<tr data-o="' + i + '"><th scope="row" title="' + name + '">' + name + '</th><td class="g">' + esc(D.groups[o[1]]) +
        '</td><td class="s">' + esc(statusText(o)) + "</td>" +
        (SINCE ? '<td class="ns">' + esc(S[o[4]] || "not yet") + "</td>" : "");
    for (let c = 0; c < nc; c++) {
      const r = cell[i * nc + c], f = firstCol[c] ? " first" : "";
      row += r < 0 ? '<td class="n' + f + '"></td>' : '<td class="v' + recs[r][2] + f + '">' + sym[recs[r][2]] + "</td>";
    }
    parts[i] = row + '<td class="w v' + o[2] + '" title="' + esc(V[o[2]].name) + '">' + sym[o[2]] + "</td></tr>";
  }
  tbody.innerHTML = parts.join("");
  const rows = Array.from(tbody.rows);
  const lower = ops.map((o) => o[0].toLowerCase());

  // --- filters -------------------------------------------------------------------------------------------------
  const vOn = V.map(() => true), gOn = D.groups.map(() => true), sOn = D.statuses.map(() => true);
  const dtypes = [...new Set(cols.map((c) => c[1]))], dOn = new Map(dtypes.map((d) => [d, true]));
  let query = "";
  const colOn = () => cols.map((c) => dOn.get(c[1]));
  const shown = document.getElementById("shown");
  const colStyle = document.getElementById("column-filter");

  function visible(i, con) {
    const o = ops[i];
    if (!gOn[o[1]]) return false;
    if (!o[3].some((s) => s >= 0 && sOn[s])) return false;
    if (query && !lower[i].includes(query)) return false;
    for (let c = 0; c < nc; c++) {
      const r = cell[i * nc + c];
      if (r >= 0 && con[c] && vOn[recs[r][2]]) return true;
    }
    return false;
  }
  function apply() {
    const con = colOn();
    let nOps = 0, nCells = 0;
    for (let i = 0; i < ops.length; i++) {
      const v = visible(i, con);
      if (rows[i].hidden === v) rows[i].hidden = !v;
      if (!v) continue;
      nOps++;
      for (let c = 0; c < nc; c++) {
        const r = cell[i * nc + c];
        if (r >= 0 && con[c] && vOn[recs[r][2]]) nCells++;
      }
    }
    V.forEach((_, v) => table.classList.toggle("h" + v, !vOn[v]));
    // Hidden dtypes: their columns go, and each run's header spans what is left.
    let css = "";
    con.forEach((on, c) => {
      if (!on) css += "#matrix tbody td:nth-child(" + (FIXED + c + 1) + "),#matrix tr.dt th:nth-child(" + (c + 1) + "){display:none}";
    });
    colStyle.textContent = css;
    table.tHead.querySelectorAll("th.run").forEach((th) => {
      const n = runCols[+th.dataset.run].filter((c) => con[c]).length;
      th.hidden = n === 0;
      if (n) th.colSpan = n;
    });
    shown.textContent = nOps.toLocaleString("en-US") + " of " + ops.length.toLocaleString("en-US") +
        " operators shown, " + nCells.toLocaleString("en-US") + " of " + recs.length.toLocaleString("en-US") + " records";
  }
  const filters = document.getElementById("filters");
  filters.addEventListener("change", (e) => {
    const t = e.target;
    if (t.type !== "checkbox") return;
    const k = t.dataset.f, on = t.checked;
    if (k === "v") vOn[+t.value] = on;
    else if (k === "g") gOn[+t.value] = on;
    else if (k === "s") sOn[+t.value] = on;
    else if (k === "d") dOn.set(t.value, on);
    apply();
  });
  filters.addEventListener("click", (e) => {
    const b = e.target.closest("button[data-all]");
    if (!b) return;
    const on = b.dataset.all === "1";
    b.closest("fieldset").querySelectorAll("input[type=checkbox]").forEach((x) => {
      if (x.checked !== on) { x.checked = on; x.dispatchEvent(new Event("change", {bubbles: true})); }
    });
  });
  const search = document.getElementById("search");
  search.addEventListener("input", () => { query = search.value.trim().toLowerCase(); apply(); });

  // --- sorting -------------------------------------------------------------------------------------------------
  const byName = (a, b) => (ops[a][0] < ops[b][0] ? -1 : ops[a][0] > ops[b][0] ? 1 : 0);
  const statusKey = (i) => { const s = ops[i][3].filter((x) => x >= 0); return s.length ? Math.min(...s) : 1e9; };
  const keys = {
    name: null,
    group: (i) => ops[i][1],
    status: statusKey,
    since: (i) => { const k = D.timeline.indexOf(S[ops[i][4]]); return k < 0 ? 1e9 : k; },
    worst: (i) => -V[ops[i][2]].severity,
  };
  table.tHead.addEventListener("click", (e) => {
    const th = e.target.closest("th[data-sort]");
    if (!th) return;
    const dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    table.tHead.querySelectorAll("th[aria-sort]").forEach((x) => x.removeAttribute("aria-sort"));
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    const key = keys[th.dataset.sort];
    const order = ops.map((_, i) => i);
    order.sort((a, b) => dir * ((key ? key(a) - key(b) : 0) || byName(a, b)));
    const frag = document.createDocumentFragment();
    for (const i of order) frag.appendChild(rows[i]);
    tbody.appendChild(frag);
  });

  // --- details -------------------------------------------------------------------------------------------------
  const details = document.getElementById("details");
  const dl = details.querySelector("dl"), title = details.querySelector("h3");
  let selected = null;
  function add(name, value, id) {
    if (value === undefined || value === null || value === "" || (Array.isArray(value) && !value.length)) return;
    const dt = document.createElement("dt"), dd = document.createElement("dd");
    dt.textContent = name;
    dd.textContent = Array.isArray(value) ? value.join("\n") : String(value);
    if (id) dd.id = id;
    dl.append(dt, dd);
  }
  function show(r, td) {
    const t = recs[r], v = V[t[2]], col = cols[t[1]], o = ops[t[0]];
    const num = (k) => (t.length > k ? t[k] : 0), str = (k) => S[num(k)];
    const list = (k) => (t.length > k ? t[k].map((x) => S[x]) : []);
    title.textContent = o[0] + " \u00b7 " + col[1];
    dl.replaceChildren();
    add("verdict", v.symbol + " " + v.name, "d-verdict");
    if (D.runs.length > 1) add("run", D.runs[col[0]]);
    add("message", str(3), "d-message");
    add("skip reason", str(9));
    add("fallback ops", list(7), "d-fallback");
    add("warnings", list(8), "d-warnings");
    if (num(10) || num(11) || num(12)) {
      add("max abs error", num(10));
      add("max rel error", num(11));
      add("mismatches", num(12));
      add("first mismatch", str(13));
    }
    add("rests on", str(14) || D.bases[col[0]]);
    add("observed", str(15), "d-observed");
    add("PyTorch's expectation", str(16), "d-expectation");
    add("registry status", D.statuses[o[3][col[0]]]);
    add("group", D.groups[o[1]]);
    add("sample", str(4));
    add("samples", num(5));
    add("seconds", num(6));
    if (selected) selected.classList.remove("sel");
    selected = td;
    td.classList.add("sel");
    details.hidden = false;
  }
  tbody.addEventListener("click", (e) => {
    const td = e.target.closest("td");
    if (!td || td.cellIndex < FIXED || td.cellIndex >= FIXED + nc) return;
    const i = +td.parentElement.dataset.o, r = cell[i * nc + td.cellIndex - FIXED];
    if (r >= 0) show(r, td);
  });
  details.querySelector(".close").addEventListener("click", () => {
    details.hidden = true;
    if (selected) selected.classList.remove("sel");
    selected = null;
  });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") details.querySelector(".close").click(); });

  apply();
  document.body.dataset.ready = (performance.now() - t0).toFixed(0);
})();
)JS";

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
  for (const auto& s : kStyles) {
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
  std::map<std::string, size_t> status_records, dtype_records;
  std::vector<std::string> dtypes;
  for (size_t i = 0; i < runs.size(); ++i) {
    counts.push_back(analyses[i].counts);
    for (const auto& r : runs[i].records) {
      const std::string_view g = op_group(r.op);
      by_group[i][g].add(r.verdict);
      all.add(r.verdict);
      ++group_records[g];
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
      escape_html(title), style_sheet());

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
  for (const auto& s : kStyles) {
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
      "<p class=\"hint\">Click a column's heading to sort (operator, group, registry status, native since, worst "
      "verdict), a cell "
      "for its details.</p>\n";
  out += "<div class=\"wrap\"><table id=\"matrix\"><thead></thead><tbody></tbody></table></div></div></div>\n";
  out +=
      "<aside id=\"details\" hidden aria-live=\"polite\"><button type=\"button\" class=\"close\" "
      "aria-label=\"close\">\u00d7</button><h3></h3><dl></dl></aside>\n</main>\n";
  out += "<footer>Written by mps-audit from results.json; the page is self-contained and fetches nothing.</footer>\n";
  out += "<style id=\"column-filter\"></style>\n";
  out += "<script type=\"application/json\" id=\"mps-audit-data\">" + script_json(page_data(runs, names, statuses)) +
         "</script>\n";
  out += std::string("<script>") + kScript + "</script>\n</body></html>\n";
  return out;
}

}  // namespace mps_audit
