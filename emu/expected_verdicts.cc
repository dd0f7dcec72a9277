// Applying PyTorch's own MPS expectations to records.
#include "emu/expected_verdicts.h"

#include <fmt/format.h>

#include "common/diagnostics.h"

namespace mps_audit::emu {

// Note [Expected verdicts]
// PyTorch's MPS test lists (tools/expectations/extract.py) say, per release, which op x dtype pairs fail on a real Mac
// and how. The emulator computes with the CPU's kernels, so it sees only what a release's registry decides (a missing
// kernel, a fallback, MPS's dtype rules); the rest it learns from the lists:
// - predict (emulated MPS), for a pair the emulator ran fine (pass or fallback):
//   - not implemented for the dtype, and it ran natively: `unsupported`, as the real kernel refuses it. Where it fell
//     back, the real Mac falls back too (the op has no MPS kernel for it), and the record says which entry agrees;
//   - a known wrong result, error, crash, hang or flaky failure: `known_failure`, its own verdict, never a pass: the
//     record keeps what the emulator saw in `observed`, and its basis is PyTorch's expectations.
//   A pair the emulator saw fail itself keeps its verdict and carries the entry.
// - check (real MPS): a failure that an entry expects is `xfail`; a pass where one expects a failure is `xpass`,
//   evidence that PyTorch's lists are stale (a fallback is no failure, except of a dtype the lists call not
//   implemented: the test that made the list runs without the CPU fallback). A pass of a flaky entry proves nothing.
// Entries that are not device bugs (random or tie-dependent outputs) are carried and change nothing.

ExpectationMode expectation_mode(const std::string& requested, const std::string& target) {
  const bool mps = target == "mps" || target == "mps-emu";
  if (requested == "auto") {
    return target == "mps-emu" ? ExpectationMode::kPredict
           : target == "mps"   ? ExpectationMode::kCheck
                               : ExpectationMode::kOff;
  }
  if (requested == "off") return ExpectationMode::kOff;
  if (requested != "predict" && requested != "check") {
    throw UserError(fmt::format("--expectations must be auto, predict, check or off, not '{}'", requested));
  }
  if (!mps) {
    throw UserError(
        fmt::format("--expectations {}: PyTorch's expectations are of MPS, and the target is {}", requested, target));
  }
  return requested == "predict" ? ExpectationMode::kPredict : ExpectationMode::kCheck;
}

std::string to_string(ExpectationMode mode) {
  switch (mode) {
    case ExpectationMode::kOff: return "off";
    case ExpectationMode::kPredict: return "predict";
    case ExpectationMode::kCheck: return "check";
  }
  return "off";
}

RunExpectations run_expectations(ExpectationMode mode, const std::string& target, const std::string& release_dir,
                                 int emu_macos, const std::string& host_macos) {
  RunExpectations out;
  out.mode = mode;
  out.release_dir = release_dir;
  out.macos = target == "mps-emu" ? std::to_string(emu_macos) : host_macos;
  out.version = parse_macos_version(out.macos).value_or(0);
  if (mode != ExpectationMode::kOff) out.expectations = load_release_expectations(release_dir);
  return out;
}

void RunExpectations::describe(RunEnvironment& env) const {
  if (!expectations) return;
  env.expectations = expectations->path();
  env.expectations_release = expectations->release();
  env.expectations_mode = to_string(mode);
  env.expectations_macos = macos;
}

std::string RunExpectations::none_line(const std::string& target) const {
  if (mode == ExpectationMode::kOff || expectations) return "";
  return fmt::format("expectations: none: {} has no {} (docs/expectations.md); verdicts rest on the {} alone\n",
                     release_dir.empty() ? "no release folder for the linked libtorch" : release_dir, kExpectationsFile,
                     target == "mps-emu" ? "registry" : "kernels");
}

ExpectationNote note_of(const Expectation& e, const std::string& release) {
  return {std::string(to_string(e.kind)),
          std::string(to_string(e.scope)),
          release,
          e.list,
          e.opinfo,
          e.source,
          e.reason,
          e.macos};
}

namespace {

// "PyTorch 2.11.0's UNIMPLEMENTED_XFAILLIST (torch/testing/_internal/common_mps.py:412: reason)"
std::string cited(const ExpectationNote& n) {
  return fmt::format("PyTorch {}'s {} ({}{}{})", n.release.empty() ? "?" : n.release, n.list, n.source,
                     n.reason.empty() ? "" : ": ", n.reason);
}

std::string kind_words(const std::string& kind) {
  if (kind == "wrong") return "wrong results";
  if (kind == "error") return "an error";
  if (kind == "crash") return "a crash or hang";
  if (kind == "flaky") return "flaky failures";
  return kind;
}

}  // namespace

std::optional<ExpectationNote> expectation_for(const Expectations& expectations, const std::string& op,
                                               const std::string& dtype, ExpectationScope scope, MacosVersion macos) {
  for (const Expectation* found : expectations.find(op, dtype, scope, macos)) {
    if (found->kind != ExpectationKind::kPasses) return note_of(*found, expectations.release());
  }
  return std::nullopt;
}

void apply_expectations(ProbeResult& r, const Expectations& expectations, ExpectationMode mode, MacosVersion macos,
                        ExpectationScope scope) {
  if (mode == ExpectationMode::kOff) return;
  if (const auto note = expectation_for(expectations, r.op, r.dtype, scope, macos)) apply_expectation(r, *note, mode);
}

void apply_expectation(ProbeResult& r, const ExpectationNote& note, ExpectationMode mode) {
  if (mode == ExpectationMode::kOff || r.verdict == Verdict::kSkip || r.verdict == Verdict::kXfail ||
      r.verdict == Verdict::kXpass) {
    return;
  }
  r.expectation = note;
  const ExpectationNote& n = *r.expectation;
  if (!is_failure_kind(n.kind)) return;
  const bool ran_fine = r.verdict == Verdict::kPass || r.verdict == Verdict::kFallback;
  const bool unimplemented = n.kind == "unimplemented";
  // A gradient's expectation, on the record of its forward operator (a training step): say so.
  const std::string of_what = n.scope == "forward" ? "" : " (its " + n.scope + ")";
  if (mode == ExpectationMode::kPredict) {
    if (!ran_fine || (unimplemented && r.verdict == Verdict::kFallback)) return;
    r.observed = std::string(to_string(r.verdict));
    r.basis = kBasisExpectations;
    if (unimplemented && n.scope == "forward") {
      r.verdict = Verdict::kUnsupported;
      r.message = fmt::format("{} is not implemented for {} on MPS: {} expects it to fail (emulated: it ran here)",
                              r.op, r.dtype, cited(n));
    } else {
      r.verdict = Verdict::kKnownFailure;
      r.message = fmt::format("expected to fail on real MPS{} with {}: {} (emulated: here it gave {})", of_what,
                              kind_words(n.kind), cited(n), r.observed);
    }
    return;
  }
  if (ran_fine && n.kind == "flaky") return;
  const bool failed = !ran_fine || (unimplemented && r.verdict == Verdict::kFallback);
  r.observed = std::string(to_string(r.verdict));
  if (failed) {
    r.verdict = Verdict::kXfail;
    r.message = fmt::format("expected failure{} ({}, {}): {}", of_what, kind_words(n.kind), cited(n), r.message);
  } else {
    r.verdict = Verdict::kXpass;
    r.message = fmt::format("{}, though {} expects {}{}", r.observed == "pass" ? "passed" : "ran (on the CPU)",
                            cited(n), kind_words(unimplemented ? "a refusal" : n.kind), of_what);
  }
}

}  // namespace mps_audit::emu
