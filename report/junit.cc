// results.junit.xml: one testcase per op x dtype, one testsuite per operator group, in the JUnit XML that CI
// systems read (the Ant/Surefire schema: testsuites > testsuite > testcase with failure, skipped, system-out).
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/renderers.h"
#include "results/analysis.h"

namespace mps_audit {
namespace {

enum class Outcome { kPass, kFailure, kSkipped };

Outcome outcome(Verdict v, bool strict) {
  switch (v) {
    case Verdict::kMismatch:
    case Verdict::kError:
    case Verdict::kCrash:
    case Verdict::kTimeout: return Outcome::kFailure;
    case Verdict::kUnsupported:
    case Verdict::kFallback:
    case Verdict::kXpass: return strict ? Outcome::kFailure : Outcome::kPass;
    case Verdict::kSkip:
    case Verdict::kXfail:
    case Verdict::kKnownFailure: return Outcome::kSkipped;
    case Verdict::kPass: return Outcome::kPass;
  }
  return Outcome::kFailure;
}

std::string details(const ProbeResult& r) {
  std::string text = fmt::format("verdict: {}\n", to_string(r.verdict));
  if (!r.message.empty()) text += "message: " + r.message + "\n";
  if (!r.fallback_ops.empty()) text += fmt::format("ran on the CPU: {}\n", fmt::join(r.fallback_ops, ", "));
  if (!r.sample.empty()) text += "sample: " + r.sample + "\n";
  if (r.mismatches > 0) {
    text += fmt::format("max abs error {:g}, max rel error {:g}, {} elements differ, first at {}\n", r.max_abs_error,
                        r.max_rel_error, r.mismatches, r.first_mismatch);
  }
  if (!r.registry_status.empty()) text += "registry: " + r.registry_status + "\n";
  for (const auto& w : r.warnings) text += "warning: " + w + "\n";
  return text;
}

}  // namespace

std::string render_junit(const Results& results, const RenderOptions& options) {
  struct Suite {
    std::string cases;
    size_t tests = 0, failures = 0, skipped = 0;
    double seconds = 0;
  };
  std::map<std::string_view, Suite> suites;
  for (const auto& r : results.records) {
    Suite& s = suites[op_group(r.op)];
    ++s.tests;
    s.seconds += r.seconds;
    const Outcome o = outcome(r.verdict, options.strict);
    s.cases += fmt::format(R"(  <testcase classname="mps-audit.{}" name="{} {}" time="{:.6f}")", op_group(r.op),
                           escape_html(r.op), escape_html(r.dtype), r.seconds);
    const std::string text = escape_html(details(r));
    const std::string first = escape_html(r.message.substr(0, r.message.find('\n')));
    if (o == Outcome::kFailure) {
      ++s.failures;
      s.cases += fmt::format(">\n   <failure type=\"{}\" message=\"{}: {}\">{}</failure>\n  </testcase>\n",
                             to_string(r.verdict), to_string(r.verdict), first, text);
    } else if (o == Outcome::kSkipped) {
      ++s.skipped;
      s.cases += fmt::format(">\n   <skipped message=\"{}: {}\"/>\n  </testcase>\n", to_string(r.verdict), first);
    } else if (r.verdict != Verdict::kPass) {
      s.cases += fmt::format(">\n   <system-out>{}</system-out>\n  </testcase>\n", text);
    } else {
      s.cases += "/>\n";
    }
  }
  size_t tests = 0, failures = 0, skipped = 0;
  double seconds = 0;
  std::string body;
  const RunEnvironment& env = results.environment;
  for (std::string_view group : op_groups()) {
    auto it = suites.find(group);
    if (it == suites.end()) continue;
    const Suite& s = it->second;
    tests += s.tests;
    failures += s.failures;
    skipped += s.skipped;
    seconds += s.seconds;
    body += fmt::format(
        " <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.6f}\">\n"
        "  <properties>\n   <property name=\"target\" value=\"{}\"/>\n   <property name=\"torch\" value=\"{}\"/>\n"
        "  </properties>\n{} </testsuite>\n",
        group, s.tests, s.failures, s.skipped, s.seconds, escape_html(where_it_ran(env)),
        escape_html(env.torch_version), s.cases);
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"mps-audit: {}\" tests=\"{}\" failures=\"{}\" "
      "errors=\"0\" skipped=\"{}\" time=\"{:.6f}\">\n{}</testsuites>\n",
      escape_html(where_it_ran(env)), tests, failures, skipped, seconds, body);
}

}  // namespace mps_audit
