// What PyTorch's own MPS expectations (emu/expectations.h) do to a record: on emulated MPS they predict what the
// emulator cannot reproduce; on real MPS they mark expected failures (xfail) and stale entries (xpass). See
// Note [Expected verdicts] in expected_verdicts.cc and docs/expectations.md.
#pragma once

#include <optional>
#include <string>

#include "common/target.h"
#include "emu/expectations.h"
#include "emu/known_bugs.h"
#include "results/result.h"
#include "results/results_file.h"

namespace mps_audit::emu {

// --expectations: "auto" (predict on mps-emu, check on mps, off elsewhere), "predict", "check" or "off". Throws
// UserError for anything else, and for predict or check on a target that is not MPS.
ExpectationMode expectation_mode(const std::string& requested, const Target& target);
std::string to_string(ExpectationMode mode);

// The evidence a run (or a model audit) applies, and for which Mac: PyTorch's expectations, read from the emulated
// release's folder on mps-emu and the linked libtorch's shipped one on a Mac, and the ledger of known MPS bugs; none
// when the mode is off. `host_macos` is the Mac's version ("14.5"), for mps.
struct RunExpectations {
  ExpectationMode mode = ExpectationMode::kOff;
  std::optional<Expectations> expectations;
  std::optional<KnownBugs> known_bugs;
  std::string release_dir;   // where they were looked for
  std::string release;       // the release they are of ("2.11.0"), for the ledger's seen_in and fixed_in
  std::string macos;         // "14.0" (emulated) or "14.5"
  MacosVersion version = 0;  // the same, to compare with the entries' conditions
  EmulatedMac mac;           // the same, with the chip (any on a real Mac until it says which)

  // PyTorch's expectations of `scope`, then the ledger, to a record of the target.
  void apply(ProbeResult& r, ExpectationScope scope = ExpectationScope::kForward) const;

  // The ledger's entries a program's recorded call meets or may meet (emu::bugs_of_call()); none when the mode is off.
  std::vector<KnownBugNote> bugs_of_call(const std::string& op, const std::string& dtype,
                                         const SampleTraits* traits) const;

  // The results' environment block (RunEnvironment::expectations...); nothing when none apply.
  void describe(RunEnvironment& env) const;
  // "expectations: none: ... has no mps_expectations.tsv ..." when the mode asks for some and none were found, else "".
  std::string none_line(const Target& target) const;
};
// An emulated target's macOS and chip are as given (an empty macOS: the newest the release's data names).
RunExpectations run_expectations(ExpectationMode mode, const Target& target, const std::string& host_macos = "",
                                 const std::string& host_chip = "");

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
