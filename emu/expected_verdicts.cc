// Applying PyTorch's own MPS expectations to records.
#include "emu/expected_verdicts.h"

#include <cstdlib>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/diagnostics.h"
#include "common/torch_compat.h"
#include "emu/mps_emulator.h"
#include "emu/mps_limits.h"

namespace mps_audit::emu {

// Note [Expected verdicts]
// PyTorch's MPS test lists (tools/expectations/extract.py) say, per release, which op x dtype pairs fail on a real Mac
// and how. The emulator computes with the CPU's kernels, so it sees only what a release's registry decides (a missing
// kernel, a fallback, MPS's dtype rules); the rest it learns from the lists. A verdict is what was observed; an
// expectation is evidence, and only some of it decides a verdict (decides_verdict()):
// - deciding: a failure the emulator cannot reproduce (not implemented for the dtype, a wrong result, an error, a
//   crash or hang);
// - annotating only: flaky entries (they fail at times, and pass on the next run), entries that are not device bugs
//   (random or tie-dependent outputs), an allow list's silence on a dtype (not_seen_passing: PyTorch did not see it
//   pass, which is not seeing it fail), and the entries of OpInfos whose samples convert to another dtype, keyed on
//   every dtype (the `to` OpInfo, zeros_like) or passing dtype= (log_softmax's "with_dtype"): they are about the
//   conversion to a dtype MPS lacks, which the emulator refuses itself, not about every call of the operator in the
//   record's dtype (Note [Expected verdicts]'s decides_verdict()). The record carries the entry; the reports list it
//   apart from the failures.
// What a deciding entry does:
// - predict (emulated MPS), to a pass only: not implemented for the dtype (forward): `unsupported`, as the real kernel
//   refuses it; anything else: `known_failure`. The record keeps what the emulator saw in `observed`, and its basis is
//   PyTorch's expectations. An observed fallback, refusal, crash or mismatch is never replaced: it carries the entry.
// - check (real MPS): a failure that an entry expects is `xfail`; a pass where one expects a failure is `xpass`,
//   evidence that PyTorch's lists are stale (a fallback is no failure, except of a dtype the lists call not
//   implemented: the test that made the list runs without the CPU fallback).

ExpectationMode expectation_mode(const std::string& requested, const Target& target) {
  if (requested == "auto") {
    return target.emulated() ? ExpectationMode::kPredict
           : target.mps()    ? ExpectationMode::kCheck
                             : ExpectationMode::kOff;
  }
  if (requested == "off") return ExpectationMode::kOff;
  if (requested != "predict" && requested != "check") {
    throw UserError(fmt::format("--expectations must be auto, predict, check or off, not '{}'", requested));
  }
  if (!target.mps()) {
    throw UserError(fmt::format("--expectations {}: PyTorch's expectations are of MPS, and the target is {}", requested,
                                target.name()));
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

RunExpectations run_expectations(ExpectationMode mode, const Target& target, const std::string& host_macos,
                                 const std::string& host_chip) {
  RunExpectations out;
  out.mode = mode;
  const bool emulated = target.emulated();
  const std::string& release_dir = out.release_dir =
      emulated ? target.emu.release_dir : find_release_dir(compat::kTorchVersion);
  const MacosVersion asked = target.emu.macos.empty() ? 0 : parse_emu_macos("--emu-macos", target.emu.macos);
  out.mac.chip = parse_chip("--emu-chip", target.emu.chip.empty() ? "any" : target.emu.chip);
  if (!target.mps()) return out;
  // Read whatever the mode: on emulated MPS, the default macOS is the newest that the release's data names.
  std::optional<Expectations> expectations = load_release_expectations(release_dir);
  std::optional<KnownBugs> known_bugs = load_shipped_known_bugs();
  static const std::regex kReleaseFolder(".*pytorch-([0-9]+\\.[0-9]+\\.[0-9]+)/?");
  std::smatch m;
  out.release = expectations                                       ? expectations->release()
                : std::regex_match(release_dir, m, kReleaseFolder) ? m[1].str()
                                                                   : "";
  if (emulated) {
    std::vector<std::string> conditions;
    if (expectations) {
      for (const auto& row : expectations->rows()) conditions.push_back(row.macos);
    }
    if (known_bugs) {
      for (auto& c : known_bugs->conditions_in(out.release)) conditions.push_back(std::move(c));
    }
    if (const auto limits = load_shipped_mps_limits()) {
      for (auto& c : limits->conditions_in(out.release)) conditions.push_back(std::move(c));
    }
    out.version = asked ? asked : newest_named_macos(conditions);
    out.macos = macos_text(out.version);
  } else {
    out.macos = host_macos;
    out.version = parse_macos_version(host_macos).value_or(0);
    out.mac.chip = chip_of(host_chip);
  }
  out.mac.macos = out.version;
  if (mode != ExpectationMode::kOff) {
    out.expectations = std::move(expectations);
    out.known_bugs = std::move(known_bugs);
  }
  return out;
}

void RunExpectations::apply(ProbeResult& r, ExpectationScope scope) const {
  if (mode == ExpectationMode::kOff) return;
  if (expectations) apply_expectations(r, *expectations, mode, version, scope);
  if (known_bugs && scope == ExpectationScope::kForward && !release.empty()) {
    apply_known_bugs(r, *known_bugs, release, mac, mode);
  }
}

std::vector<KnownBugNote> RunExpectations::bugs_of_call(const std::string& op, const std::string& dtype,
                                                        const SampleTraits* traits) const {
  if (mode == ExpectationMode::kOff || !known_bugs || release.empty()) return {};
  return emu::bugs_of_call(*known_bugs, release, mac, op, dtype, traits);
}

void RunExpectations::describe(RunEnvironment& env) const {
  if (known_bugs) env.known_bugs = known_bugs->path();
  if (!expectations) return;
  env.expectations = expectations->path();
  env.expectations_release = expectations->release();
  env.expectations_mode = to_string(mode);
  env.expectations_macos = macos;
  env.expectations_mac =
      mac.describe(mode == ExpectationMode::kCheck ? std::getenv("PYTORCH_MPS_METAL_VERSION") : nullptr);
}

std::string RunExpectations::none_line(const Target& target) const {
  if (mode == ExpectationMode::kOff || expectations) return "";
  return fmt::format("expectations: none: {} has no {} (docs/expectations.md); verdicts rest on the {} alone\n",
                     release_dir.empty() ? "no release folder for the linked libtorch" : release_dir, kExpectationsFile,
                     target.emulated() ? "registry" : "kernels");
}

ExpectationNote note_of(const Expectation& e, const std::string& release) {
  return {std::string(to_string(e.kind)),
          std::string(to_string(e.scope)),
          release,
          e.list,
          e.opinfo,
          e.source,
          e.reason,
          e.macos,
          e.dtypes.empty()};
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
  return kind;
}

}  // namespace

std::optional<ExpectationNote> expectation_for(const Expectations& expectations, const std::string& op,
                                               const std::string& dtype, ExpectationScope scope, MacosVersion macos) {
  // An entry that decides comes before one that annotates, whatever its kind.
  const Expectation* annotating = nullptr;
  bool passes = false;
  for (const Expectation* found : expectations.find(op, dtype, scope, macos)) {
    if (found->is_failure()) return note_of(*found, expectations.release());
    if (found->kind == ExpectationKind::kPasses) {
      passes = true;
    } else if (!annotating) {
      annotating = found;
    }
  }
  if (annotating) return note_of(*annotating, expectations.release());
  if (passes) return std::nullopt;
  // An allow list (1.13.1) that names the operator, but not in this dtype: PyTorch did not see the pair pass.
  for (const Expectation* listed : expectations.naming(op)) {
    if (listed->kind != ExpectationKind::kPasses || listed->scope != scope || !listed->holds_on(macos)) continue;
    Expectation silence = *listed;
    silence.kind = ExpectationKind::kNotSeenPassing;
    silence.list += " (not in it)";
    silence.reason =
        fmt::format("{} lists {} in {} only", listed->list, listed->opinfo, fmt::join(listed->dtypes, ", "));
    return note_of(silence, expectations.release());
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
  if (!decides_verdict(n)) return;
  const bool ran_fine = r.verdict == Verdict::kPass || r.verdict == Verdict::kFallback;
  const bool unimplemented = n.kind == "unimplemented";
  // A gradient's expectation, on the record of its forward operator (a training step): say so.
  const std::string of_what = n.scope == "forward" ? "" : " (its " + n.scope + ")";
  if (mode == ExpectationMode::kPredict) {
    if (r.verdict != Verdict::kPass) return;
    r.expectation->decided = true;
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
  const bool failed = !ran_fine || (unimplemented && r.verdict == Verdict::kFallback);
  r.expectation->decided = true;
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
