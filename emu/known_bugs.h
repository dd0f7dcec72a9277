// The ledger of known MPS bugs (data/mps_known_bugs.yaml, format mps-audit-known-bugs/2): bugs users met on real
// Macs, from PyTorch's public issues and pull requests, each with its operators, dtypes, the input condition that
// triggers it, its kind, the releases it was seen in and fixed in (and the fix that did), macOS and chip ranges, its
// thread, and its own call. Read like PyTorch's expectations and applied to records by what their samples met (Note
// [Known bugs] in known_bugs.cc).
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

#include <yaml-cpp/node/node.h>

#include "common/diagnostics.h"
#include "emu/emulated_mac.h"
#include "emu/expectations.h"
#include "results/result.h"

namespace mps_audit::emu {

inline constexpr const char* kKnownBugsFile = "mps_known_bugs.yaml";
inline constexpr const char* kKnownBugsFormat = "mps-audit-known-bugs/2";

// A known bug's own call, the thread's minimal one (Note [Known bugs' own calls] in probe/repros.cc): an operator
// overload and its arguments in the spec's sample form, which the prober reads (probe/spec.h parse_sample_args()).
struct KnownBugRepro {
  std::string op;           // "aten::conv2d", "aten::add.Tensor"
  YAML::Node args;          // the sample's `args` mapping, as the ledger has it (its marks: where it stands)
  bool cpu_raises = false;  // the CPU refuses the call (a missing check on MPS is the bug)
  bool cpu_varies = false;  // the CPU's own rule for the call changed between releases (`note` says which way)
  std::string note;         // what the one call leaves out of the thread's repro
  SourceLocation where;
};

struct KnownBug {
  std::string id;                   // "pytorch-154881"
  std::vector<std::string> ops;     // "aten::cumsum" (every overload) or "aten::masked_fill_.Scalar" (one)
  std::vector<std::string> dtypes;  // empty: every dtype ("all")
  // The input condition: atoms that must all hold (any, rank_ge:5, non_contiguous, arg:k>16, nan, ... other; see
  // condition_met()).
  std::vector<std::string> when;
  std::string when_detail, kind, seen_in, seen_in_note, fixed_in, macos, source, fix, fix_merged, summary, checked;
  std::string fix_candidate;  // a pull request that says it fixes the thread, whose merge does not show
  MacosBounds bounds;
  std::vector<Chip> chips;  // empty: every chip
  std::optional<KnownBugRepro> repro;
  SourceLocation where;

  // Whether the bug is in `release` ("2.11.0"): seen in it or before (or never said), and not fixed by it. The
  // record then carries it.
  bool in_release(const std::string& release) const;
  // Whether the ledger places it in `release` closely enough for it to decide a verdict there (Note [Known bugs]):
  // between the release it was seen in and the one that fixed it, and with either end unknown, within two minor
  // versions of the end that is known.
  bool decides_in(const std::string& release) const;
  bool covers(const std::string& dtype) const;
  // Whether the condition is `any`: every input of its dtypes meets it, and it is its operator's, not a condition's.
  bool unconditional() const;
  // "rank_ge:5 and arg:dim=0"
  std::string condition_text() const;
};

// Whether a sample (or a recorded call) met a bug's condition.
struct ConditionMet {
  enum class How { kNo, kMaybe, kYes };
  How how = How::kNo;
  std::string by;  // what met it: "a rank-5 argument and dim 0"; for kMaybe, what could not be told
  bool yes() const { return how == How::kYes; }
  bool maybe() const { return how == How::kMaybe; }
};

class KnownBugs {
 public:
  // Throws UserError with file:line:col for an entry that is not of the format. An operator or dtype a release lacks
  // is no error: such an entry never meets a record.
  static KnownBugs parse(const std::string& text, const std::string& path);
  static KnownBugs load(const std::string& path);

  const std::string& path() const { return path_; }
  const std::string& hash() const { return hash_; }
  const std::vector<KnownBug>& entries() const { return entries_; }
  // The entries naming `op` ("aten::cumsum.out": its overload or its base name) in `dtype`, in file order.
  std::vector<const KnownBug*> find(const std::string& op, const std::string& dtype) const;
  // The entries naming `op` (its overload or its base name), in any dtype, in file order.
  std::vector<const KnownBug*> naming(const std::string& op) const;
  // The macOS conditions of the entries seen in `release` or before it and not fixed by it, for the default
  // --emu-macos (newest_named_macos()): a Mac of such a macOS ran the release.
  std::vector<std::string> conditions_in(const std::string& release) const;

 private:
  std::string path_, hash_;
  std::vector<KnownBug> entries_;
  std::unordered_map<std::string, std::vector<size_t>> by_op_;
};

// The ledger of the first data home that has one (data/mps_known_bugs.yaml); nullopt when none does.
std::optional<KnownBugs> load_shipped_known_bugs();

// The note a record (or a timeline, or a call) carries of `bug`, before any sample is said to meet it.
KnownBugNote note_of(const KnownBug& bug);

// The form of one atom of a condition (the reader checks each against it).
const std::regex& known_bug_atom();

// Whether an argument's value (as argument_text() in common/ivalue_tensors.h gives it) holds against `wanted` under
// `op` (= != > >= < <=), as an `arg:NAME<op>VALUE` atom compares: numbers as numbers, anything else as text; a list
// against a number: = when every item is equal, the others when one item holds.
bool argument_compares(const std::string& value, const std::string& op, const std::string& wanted);

// Whether what `traits` says of a sample (or a recorded call) meets every atom of `bug`'s condition: yes, with what
// met it; maybe, where the values it needs were not kept (a recorded call's tensor described by its shape) or an atom
// is `other` (none can be told from the arguments: the bug's own call meets it, Note [Known bugs' own calls]); or no.
// `own_call`: the traits are of the bug's own repro, which meets its condition by construction.
ConditionMet condition_met(const KnownBug& bug, const SampleTraits& traits, bool own_call = false);

// The ledger's entries for a record of `release` on `mac` (Note [Known bugs], Note [Conditional failures]): each is
// carried in r.known_bugs. An unconditional one (`any`) that the chip meets decides a pass: known_failure on emulated
// MPS (predict), and on a real Mac (check) xfail where the record failed and xpass ("looks fixed: confirm and close")
// where it passed. One with a narrower condition is the record's conditional failure where a sample met it: a
// condition sample's verdict rests on it the same way (r.conditions), and the record's verdict stays its own.
void apply_known_bugs(ProbeResult& r, const KnownBugs& bugs, const std::string& release, const EmulatedMac& mac,
                      ExpectationMode mode);

// The ledger's entries for a program's recorded call of `op` x `dtype` in `release` on `mac` whose condition the call
// meets (KnownBugNote::applies where the ledger places the bug in the release and the chip is its) or may meet
// (KnownBugNote::maybe: what the recording kept cannot tell), from the call's own traits (`traits`; null when the
// replay did not run the call: only unconditional entries are met then, the others may be). Note [Known bugs a call
// meets] in model/calls_replay.cc.
std::vector<KnownBugNote> bugs_of_call(const KnownBugs& bugs, const std::string& release, const EmulatedMac& mac,
                                       const std::string& op, const std::string& dtype, const SampleTraits* traits);

}  // namespace mps_audit::emu
