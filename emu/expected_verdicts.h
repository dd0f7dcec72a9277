// What PyTorch's own MPS expectations (emu/expectations.h) do to a record: on emulated MPS they predict what the
// emulator cannot reproduce; on real MPS they mark expected failures (xfail) and stale entries (xpass). See
// Note [Expected verdicts] in expected_verdicts.cc and docs/expectations.md.
#pragma once

#include <optional>
#include <string>

#include "emu/expectations.h"
#include "results/result.h"
#include "results/results_file.h"

namespace mps_audit::emu {

enum class ExpectationMode {
  kOff,      // the records are what the target gave (cuda, cpu, meta)
  kPredict,  // emulated MPS: a failure PyTorch expects and the emulator cannot reproduce is reported as expected
  kCheck,    // real MPS: a failure PyTorch expects is xfail, a pass where it expects a failure is xpass
};

// --expectations: "auto" (predict on mps-emu, check on mps, off elsewhere), "predict", "check" or "off". Throws
// UserError for anything else, and for predict or check on a target that is not MPS.
ExpectationMode expectation_mode(const std::string& requested, const std::string& target);
std::string to_string(ExpectationMode mode);

// The expectations a run (or a model audit) applies, and for which macOS: read from `release_dir`, the emulated
// release's folder on mps-emu and the linked libtorch's shipped one on a Mac; none when the mode is off or the folder
// has no mps_expectations.tsv. `host_macos` is the Mac's version ("14.5"), for mps.
struct RunExpectations {
  ExpectationMode mode = ExpectationMode::kOff;
  std::optional<Expectations> expectations;
  std::string release_dir;   // where they were looked for
  std::string macos;         // "14" (emulated) or "14.5"
  MacosVersion version = 0;  // the same, to compare with the entries' conditions

  // The results' environment block (RunEnvironment::expectations...); nothing when none apply.
  void describe(RunEnvironment& env) const;
  // "expectations: none: ... has no mps_expectations.tsv ..." when the mode asks for some and none were found, else "".
  std::string none_line(const std::string& target) const;
};
RunExpectations run_expectations(ExpectationMode mode, const std::string& target, const std::string& release_dir,
                                 int emu_macos, const std::string& host_macos);

// The note a record carries of an expectation.
ExpectationNote note_of(const Expectation& e, const std::string& release);

// What an expectation does to a record of the target (Note [Expected verdicts]); `note` is the expectation's, as
// note_of() gives it.
void apply_expectation(ProbeResult& r, const ExpectationNote& note, ExpectationMode mode);

// The first expectation of `scope` that applies to `op` x `dtype` on `macos` and is not the allow list's, as a note.
std::optional<ExpectationNote> expectation_for(const Expectations& expectations, const std::string& op,
                                               const std::string& dtype, ExpectationScope scope, MacosVersion macos);

// Applies `expectations` (in `scope`, on macOS `macos`) to a record of the target: it keeps what the target gave in
// `observed` when its verdict changes, and carries the expectation that applied. Records the spec already judged
// (xfail, xpass) and skips are left as they are.
void apply_expectations(ProbeResult& r, const Expectations& expectations, ExpectationMode mode, MacosVersion macos,
                        ExpectationScope scope = ExpectationScope::kForward);

}  // namespace mps_audit::emu
