// The ledger of known MPS bugs (data/mps_known_bugs.yaml, format mps-audit-known-bugs/1): bugs users met on real
// Macs, from PyTorch's public issues and pull requests, each with its operators, dtypes, the input condition that
// triggers it, its kind, the releases it was seen in and fixed in, macOS and chip ranges, and its thread. Read like
// PyTorch's expectations and applied to records by what their samples met (Note [Known bugs] in known_bugs.cc).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/diagnostics.h"
#include "emu/emulated_mac.h"
#include "emu/expectations.h"
#include "results/result.h"

namespace mps_audit::emu {

inline constexpr const char* kKnownBugsFile = "mps_known_bugs.yaml";
inline constexpr const char* kKnownBugsFormat = "mps-audit-known-bugs/1";

struct KnownBug {
  std::string id;                   // "pytorch-154881"
  std::vector<std::string> ops;     // "aten::cumsum" (every overload) or "aten::masked_fill_.Scalar" (one)
  std::vector<std::string> dtypes;  // empty: every dtype ("all")
  std::string when;                 // any, other, rank_ge:N, size_gt:N, numel_gt:N, non_contiguous, ... kwarg:NAME
  std::string when_detail, kind, seen_in, fixed_in, macos, source, fix, summary;
  MacosBounds bounds;
  std::vector<Chip> chips;  // empty: every chip
  SourceLocation where;

  // Whether the bug is in `release` ("2.11.0"): seen in it or before (or never said), and not fixed by it. The
  // record then carries it.
  bool in_release(const std::string& release) const;
  // Whether the ledger places it in `release` closely enough for it to decide a verdict there (Note [Known bugs]):
  // between the release it was seen in and the one that fixed it, and with either end unknown, within two minor
  // versions of the end that is known.
  bool decides_in(const std::string& release) const;
  bool covers(const std::string& dtype) const;
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

// What a record's samples had that meets `when` ("a rank-5 argument", "every sample"); empty when none met it.
// "other" (a condition the prober cannot build or recognize) is never met.
std::string condition_met(const std::string& when, const SampleTraits& traits);

// The ledger's entries for a record of `release` on `mac` (Note [Known bugs]): each is carried in r.known_bugs; one
// whose condition a sample met, on the chip it names, decides a pass: known_failure on emulated MPS (predict), and on
// a real Mac (check) xfail where the record failed and xpass ("looks fixed: confirm and close") where it passed.
void apply_known_bugs(ProbeResult& r, const KnownBugs& bugs, const std::string& release, const EmulatedMac& mac,
                      ExpectationMode mode);

}  // namespace mps_audit::emu
