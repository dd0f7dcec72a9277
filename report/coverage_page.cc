// The coverage page, in Markdown and HTML: see coverage_page.h. Both formats show the same rows, cells and words;
// what a cell says is decided once, in coverage_rows().
#include "report/coverage_page.h"

#include <functional>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "registry/release_range.h"
#include "report/html_assets.h"
#include "report/renderers.h"

namespace mps_audit {
namespace {

// How a release serves an operator for MPS, in the page's words.
enum class Serves { kNative, kComposite, kFallsBack, kAbsent };
struct Cell {
  Serves serves = Serves::kAbsent;
  bool partial = false;  // the release's lists expect a failure in some dtype

  std::string text() const {
    static const char* const kWords[] = {"native", "composite", "falls back", "\u2014"};
    return std::string(kWords[static_cast<int>(serves)]) + (partial && serves != Serves::kAbsent ? ", partial" : "");
  }
  // The verdict whose colours the HTML cell takes.
  Verdict look() const {
    if (serves == Serves::kAbsent) return Verdict::kSkip;
    if (serves == Serves::kFallsBack) return Verdict::kFallback;
    if (partial) return Verdict::kKnownFailure;
    return serves == Serves::kNative ? Verdict::kPass : Verdict::kXfail;
  }
};

Cell cell(const std::string& status, bool partial) {
  if (status == "absent") return {Serves::kAbsent, false};
  if (status == "native") return {Serves::kNative, partial};
  if (status == "composite_explicit" || status == "composite_implicit") return {Serves::kComposite, partial};
  // cpu_fallback, none: the backend fallback (or a kernel that always calls it) runs the CPU's.
  return {Serves::kFallsBack, partial};
}

struct Row {
  std::string op;
  std::vector<Cell> cells;  // per release
  std::string native_since, works_since;
  std::string still_failing;  // "int16, int64: UNIMPLEMENTED_XFAILLIST unimplemented; ..."
  std::vector<KnownBugNote> known_bugs;
};

// "pytorch-154881 (a crash under a condition: rank 5 or more; fixed in 2.14.0)" (the id linked by `link`)
std::string bugs_text(const Row& r, const std::function<std::string(const KnownBugNote&)>& link) {
  std::vector<std::string> parts;
  for (const auto& b : r.known_bugs) parts.push_back(known_bug_brief(b, link(b)));
  return fmt::format("{}", fmt::join(parts, "; "));
}

// Rows per tier, each tier by operator name.
std::map<OpTier, std::vector<Row>> coverage_rows(const emu::Timeline& t, const CoreOps& core) {
  std::map<OpTier, std::vector<Row>> rows;
  for (const auto& o : t.ops) {
    Row r;
    r.op = o.op;
    for (size_t i = 0; i < t.releases.size(); ++i) r.cells.push_back(cell(o.status[i], o.partial[i]));
    r.native_since = since_text(since_range(t.releases, o.native_since));
    r.works_since = since_text(since_range(t.releases, o.works_since));
    std::vector<std::string> parts;
    for (const auto& [list, dtypes] : o.still_failing) {
      parts.push_back(
          fmt::format("{}: {}", dtypes.count("*") ? "every dtype" : fmt::format("{}", fmt::join(dtypes, ", ")), list));
    }
    r.still_failing = fmt::format("{}", fmt::join(parts, "; "));
    r.known_bugs = o.known_bugs;
    rows[op_tier(o.op, core)].push_back(std::move(r));
  }
  return rows;
}

// Per tier and release: how many operators are native, composite, fall back, and of those on MPS, partial.
struct Counts {
  size_t native = 0, composite = 0, falls_back = 0, partial = 0;
};
std::string counts_text(const Counts& c) {
  return fmt::format("{} native, {} composite, {} fall back; {} partial", c.native, c.composite, c.falls_back,
                     c.partial);
}
std::vector<Counts> count_cells(const std::vector<Row>& rows, size_t releases) {
  std::vector<Counts> out(releases);
  for (const auto& r : rows) {
    for (size_t i = 0; i < releases; ++i) {
      const Cell& c = r.cells[i];
      if (c.serves == Serves::kNative) ++out[i].native;
      if (c.serves == Serves::kComposite) ++out[i].composite;
      if (c.serves == Serves::kFallsBack) ++out[i].falls_back;
      if (c.partial && c.serves != Serves::kAbsent) ++out[i].partial;
    }
  }
  return out;
}

// The header paragraph: what the columns mean and what the data rests on. `code` wraps a name as the format does.
// `text` escapes a name as the format needs, `code` also shows it as code.
std::string about(const emu::Timeline& t, const CoreOps& core, std::string (*text)(const std::string&),
                  std::string (*code)(const std::string&)) {
  const std::string newest = t.releases.empty() ? "" : text(t.releases.back());
  std::vector<std::string> releases;
  for (const auto& r : t.releases) releases.push_back(text(r));
  const std::string core_words = core.release.empty()
                                     ? "none of the shipped releases tags any operator " + code("core")
                                     : fmt::format("the {} operators that {}'s native_functions.yaml tags {}",
                                                   core.ops.size(), text(core.release), code("core"));
  return fmt::format(
      "Every operator of the PyTorch releases shipped in {} ({}) and how each runs on Apple's MPS backend, release "
      "by release. A release's column says what its registry gives the MPS dispatch key: native (an MPS kernel of "
      "its own), composite (it decomposes into other operators, which may fall back themselves), falls back (no MPS "
      "kernel, or one that always calls the CPU fallback: it runs on the CPU with PYTORCH_ENABLE_MPS_FALLBACK=1 and "
      "fails without), \u2014 (not in that release); partial: that release's own MPS test lists expect it to fail in "
      "some dtypes. Native since and works since (it runs on MPS without the CPU fallback, and the lists expect no "
      "failure in float32) are ranges of the shipped releases: after A, by B holds in B and not in A, the shipped "
      "release before it; by A holds in the oldest one already. Then the dtypes {}'s lists still expect to fail, "
      "and the list that says so ({} gives every dtype's own range), and the known MPS bugs of the ledger "
      "(data/mps_known_bugs.yaml) that name the operator, each with the input that triggers it and the release that "
      "fixed it. All of it rests on each "
      "release's native_functions.yaml with its hand-registered MPS kernels, and on PyTorch's own MPS test lists "
      "read for macOS {}; none of it on a run on a Mac. The Core ATen operators ({}) come first, then the other "
      "public operators, the internal ones (a name starting with _) and those that exist only for PyTorch's tests. "
      "Regenerated by {} from the code and data/; a test fails while this page differs from what they give.",
      code("data/"), fmt::join(releases, ", "), newest, code("mps-audit timeline --ops REGEX"), t.macos, core_words,
      code("make coverage"));
}

std::string md_text(const std::string& s) {
  return markdown_cell(s, 200);
}
std::string md_code(const std::string& s) {
  return "`" + s + "`";
}
std::string html_text(const std::string& s) {
  return escape_html(s);
}
std::string html_code(const std::string& s) {
  return "<code>" + escape_html(s) + "</code>";
}

}  // namespace

std::string render_coverage_md(const emu::Timeline& t, const CoreOps& core) {
  const std::string newest = t.releases.empty() ? "" : t.releases.back();
  const auto rows = coverage_rows(t, core);
  std::string out = "# How PyTorch's operators run on MPS, release by release\n\n";
  out += about(t, core, md_text, md_code) + "\n\n";

  out += "| operators | count |";
  std::string rule = "| --- | ---: |";
  for (const auto& r : t.releases) {
    out += " " + r + " |";
    rule += " --- |";
  }
  out += "\n" + rule + "\n";
  for (const auto& [tier, list] : rows) {
    out += fmt::format("| [{}](#{}) | {} |", tier_title(tier), to_string(tier), list.size());
    for (const auto& c : count_cells(list, t.releases.size())) out += " " + counts_text(c) + " |";
    out += "\n";
  }

  std::string head = "| operator |";
  rule = "| --- |";
  for (const auto& r : t.releases) {
    head += " " + r + " |";
    rule += " --- |";
  }
  head += fmt::format(" native since | works since | {}'s lists expect to fail | known bugs |\n", newest);
  rule += " --- | --- | --- | --- |\n";
  for (const auto& [tier, list] : rows) {
    out += fmt::format("\n<a id=\"{}\"></a>\n\n## {}: {}\n\n", to_string(tier), tier_title(tier), list.size());
    out += head + rule;
    for (const auto& r : list) {
      out += fmt::format("| `{}` |", r.op);
      for (const auto& c : r.cells) out += " " + c.text() + " |";
      out += fmt::format(" {} | {} | {} | {} |\n", r.native_since, r.works_since, markdown_cell(r.still_failing, 1000),
                         bugs_text(r, [](const KnownBugNote& b) { return fmt::format("[{}]({})", b.id, b.source); }));
    }
  }
  return out;
}

std::string render_coverage_html(const emu::Timeline& t, const CoreOps& core) {
  const std::string newest = t.releases.empty() ? "" : t.releases.back();
  const auto rows = coverage_rows(t, core);
  const std::string title = "How PyTorch's operators run on MPS, release by release";
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
      "<link rel=\"icon\" href=\"data:,\">\n<title>{}</title>\n<style>{}"
      "table.cov{{border-collapse:separate;border-spacing:0;font-size:13px;margin:4px 0 12px}}\n"
      ".cov th,.cov td{{border-bottom:1px solid #eceef1;padding:1px 6px;white-space:nowrap;text-align:left}}\n"
      ".cov thead th{{position:sticky;top:0;background:var(--head);border-bottom:1px solid var(--line);z-index:2}}\n"
      ".cov tbody th{{font-weight:500;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}}\n"
      ".cov td.x{{white-space:normal;color:var(--muted);font-size:12px;min-width:320px}}\n"
      ".cov.sum tbody th{{font-family:inherit;font-size:13px}}\n"
      "p.about{{max-width:1100px}}details>summary h2{{display:inline}}\n"
      "</style>\n</head>\n<body>\n<header><h1>{}</h1></header>\n<main>\n",
      escape_html(title), detail::style_sheet(), escape_html(title));
  out += "<p class=\"about\">" + about(t, core, html_text, html_code) + "</p>\n<ul class=\"legend\">";
  for (const auto& [text, look] :
       {std::pair{"native", Verdict::kPass}, std::pair{"composite", Verdict::kXfail},
        std::pair{"native or composite, partial", Verdict::kKnownFailure}, std::pair{"falls back", Verdict::kFallback},
        std::pair{"not in the release", Verdict::kSkip}}) {
    out += fmt::format("<li><span class=\"sw v{}\">&nbsp;</span>{}</li>", verdict_index(look), text);
  }
  out += "</ul>\n<table class=\"cov sum\"><thead><tr><th>operators</th><th>count</th>";
  for (const auto& r : t.releases) out += "<th>" + escape_html(r) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& [tier, list] : rows) {
    out +=
        fmt::format("<tr><th><a href=\"#{}\">{}</a></th><td>{}</td>", to_string(tier), tier_title(tier), list.size());
    for (const auto& c : count_cells(list, t.releases.size())) out += "<td>" + counts_text(c) + "</td>";
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";

  std::string head = "<thead><tr><th>operator</th>";
  for (const auto& r : t.releases) head += "<th>" + escape_html(r) + "</th>";
  head += fmt::format(
      "<th>native since</th><th>works since</th><th>{}'s lists expect to fail</th><th>known bugs</th></tr></thead>",
      escape_html(newest));
  for (const auto& [tier, list] : rows) {
    // The internal and test operators are many and matter to few: collapsed.
    const bool collapsed = tier == OpTier::kInternal || tier == OpTier::kTest;
    const std::string heading =
        fmt::format("<h2 id=\"{}\">{}: {}</h2>", to_string(tier), tier_title(tier), list.size());
    out += collapsed ? "<details><summary>" + heading + "</summary>\n" : heading + "\n";
    out += "<table class=\"cov\">" + head + "<tbody>\n";
    for (const auto& r : list) {
      out += "<tr><th>" + escape_html(r.op) + "</th>";
      for (const auto& c : r.cells) out += fmt::format("<td class=\"v{}\">{}</td>", verdict_index(c.look()), c.text());
      out += fmt::format("<td>{}</td><td>{}</td><td class=\"x\">{}</td><td class=\"x\">{}</td></tr>\n", r.native_since,
                         r.works_since, escape_html(r.still_failing), bugs_text(r, [](const KnownBugNote& b) {
                           return fmt::format("<a href=\"{}\">{}</a>", escape_html(b.source), escape_html(b.id));
                         }));
    }
    out += "</tbody></table>\n";
    if (collapsed) out += "</details>\n";
  }
  out +=
      "</main>\n<footer>Written by <code>mps-audit coverage</code> (<code>make coverage</code>) from the release "
      "data in <code>data/</code>; the page is self-contained and fetches nothing.</footer>\n</body></html>\n";
  return out;
}

}  // namespace mps_audit
