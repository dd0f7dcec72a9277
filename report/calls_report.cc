// The reports of a program's replay (model/calls_replay.h): model.json, model.md, model.html and the terminal lines,
// each a pure function of the CallsAudit (model_reports.h).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "emu/expectations.h"
#include "report/model_reports.h"
#include "report/renderers.h"

namespace mps_audit {
namespace {

double share(double part, double whole) {
  return whole > 0 ? part / whole : 0;
}

std::string percent(double part, double whole) {
  return fmt::format("{:.1f}%", 100 * share(part, whole));
}

std::string bytes_text(int64_t b) {
  if (b >= (int64_t{1} << 30)) return fmt::format("{:.1f} GiB", b / double(int64_t{1} << 30));
  if (b >= (int64_t{1} << 20)) return fmt::format("{:.1f} MiB", b / double(int64_t{1} << 20));
  if (b >= 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", b);
}

std::string program_text(const CallsFile& f) {
  return f.program.empty() ? f.path : fmt::format("{}", fmt::join(f.program, " "));
}

// A replayed call's status in model.json: its record's (call_status()), or "not_judged" where the replay could not
// judge it.
std::string replayed_status(const ReplayedCall& c) {
  return c.not_judged ? "not_judged" : call_status(c.verdict, c.probed);
}

// How a status reads in a report.
std::string status_text(const ReplayedCall& c) {
  const std::string s = replayed_status(c);
  if (s == "fallback") return "falls back";
  if (s == "known_failure") return "failed, as expected";
  if (s == "crash") return "crashed";
  if (s == "timeout") return "hung";
  if (s == "not_probed") return "not probed";
  if (s == "not_judged") return "not judged";
  return s;
}

bool fails(const ReplayedCall& c) {
  return c.probed && c.verdict != Verdict::kPass && c.verdict != Verdict::kXpass;
}

// Worth a row among the problems: it falls back or fails here, or PyTorch expects it to fail on a real Mac.
bool trouble(const ReplayedCall& c) {
  return fails(c) || c.expected_failure;
}

// Any entry of a failure kind, flaky ones too, then the known bugs its op x dtype meets or may meet, with the release
// that fixed each.
std::string expectation_text(const ReplayedCall& c) {
  std::vector<std::string> parts;
  if (c.expectation && emu::is_failure_kind(c.expectation->kind)) {
    const ExpectationNote& n = *c.expectation;
    parts.push_back(fmt::format("{}{} ({}, PyTorch {})", n.kind, n.scope == "forward" ? "" : " (" + n.scope + ")",
                                n.list, n.release));
  }
  for (const auto& b : c.known_bugs) {
    // Note [Known bugs a call meets]: a bug met outside the releases the ledger places it in is said so.
    const char* how = b.applies ? "meets"
                      : b.maybe ? "may meet"
                                : "meets, outside the releases the ledger places it in,";
    parts.push_back(fmt::format("{} {} ({} when {}: {}; {})", how, b.id, b.kind, b.when, b.met_by, fixed_words(b)));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string cpu_or_why(const ReplayedCall& c) {
  if (!c.fallback_ops.empty()) return fmt::format("{}", fmt::join(c.fallback_ops, ", "));
  return fails(c) || c.not_judged ? c.message : "";
}

std::string headline(const CallsAudit& a) {
  return fmt::format(
      "{} of {} replayed operator calls ({}) fall back to the CPU, {} of the recorded operator time; {} fail on the "
      "target; PyTorch's own MPS test lists and the known MPS bugs expect {} to fail on a real Mac{}{}",
      a.fallback_calls, a.probed_calls, percent(a.fallback_calls, a.probed_calls),
      percent(a.fallback_seconds, a.seconds), a.failed_calls, a.expected_failures,
      a.known_bug_calls ? fmt::format(" ({} of them meet a known bug)", a.known_bug_calls) : "",
      a.flaky_calls ? fmt::format(" (and note {} more as flaky)", a.flaky_calls) : "");
}

std::string incomplete_line(const CallsAudit& a) {
  if (a.file.complete) return "";
  return fmt::format(
      "The recording is incomplete: the program failed under the recorder ({}); only the calls it "
      "made until then are here.",
      a.file.error.empty() ? "no reason given" : a.file.error);
}

// The calls of one operator and dtype at one line of the program.
struct SiteOp {
  const CallSite* site = nullptr;
  const ReplayedCall* first = nullptr;  // the verdict is its op x dtype's, the same for each
  int64_t calls = 0;
  std::set<std::string> phases;
  std::string phases_text() const { return fmt::format("{}", fmt::join(phases, ", ")); }
};

// Per site (worst first), its operators and dtypes: all of them, or only those in trouble.
std::vector<SiteOp> site_ops(const CallsAudit& a, bool only_trouble) {
  std::vector<SiteOp> out;
  for (const CallSite& s : a.sites) {
    std::map<std::pair<std::string, std::string>, size_t> at;
    for (size_t i : s.replayed) {
      const ReplayedCall& c = a.calls[i];
      if (only_trouble && !trouble(c)) continue;
      const auto [pos, fresh] = at.emplace(std::make_pair(c.call.op, c.call.dtype), out.size());
      if (fresh) out.push_back({&s, &c, 0, {}});
      SiteOp& row = out[pos->second];
      row.calls += c.call.calls_at(s.site);
      for (const auto& [phase, n] : c.call.sites.at(s.site)) row.phases.insert(phase);
    }
  }
  return out;
}

// A test suite's recording (Note [A test suite's calls]): per test, phase of the test and site, each operator and
// dtype in trouble, in the order of the tests' names.
struct TestRow {
  std::string test, when, site;
  const ReplayedCall* call = nullptr;
  int64_t calls = 0;
};

std::vector<TestRow> test_rows(const CallsAudit& a, std::set<std::string>& tests, std::set<std::string>& in_trouble) {
  std::map<std::tuple<std::string, int, std::string, std::string, std::string>, TestRow> rows;
  for (const ReplayedCall& c : a.calls) {
    for (const auto& [test, phases] : c.call.tests) {
      tests.insert(test);
      if (!trouble(c)) continue;
      in_trouble.insert(test);
      for (const auto& [when, sites] : phases) {
        const int order = when == "setup" ? 0 : when == "call" ? 1 : 2;
        for (const auto& [site, n] : sites) {
          TestRow& r = rows[{test, order, site, c.call.op, c.call.dtype}];
          if (!r.call) r = {test, when, site, &c, 0};
          r.calls += n;
        }
      }
    }
  }
  std::vector<TestRow> out;
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  return out;
}

std::string code_at(const CallsAudit& a, const std::string& site) {
  const auto it = a.file.sources.find(site);
  return it == a.file.sources.end() ? "" : it->second;
}

}  // namespace

std::string call_status(Verdict v, bool probed) {
  if (!probed) return "not_probed";
  switch (v) {
    case Verdict::kPass:
    case Verdict::kXpass: return "native";
    case Verdict::kFallback: return "fallback";
    case Verdict::kUnsupported: return "refused";
    case Verdict::kMismatch: return "wrong";
    case Verdict::kKnownFailure:
    case Verdict::kXfail: return "known_failure";
    case Verdict::kError: return "error";
    case Verdict::kCrash: return "crash";
    case Verdict::kTimeout: return "timeout";
    case Verdict::kSkip: return "not_probed";
  }
  return "not_probed";
}

std::string render_calls_json(const CallsAudit& a) {
  nlohmann::json doc = results_document(a.results);
  doc["program"] = {{"command", a.file.program}, {"file", a.file.path},
                    {"torch", a.file.torch},     {"complete", a.file.complete},
                    {"error", a.file.error},     {"seconds", a.file.seconds},
                    {"calls", a.file.total},     {"distinct_calls", a.file.calls.size()},
                    {"not_kept", a.file.dropped}};
  nlohmann::json calls = nlohmann::json::array();
  for (const ReplayedCall& c : a.calls) {
    calls.push_back({{"index", c.call.index},
                     {"op", c.call.op},
                     {"dtype", c.call.dtype},
                     {"count", c.call.count},
                     {"seconds", c.call.seconds},
                     {"phases", c.call.phases},
                     {"sites", c.call.sites},
                     {"in_bytes", c.call.in_bytes},
                     {"out_bytes", c.call.out_bytes},
                     {"status", replayed_status(c)},
                     {"fallback_ops", c.fallback_ops},
                     {"message", c.message},
                     {"decided", c.decided},
                     {"expected_failure", c.expected_failure},
                     {"expectation", c.expectation ? to_json(*c.expectation) : nlohmann::json()}});
    if (!c.known_bugs.empty()) {
      nlohmann::json bugs = nlohmann::json::array();
      for (const auto& b : c.known_bugs) bugs.push_back(to_json(b));
      calls.back()["known_bugs"] = std::move(bugs);
    }
    if (!c.call.recorded_as.empty()) calls.back()["recorded_as"] = c.call.recorded_as;
    if (!c.call.tests.empty()) calls.back()["tests"] = c.call.tests;
  }
  doc["calls"] = std::move(calls);
  nlohmann::json sites = nlohmann::json::array();
  for (const CallSite& s : a.sites) {
    std::vector<size_t> indices;
    for (size_t i : s.replayed) indices.push_back(a.calls[i].call.index);
    sites.push_back({{"site", s.site},
                     {"code", s.code},
                     {"calls", s.calls},
                     {"status", call_status(s.worst, s.worst != Verdict::kSkip)},
                     {"call_indices", indices}});
  }
  doc["sites"] = std::move(sites);
  doc["totals"] = {{"calls", a.file.total},
                   {"probed_calls", a.probed_calls},
                   {"fallback_calls", a.fallback_calls},
                   {"fallback_call_share", share(a.fallback_calls, a.probed_calls)},
                   {"failed_calls", a.failed_calls},
                   {"expected_failures", a.expected_failures},
                   {"flaky_calls", a.flaky_calls},
                   {"known_bug_calls", a.known_bug_calls},
                   {"seconds", a.seconds},
                   {"fallback_seconds", a.fallback_seconds},
                   {"fallback_time_share", share(a.fallback_seconds, a.seconds)},
                   {"bytes_to_cpu", a.bytes_to_cpu},
                   {"bytes_from_cpu", a.bytes_from_cpu},
                   {"not_probed", a.not_probed}};
  return doc.dump(1) + "\n";
}

std::string render_calls_markdown(const CallsAudit& a) {
  std::string s = fmt::format("# Replay of `{}`\n\nOn **{}**; recorded with torch {}.\n\n**{}.** ",
                              markdown_cell(program_text(a.file)), where_it_ran(a.results.environment),
                              a.file.torch.empty() ? "?" : a.file.torch, headline(a));
  s += fmt::format("The calls that fall back would move about {} to the CPU and {} back.\n", bytes_text(a.bytes_to_cpu),
                   bytes_text(a.bytes_from_cpu));
  if (!a.file.complete) s += "\n> " + markdown_cell(incomplete_line(a), 1000) + "\n";
  std::string rows;
  for (const SiteOp& r : site_ops(a, /*only_trouble=*/true)) {
    rows += fmt::format("| `{}` | `{}` | `{}` | {} | {} | {} | {} | {} | {} |\n", r.site->site,
                        markdown_cell(r.site->code, 120), r.first->call.op, r.first->call.dtype, r.phases_text(),
                        r.calls, status_text(*r.first), markdown_cell(cpu_or_why(*r.first)),
                        markdown_cell(expectation_text(*r.first)));
  }
  s += "\n## Where the program falls back or fails\n\n";
  s += rows.empty() ? "Nothing: every replayed call runs natively on the target, and PyTorch's lists expect none "
                      "to fail.\n"
                    : "| where | code | operator | dtype | phase | calls | result | ran on the CPU, or why | "
                      "expected on a real Mac |\n| --- | --- | --- | --- | --- | ---: | --- | --- | --- |\n" +
                          rows;
  std::set<std::string> tests, in_trouble;
  const std::vector<TestRow> by_test = test_rows(a, tests, in_trouble);
  if (!tests.empty()) {
    s += fmt::format(
        "\n## By test\n\n{} of the {} tests that made ATen calls made one that falls back or fails here, or "
        "that PyTorch's lists expect to fail on a real Mac.\n",
        in_trouble.size(), tests.size());
    if (!by_test.empty()) {
      s += "\n| test | phase | where | code | operator | dtype | calls | result | ran on the CPU, or why | expected "
           "on a real Mac |\n| --- | --- | --- | --- | --- | --- | ---: | --- | --- | --- |\n";
    }
    for (const TestRow& r : by_test) {
      s += fmt::format("| {} | {} | `{}` | `{}` | `{}` | {} | {} | {} | {} | {} |\n", markdown_cell(r.test, 200),
                       r.when, r.site, markdown_cell(code_at(a, r.site), 120), r.call->call.op, r.call->call.dtype,
                       r.calls, status_text(*r.call), markdown_cell(cpu_or_why(*r.call)),
                       markdown_cell(expectation_text(*r.call)));
    }
  }
  // Per operator and dtype: what each record says, and how often and where the program called it.
  struct OpRow {
    int64_t calls = 0;
    double seconds = 0;
    std::set<std::string> sites;
    const ReplayedCall* first = nullptr;
  };
  std::map<std::pair<std::string, std::string>, OpRow> ops;
  for (const ReplayedCall& c : a.calls) {
    OpRow& r = ops[{c.call.op, c.call.dtype}];
    r.calls += c.call.count;
    r.seconds += c.call.seconds;
    for (const auto& [site, phases] : c.call.sites) r.sites.insert(site);
    if (!r.first) r.first = &c;
  }
  std::vector<std::pair<std::pair<std::string, std::string>, OpRow>> ordered(ops.begin(), ops.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& x, const auto& y) {
    if (trouble(*x.second.first) != trouble(*y.second.first)) return trouble(*x.second.first);
    return x.second.calls > y.second.calls;
  });
  s += "\n## By operator\n\n| operator | dtype | calls | time (s) | result | ran on the CPU, or why | expected on a "
       "real Mac | where |\n| --- | --- | ---: | ---: | --- | --- | --- | --- |\n";
  for (const auto& [key, r] : ordered) {
    s += fmt::format("| `{}` | {} | {} | {:.6f} | {} | {} | {} | {} |\n", key.first, key.second, r.calls, r.seconds,
                     status_text(*r.first), markdown_cell(cpu_or_why(*r.first)),
                     markdown_cell(expectation_text(*r.first)),
                     markdown_cell(fmt::format("{}", fmt::join(r.sites, ", ")), 200));
  }
  if (!a.not_probed.empty() || !a.file.dropped.empty()) {
    s += "\n## Not replayed, or not judged\n\n";
    for (const auto& [why, n] : a.not_probed) s += fmt::format("- {} call(s): {}\n", n, markdown_cell(why));
    for (const auto& [why, n] : a.file.dropped) {
      s += fmt::format("- {} call(s) the recorder could not keep: {}\n", n, markdown_cell(why));
    }
  }
  s += fmt::format(
      "\nEach distinct call was replayed on the CPU and the target; a call's result is its operator and dtype's over "
      "all of the program's calls of it (the worst decides). {} calls recorded ({} distinct) in {:.2f} s. torch {} "
      "on {}.\n",
      a.file.total, a.file.calls.size(), a.file.seconds, a.results.environment.torch_version, a.results.environment.os);
  return s;
}

std::string render_calls_html(const CallsAudit& a) {
  std::string s = model_page_head("Program replay");
  s += fmt::format(
      "<h1>Replay of <code>{}</code></h1>\n<p>On <b>{}</b>; recorded with torch {}.</p>\n<p><b>{}</b>. "
      "The calls that fall back would move about {} to the CPU and {} back.</p>\n",
      escape_html(program_text(a.file)), escape_html(where_it_ran(a.results.environment)), escape_html(a.file.torch),
      escape_html(headline(a)), bytes_text(a.bytes_to_cpu), bytes_text(a.bytes_from_cpu));
  if (!a.file.complete) s += "<p><b>" + escape_html(incomplete_line(a)) + "</b></p>\n";
  s += "<table><tr><th>where</th><th>code</th><th>operator</th><th>dtype</th><th>phase</th><th>calls</th>"
       "<th>result</th><th>ran on the CPU, or why</th><th>expected on a real Mac</th></tr>\n";
  for (const SiteOp& r : site_ops(a, /*only_trouble=*/false)) {
    const ReplayedCall& c = *r.first;
    s += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
        !trouble(c)                       ? ""
        : c.verdict == Verdict::kFallback ? "fallback"
                                          : "failed",
        escape_html(r.site->site), escape_html(r.site->code), escape_html(c.call.op), c.call.dtype, r.phases_text(),
        r.calls, escape_html(status_text(c)), escape_html(cpu_or_why(c)), escape_html(expectation_text(c)));
  }
  s += "</table>\n";
  std::set<std::string> tests, in_trouble;
  const std::vector<TestRow> by_test = test_rows(a, tests, in_trouble);
  if (!tests.empty()) {
    s += fmt::format(
        "<h2>By test</h2>\n<p>{} of the {} tests that made ATen calls made one that falls back or fails here, or that "
        "PyTorch's lists expect to fail on a real Mac.</p>\n",
        in_trouble.size(), tests.size());
    if (!by_test.empty()) {
      s += "<table><tr><th>test</th><th>phase</th><th>where</th><th>code</th><th>operator</th><th>dtype</th>"
           "<th>calls</th><th>result</th><th>ran on the CPU, or why</th><th>expected on a real Mac</th></tr>\n";
      for (const TestRow& r : by_test) {
        const ReplayedCall& c = *r.call;
        s += fmt::format(
            "<tr "
            "class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td>"
            "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
            c.verdict == Verdict::kFallback ? "fallback" : "failed", escape_html(r.test), r.when, escape_html(r.site),
            escape_html(code_at(a, r.site)), escape_html(c.call.op), c.call.dtype, r.calls, escape_html(status_text(c)),
            escape_html(cpu_or_why(c)), escape_html(expectation_text(c)));
      }
      s += "</table>\n";
    }
  }
  s += "</body></html>\n";
  return s;
}

std::string render_calls_summary(const CallsAudit& a) {
  std::string s = fmt::format("{}: {} calls ({} distinct) replayed on {}\n{}\n", program_text(a.file), a.file.total,
                              a.file.calls.size(), where_it_ran(a.results.environment), headline(a));
  if (!a.file.complete) s += incomplete_line(a) + "\n";
  const std::vector<SiteOp> rows = site_ops(a, /*only_trouble=*/true);
  for (size_t i = 0; i < rows.size() && i < 10; ++i) {
    const ReplayedCall& c = *rows[i].first;
    s += fmt::format("  {} {} ({}, {}): {}{}{}\n", rows[i].site->site, c.call.op, c.call.dtype, rows[i].phases_text(),
                     status_text(c),
                     c.fallback_ops.empty() ? "" : fmt::format(" ({} on the CPU)", fmt::join(c.fallback_ops, ", ")),
                     c.expected_failure ? "; expected to fail on a real Mac: " + expectation_text(c) : "");
  }
  if (rows.size() > 10) s += fmt::format("  and {} more (model.md)\n", rows.size() - 10);
  return s;
}

}  // namespace mps_audit
