// Replays a program's recorded calls through the prober: see calls_replay.h.
//
// Note [Replaying a program's calls]
// A recording holds each distinct ATen call once (operator, tensor shapes, dtypes and strides, other arguments), as
// the program made it below autograd: the forward pass's operators after their composite decompositions, autograd's
// backward operators, the optimizer's in-place updates. The replay is an ordinary run of the prober (workers, crash
// and hang isolation, timeouts, the fallback trace, PyTorch's expectations) over just the op x dtype pairs the
// program called, with the calls file as its recorded samples: each pair's probe replays every distinct call of it
// (up to Recordings::samples_per_probe()) on the CPU and the target, and the worst decides, as for any probe. So a
// call's verdict is its operator and dtype's over the program's own inputs, and a fallback is named by the same rule
// as in `run` (the leaf that ran aten::_to_cpu). The run's own folder is <out>/replay/ (its journal, workers' log and
// probe figures); model.json is the run's results file plus the program's calls, sites and totals, so that `compare`
// and `diff` take it.
// What a call would move to the CPU is estimated from the recording: a call that falls back copies its tensor
// arguments to the CPU and its results back, each time the program makes it.
#include "model/calls_replay.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/diagnostics.h"
#include "common/flags.h"
#include "common/paths.h"
#include "emu/expectations.h"
#include "emu/expected_verdicts.h"
#include "model/calls_file.h"
#include "probe/device_choices.h"
#include "probe/dtypes.h"
#include "report/model_reports.h"
#include "results/result.h"
#include "run/audit.h"
#include "run/stop_signals.h"

