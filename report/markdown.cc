// results.md: for PR comments and $GITHUB_STEP_SUMMARY. Sections in order of what a reader needs first; each
// table fills what is left of the size limit, and says how many rows it left out.
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/text.h"
#include "report/markdown_writer.h"
#include "report/renderers.h"
#include "results/analysis.h"

namespace mps_audit {
namespace {

// The rows a long table shows (failures by message or operator, conditional failures, fallback operators, notes):
// enough to read, few enough that every section after it fits the page's limit; every row is in results.json.
constexpr size_t kLongTableRows = 15;

std::string percent(size_t k, size_t n) {
  return n == 0 ? "0.0%" : fmt::format("{:.1f}%", 100.0 * static_cast<double>(k) / static_cast<double>(n));
}

// "| ... | float32 | float16 |" and "| ... | :-: | :-: |": a matrix's header and rule, from the fixed columns'.
std::string matrix_head(const std::string& fixed_head, const std::string& fixed_rule,
                        const std::vector<std::string>& dtypes, const std::string& last_head = "",
                        const std::string& last_rule = "") {
  std::string head = fixed_head, rule = fixed_rule;
  for (const auto& d : dtypes) {
    head += " " + d + " |";
    rule += " :-: |";
  }
  return head + last_head + "\n" + rule + last_rule + "\n";
}

std::string legend() {
  std::string out = "Legend:";
  for (Verdict v : kAllVerdicts) out += fmt::format(" {} {} ·", verdict_symbol(v), to_string(v));
  out.pop_back();
  out.pop_back();
  return out + "\n";
}

// Note [Stale entries, ready to report]
// On a real Mac, a pass where PyTorch's lists expect a failure (xpass) is evidence that the lists are stale. They are
// grouped by the list entry (its OpInfo name and line), with the dtypes that passed in the form the lists write them,
// so that the section can go into an issue or a pull request against the file as it is.
void add_stale_entries(MarkdownWriter& w, const Results& results) {
  struct Entry {
    std::string release, list, opinfo, source, kind;
    std::set<std::string> dtypes, ops;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Entry> entries;  // by list, source and OpInfo
  for (const auto& r : results.records) {
    if (r.verdict != Verdict::kXpass || !r.expectation) continue;
    const ExpectationNote& n = *r.expectation;
    Entry& e = entries[{n.list, n.source, n.opinfo}];
    e.release = n.release;
    e.list = n.list;
    e.opinfo = n.opinfo;
    e.source = n.source;
    e.kind = n.kind;
    e.dtypes.insert("torch." + r.dtype);
    e.ops.insert(r.op);
  }
  if (entries.empty()) return;
  const RunEnvironment& env = results.environment;
  w.add(fmt::format(
      "\n## PyTorch's lists look stale: {} entries\n\nThese op x dtype pairs passed on {} (macOS {}, libtorch {}), "
      "though PyTorch {}'s own MPS test lists expect them to fail. Ready to report upstream:\n\n```python\n",
      entries.size(), env.device, env.expectations_macos, env.torch_version, env.expectations_release));
  std::string list;
  for (const auto& [key, e] : entries) {
    if (e.list != list) w.add(fmt::format("# {} (PyTorch {}): expected {}, but passes\n", e.list, e.release, e.kind));
    list = e.list;
    w.add(fmt::format("\"{}\": [{}],  # {}: passed as {}\n", e.opinfo, fmt::join(e.dtypes, ", "), e.source,
                      fmt::join(e.ops, ", ")));
  }
  w.add("```\n");
}

std::vector<std::string> evidence_rows(const std::vector<EvidenceRow>& rows) {
  std::vector<std::string> out;
  for (const auto& e : rows) {
    out.push_back(fmt::format(
        "| {} | {} | {} | {} |\n", e.link.empty() ? e.key : fmt::format("[{}]({})", e.key, e.link), e.records,
        markdown_cell(e.detail, 200), markdown_cell(fmt::format("{}", fmt::join(e.examples, ", ")), 160)));
  }
  return out;
}

// Note [Evidence apart]
// A known failure is a prediction, and says what it rests on: PyTorch's own lists, or a known bug of the ledger with
// its thread; the failures the target showed are counted beside them. What decided nothing (flaky entries, entries
// about some inputs, known bugs no sample met) is listed apart, as notes, never among the failures.
void add_evidence(MarkdownWriter& w, const Evidence& e) {
  const std::string head = "| evidence | op x dtype | what | for example |\n| --- | ---: | --- | --- |\n";
  if (!e.lists.empty() || !e.bugs.empty()) {
    w.add(
        fmt::format("\n## What the known failures rest on\n\n{} failures were observed on the target itself; these "
                    "rest on evidence of real Macs:\n\n",
                    e.observed));
    w.table(head, evidence_rows(e.lists), "PyTorch's lists");
    if (!e.bugs.empty())
      w.table("\nKnown MPS bugs (data/mps_known_bugs.yaml):\n\n" + head, evidence_rows(e.bugs), "known bugs");
  }
  if (!e.conditional.empty()) {
    w.add(
        "\n## Known bugs met under a condition\n\nA sample met each bug's condition; the records keep their "
        "verdicts, and list it as a conditional failure.\n\n");
    w.table(head, evidence_rows(e.conditional), "conditional bugs");
  }
  if (!e.looks_fixed.empty()) {
    w.add(
        "\n## Known bugs that look fixed: confirm and close\n\nA sample met each bug's condition here and passed.\n\n");
    w.table(head, evidence_rows(e.looks_fixed), "fixed bugs");
  }
}

// Evidence that decided no verdict: after the failures, which a reader looks for first, so that a long list of notes
// (1.13.1's lists call a thousand pairs flaky or not seen passing) never crowds them out of the page's limit.
void add_notes(MarkdownWriter& w, const Evidence& e) {
  if (e.annotations.empty()) return;
  w.add("\n## Notes, not verdicts\n\nEvidence that decided no verdict: each record carries it in results.json.\n\n");
  w.table("| evidence | op x dtype | what | for example |\n| --- | ---: | --- | --- |\n", evidence_rows(e.annotations),
          "notes", kLongTableRows);
}

// The title, what a reader must know before the figures (an emulated target, probes the linked libtorch cannot run,
// an incomplete run), the setting, and what PyTorch's lists were used for.
void add_heading(MarkdownWriter& w, const Results& results, const Analysis& a) {
  const RunEnvironment& env = results.environment;
  w.add(fmt::format("# mps-audit: {}\n\n", where_it_ran(env)));
  if (!env.emulator.empty()) {
    w.add(fmt::format(
        "> [!NOTE]\n> These results come from {}, not from a real Mac: kernels are those the release registers "
        "for MPS, numbers are the CPU's.\n\n",
        env.emulator));
  }
  // A reader of the summary must see why so much was not probed (Note [Kernels the linked libtorch lacks] in
  // emu/linked_gaps.cc).
  if (const auto it = a.skip_reasons.find("linked_libtorch"); it != a.skip_reasons.end()) {
    w.add(fmt::format(
        "> [!NOTE]\n> {} op x dtype pairs are not probed: libtorch {} cannot show what the emulated release does "
        "there (`skip_reason` `linked_libtorch`, docs/emulator.md). A build against the release's own libtorch probes "
        "them.\n\n",
        it->second, env.torch_version));
  }
  const RunProgress& p = results.run;
  if (!p.complete()) {
    w.add(fmt::format(
        "> [!WARNING]\n> **Incomplete run**{}: {} of {} planned probes finished, {} not run. The tables below "
        "cover only what finished.\n\n",
        p.interrupted.empty() ? "" : " (stopped by " + p.interrupted + ")", p.finished, p.planned, p.not_run()));
  }
  w.add(fmt::format("libtorch {} on {}; `PYTORCH_ENABLE_MPS_FALLBACK` {}; spec `{}`{}.\n\n", env.torch_version, env.os,
                    env.fallback_mode == "on" ? "set" : "unset", env.spec,
                    p.shard.empty() ? "" : "; shard " + p.shard));

  if (const std::string e = expectations_sentence(results); !e.empty()) {
    w.add(fmt::format("Expectations: {}.{}\n\n", e,
                      env.expectations_mode == "check"
                          ? ""
                          : " What the emulator cannot reproduce is `known_failure`, never a pass: each such record "
                            "keeps what the emulator saw (`observed`) and cites the list's entry"));
  }
}

// The run's figures, what it covered by registry status, and the verdicts' shares.
void add_summary(MarkdownWriter& w, const Results& results, const Analysis& a) {
  const RunProgress& p = results.run;
  w.add("## Summary\n\n");
  w.add(fmt::format("{} probes of {} operators in {} dtypes; planned {}, finished {}, lost 0.\n\n", a.counts.total,
                    a.operators, a.dtypes.size(), p.planned, p.finished));
  for (const auto& s : coverage_sentences(results, a)) w.add("- " + s + "\n");
  w.add(fmt::format("\n| verdict | | op x dtype | share of {} |\n| --- | :-: | ---: | ---: |\n", a.counts.total));
  for (Verdict v : kAllVerdicts) {
    w.add(fmt::format("| {} | {} | {} | {} |\n", to_string(v), verdict_symbol(v), a.counts.of(v),
                      percent(a.counts.of(v), a.counts.total)));
  }
}

void add_worst_offenders(MarkdownWriter& w, const Analysis& a) {
  if (a.worst.empty()) return;
  std::vector<std::string> rows;
  for (const auto& o : a.worst) {
    rows.push_back(fmt::format("| {} | `{}` | {} | {} | {} |\n", to_string(o.tier), o.op, to_string(o.worst),
                               o.dtypes.size() == a.dtypes.size() && a.dtypes.size() > 3
                                   ? fmt::format("all {}", a.dtypes.size())
                                   : fmt::format("{}", fmt::join(o.dtypes, ", ")),
                               markdown_cell(o.message, 200)));
  }
  w.add("\n## Worst offenders\n\nThe Core ATen operators first, then other public, internal and test operators.\n\n");
  w.table("| set | operator | verdict | dtypes | message |\n| --- | --- | --- | --- | --- |\n", rows,
          "worst offenders");
}

// One table per operator tier of the operators that fell back.
void add_fallbacks(MarkdownWriter& w, const Analysis& a) {
  if (a.fallbacks.empty()) return;
  w.add(fmt::format(
      "\n## Fall back to the CPU: {} operators, {} op x dtype\n\nOne row per operator, the Core ATen operators "
      "first, then other public, internal and test operators; in each, those falling back in the most dtypes "
      "first. The last column names the operators that ran on the CPU.\n",
      a.fallbacks.size(), a.fallback_records));
  for (OpTier tier : kAllOpTiers) {
    std::vector<std::string> rows;
    for (const auto& f : a.fallbacks) {
      if (f.tier != tier) continue;
      rows.push_back(fmt::format("| `{}` | {} |{} {} |\n", f.op, f.registry_status, verdict_cells(a.dtypes, f.by_dtype),
                                 markdown_cell(fmt::format("{}", fmt::join(f.fallback_ops, ", ")), 200)));
    }
    if (rows.empty()) continue;
    w.add(fmt::format("\n### {}: {}\n\n", tier_title(tier), rows.size()));
    w.table(matrix_head("| operator | registry |", "| --- | --- |", a.dtypes, " ran on the CPU |", " --- |"), rows,
            fmt::format("fallback operators ({})", to_string(tier)), kLongTableRows);
  }
}

// Each failing verdict's failures, by message and by operator, folded.
void add_failures(MarkdownWriter& w, const Analysis& a) {
  if (!a.failures.empty()) w.add("\n## Failures\n\nGrouped by operator and by message; click to open.\n");
  for (const auto& s : a.failures) {
    std::vector<std::string> by_message;
    for (const auto& g : s.by_message) {
      std::vector<std::string> shown(g.items.begin(), g.items.begin() + std::min<size_t>(g.items.size(), 6));
      by_message.push_back(fmt::format("| {} | {} | {}{} |\n", g.items.size(), markdown_cell(g.key, 240),
                                       markdown_cell(fmt::format("{}", fmt::join(shown, ", ")), 200),
                                       g.items.size() > shown.size() ? ", ..." : ""));
    }
    std::vector<std::string> by_operator;
    for (const auto& g : s.by_operator) {
      by_operator.push_back(
          fmt::format("| `{}` | {} | {}{} |\n", g.key, fmt::join(g.items, ", "), markdown_cell(g.detail, 200),
                      g.distinct_messages > 1 ? fmt::format(" (+{} other messages)", g.distinct_messages - 1) : ""));
    }
    const std::string name(to_string(s.verdict));
    w.details(fmt::format("<b>{}</b>: {} op x dtype of {} operators, {} distinct messages", name, s.records,
                          s.by_operator.size(), s.by_message.size()),
              [&] {
                w.table("By message:\n\n| op x dtype | message | for example |\n| ---: | --- | --- |\n", by_message,
                        name + " messages", kLongTableRows);
                w.table("\nBy operator:\n\n| operator | dtypes | message |\n| --- | --- | --- |\n", by_operator,
                        name + " operators", kLongTableRows);
              });
  }
}

// Note [Conditional failures in reports]
// An operator that works for ordinary inputs and fails under a condition is neither a pass nor a failure: its record
// keeps its verdict, and the condition's failure is listed here, apart from the failures and counted apart
// (Note [Conditional failures] in emu/known_bugs.cc): "pass; wrong results under a non-contiguous view at a storage
// offset, pytorch-169342, not known fixed".
std::string conditional_cell(const ConditionalFailure& f) {
  const std::string fixed = f.bug.empty() ? "" : ", " + fixed_words(f.fixed_in, f.fix_candidate);
  const std::string bug = f.bug.empty() ? "" : fmt::format(", [{}]({}){}", f.bug, f.link, fixed);
  return markdown_cell(
             fmt::format("{}; {} under {}{}", to_string(f.verdict), f.failure, f.condition, evidence_words(f)), 240) +
         bug;
}

void add_conditional(MarkdownWriter& w, const Analysis& a) {
  if (a.conditional.empty()) return;
  std::vector<std::string> rows;
  for (const auto& f : a.conditional) {
    rows.push_back(fmt::format("| `{}` | {} | {} | {} |\n", f.op, f.dtype, conditional_cell(f),
                               markdown_cell(!f.summary.empty()  ? f.summary
                                             : f.message.empty() ? f.sample
                                                                 : f.sample + ": " + first_line(f.message),
                                             200)));
  }
  w.add(fmt::format(
      "\n## Conditional failures: {} op x dtype\n\nThese pass (or fall back) for ordinary inputs, and fail under a "
      "condition: a view, a rank, a size, repeated indices, a CPU scalar, or a known bug's own call. They are not "
      "among the failures above; `mps-audit diff --fail-on-conditional` gates on new ones, `run --fail-on conditional` "
      "on any.\n\n",
      a.conditional_records));
  w.table("| operator | dtype | verdict; fails under | what |\n| --- | --- | --- | --- |\n", rows,
          "conditional failures", kLongTableRows);
}

void add_skips(MarkdownWriter& w, const Analysis& a) {
  if (a.counts.of(Verdict::kSkip) == 0) return;
  w.add(
      fmt::format("\n## Skipped: {} op x dtype\n\nNot probed; each op x dtype is in results.json with its reason and "
                  "`skip_reason` (docs/running.md explains them).\n\n| skip_reason | op x dtype |\n| --- | ---: |\n",
                  a.counts.of(Verdict::kSkip)));
  for (std::string_view kind : kSkipReasons) {
    auto it = a.skip_reasons.find(std::string(kind));
    if (it != a.skip_reasons.end()) w.add(fmt::format("| {} | {} |\n", kind, it->second));
  }
  std::vector<std::string> rows;
  for (const auto& [m, k] : a.skip_messages) rows.push_back(fmt::format("| {} | {} |\n", k, markdown_cell(m)));
  w.table("\nThe most common messages:\n\n| op x dtype | message |\n| ---: | --- |\n", rows, "skip messages");
}

// Every operator's verdict in each dtype.
void add_matrix(MarkdownWriter& w, const Results& results, const Analysis& a) {
  std::vector<std::string> rows;
  std::map<std::string, std::map<std::string, Verdict>> matrix;
  std::vector<std::string> ops;
  for (const auto& r : results.records) {
    auto& row = matrix[r.op];
    if (row.empty()) ops.push_back(r.op);
    row[r.dtype] = r.verdict;
  }
  for (const auto& op : ops) {
    rows.push_back(fmt::format("| `{}` | {} |{}\n", op, op_group(op), verdict_cells(a.dtypes, matrix[op])));
  }
  w.add("\n## Operator x dtype\n\n" + legend() + "\n");
  w.table(matrix_head("| operator | group |", "| --- | --- |", a.dtypes), rows, "matrix");
}

}  // namespace

std::string render_markdown(const Results& results, const RenderOptions& options) {
  const Analysis a = analyze(results);
  MarkdownWriter w(
      options.markdown_limit,
      "results.json, and the whole matrix in results.html (`mps-audit render results.json --format html`)");
  add_heading(w, results, a);
  add_summary(w, results, a);
  add_worst_offenders(w, a);
  // Before the long tables: what the known failures rest on is short, and what a reader asks first of a prediction.
  add_evidence(w, a.evidence);
  // What fails before what only runs slower: a long list of fallbacks must not crowd the failures out of the limit.
  add_failures(w, a);
  add_conditional(w, a);
  add_fallbacks(w, a);
  add_notes(w, a.evidence);
  add_stale_entries(w, results);
  add_skips(w, a);
  // The matrix last: it is the largest, and every row of it is in results.html too.
  add_matrix(w, results, a);
  return w.finish();
}

}  // namespace mps_audit