namespace mps_audit {

// Note [Known bugs a call meets]
// A known bug applies to a program's call when the call's own arguments meet its condition (Note [Conditions of known
// bugs] in emu/bug_conditions.cc): the replay keeps each call's traits (ProbeResult::call_traits: ranks, sizes,
// strides, offsets, argument values, and where the recording kept them, index values, NaNs and infinities), and a
// bug's atoms are checked against them, within the bug's release, macOS and chip. A call meets the bug (it would fail
// on that Mac: an expected failure), may meet it (the recording cannot tell: a tensor kept by its shape only, an
// `other` condition; a note that flags nothing), or neither (not listed). A bug no argument of the call meets is never
// the call's, whatever other inputs of its operator would do.
bool expected_to_fail(const ReplayedCall& c) {
  return (c.expectation && emu::decides_verdict(*c.expectation)) ||
         std::any_of(c.known_bugs.begin(), c.known_bugs.end(), [](const KnownBugNote& b) { return b.applies; });
}

CallsAudit analyse_calls(CallsFile file, Results results, const CallBugs& bugs) {
  CallsAudit a;
  a.file = std::move(file);
  a.results = std::move(results);
  std::map<std::pair<std::string, std::string>, const ProbeResult*> records;
  for (const auto& r : a.results.records) records[{r.op, r.dtype}] = &r;
  std::map<std::string, size_t> site_index;
  for (const RecordedCall& c : a.file.calls) {
    ReplayedCall rc;
    rc.call = c;
    const auto it = records.find({c.op, c.dtype});
    if (!parse_dtype(c.dtype)) {
      a.not_probed[fmt::format("dtype {} is not probed (MPS has no {})", c.dtype, c.dtype)] += c.count;
    } else if (it == records.end()) {
      a.not_probed["not in the replay's plan (no CPU kernel, or the spec leaves the dtype out)"] += c.count;
    } else if (it->second->verdict == Verdict::kSkip) {
      // Replayed, but not judged: the CPU could not run the call as recorded, or the tool cannot hold or compare its
      // results (a sparse result on emulated MPS). Why is the call's, never an error of the operator's. A call the
      // replay left alone on purpose (one the recording's device chose for itself, a kernel the linked libtorch
      // lacks) was not probed.
      const std::string_view why = skip_reason(*it->second);
      rc.not_judged = why != "recording_device" && why != "linked_libtorch";
      rc.message = it->second->message.empty() ? "skipped" : it->second->message;
      a.not_probed[rc.message] += c.count;
    } else {
      const ProbeResult& r = *it->second;
      rc.probed = true;
      rc.verdict = r.verdict;
      if (r.expectation) rc.expectation = r.expectation;
      if (bugs) {
        const auto traits = r.call_traits.find(fmt::format("call:{}", c.index));
        rc.known_bugs = bugs(c.op, c.dtype, traits == r.call_traits.end() ? nullptr : &traits->second);
      }
      if (std::any_of(rc.known_bugs.begin(), rc.known_bugs.end(), [](const KnownBugNote& b) { return b.applies; })) {
        a.known_bug_calls += c.count;
      }
      if (r.verdict == Verdict::kKnownFailure) rc.verdict = parse_verdict(r.observed).value_or(Verdict::kPass);
      rc.expected_failure = expected_to_fail(rc);
      if (rc.expected_failure) a.expected_failures += c.count;
      if (rc.expectation && rc.expectation->kind == "flaky") a.flaky_calls += c.count;
      rc.fallback_ops = r.fallback_ops;
      rc.message = r.message;
      rc.decided = r.sample == fmt::format("call:{}", c.index);
      a.probed_calls += c.count;
      if (rc.verdict == Verdict::kFallback) {
        a.fallback_calls += c.count;
        a.fallback_seconds += c.seconds;
        a.bytes_to_cpu += c.count * c.in_bytes;
        a.bytes_from_cpu += c.count * c.out_bytes;
      } else if (rc.verdict != Verdict::kPass && rc.verdict != Verdict::kXpass) {
        a.failed_calls += c.count;
      }
    }
    a.seconds += c.seconds;
    for (const auto& [site, phases] : c.sites) {
      auto [pos, fresh] = site_index.emplace(site, a.sites.size());
      if (fresh) {
        const auto code = a.file.sources.find(site);
        a.sites.push_back({site, code == a.file.sources.end() ? "" : code->second, 0, Verdict::kSkip, {}});
      }
      CallSite& s = a.sites[pos->second];
      s.calls += c.calls_at(site);
      if (rc.probed) s.worst = worse(s.worst, rc.verdict);
      s.replayed.push_back(a.calls.size());
    }
    a.calls.push_back(std::move(rc));
  }
  std::stable_sort(a.sites.begin(), a.sites.end(), [](const CallSite& x, const CallSite& y) {
    const bool xp = x.worst != Verdict::kPass && x.worst != Verdict::kSkip,
               yp = y.worst != Verdict::kPass && y.worst != Verdict::kSkip;
    if (xp != yp) return xp;
    if (x.worst != y.worst) return static_cast<int>(x.worst) > static_cast<int>(y.worst);
    return x.calls > y.calls;
  });
  return a;
}

int run_calls_audit(const CallsOptions& o, std::ostream& out, std::ostream& err) {
  check_choices("--format", o.formats, {"json", "md", "html"});
  CallsFile file = load_calls_file(o.calls);
  if (file.calls.empty()) throw UserError("the recording holds no ATen calls to replay", {o.calls});
  RunOptions run;
  run.target = o.target;
  run.fallback = o.fallback;
  run.expectations = o.expectations;
  run.out_dir = join_path(o.out_dir, "replay");
  run.formats = {};  // the replay's reports are the program's (below), none of the run's
  run.timeout_s = o.timeout_s;
  run.jobs = o.jobs;
  run.samples = o.calls;
  run.self = o.self;
  run.progress = o.progress;
  std::set<std::pair<std::string, std::string>> pairs;
  for (const auto& c : file.calls) {
    if (parse_dtype(c.dtype)) pairs.insert({c.op, c.dtype});
    const DeviceChoice* choice = recording_device_choice(c.op);
    if (choice && choice->replayed.empty()) run.not_probed[c.op] = choice->why_not;
  }
  if (pairs.empty()) throw UserError("none of the recording's calls is in a dtype the prober probes", {o.calls});
  run.pairs.assign(pairs.begin(), pairs.end());
  AuditedRun replayed = audit_run(check_run_options(run), nullptr, err);
  if (replayed.stopped_by)
    throw UserError(fmt::format("the replay was stopped by {}", signal_name(replayed.stopped_by)));
  const emu::RunExpectations* expecting = replayed.expecting;
  const CallsAudit audit =
      analyse_calls(std::move(file), std::move(replayed.results),
                    [expecting](const std::string& op, const std::string& dtype, const SampleTraits* traits) {
                      return expecting ? expecting->bugs_of_call(op, dtype, traits) : std::vector<KnownBugNote>();
                    });
  const std::vector<std::string> written = write_model_files(o.formats, o.out_dir, [&](const std::string& f) {
    return f == "json" ? render_calls_json(audit) : f == "md" ? render_calls_markdown(audit) : render_calls_html(audit);
  });
  out << render_calls_summary(audit);
  out << fmt::format("wrote {}\n", fmt::join(written, ", "));
  return kExitOk;
}

}  // namespace mps_audit
