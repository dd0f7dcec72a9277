// PyTorch's own expectations of real MPS, per release: which op x dtype pairs its MPS test lists expect to fail (not
// implemented for a dtype, wrong results, errors, crashes), in which scope and on which macOS versions, as
// tools/expectations/extract.py writes them into data/pytorch-X.Y.Z/mps_expectations.tsv (docs/expectations.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/diagnostics.h"
#include "results/result.h"

namespace mps_audit::emu {

inline constexpr const char* kExpectationsFile = "mps_expectations.tsv";
inline constexpr const char* kExpectationsFormat = "mps-audit-expectations/1";

enum class ExpectationKind {
  kUnimplemented,   // the MPS kernel does not implement the dtype: it refuses it
  kWrong,           // known wrong results
  kError,           // raises on MPS
  kCrash,           // crashes or hangs (PyTorch skips it)
  kFlaky,           // sometimes fails
  kNotABug,         // outputs that cannot be compared (random, ties, undefined): not a device bug
  kPasses,          // known to pass (1.13.1's allow list): positive evidence, no failure
  kNotSeenPassing,  // an operator the allow list (1.13.1) names, in a dtype it does not: PyTorch did not see it pass.
                    // Never a row of the file: expectation_for() derives it.
};
enum class ExpectationScope { kForward, kGradient, kErrorInputs, kSparse };

enum class ExpectationMode {
  kOff,      // the records are what the target gave (cuda, cpu, meta)
  kPredict,  // emulated MPS: a failure PyTorch expects and the emulator cannot reproduce is reported as expected
  kCheck,    // real MPS: a failure PyTorch expects is xfail, a pass where it expects a failure is xpass
};

std::string_view to_string(ExpectationKind kind);
// Every kind but not_a_bug, passes and not_seen_passing: PyTorch expects the pair to fail on real MPS, at least at
// times. By name, as records carry it.
bool is_failure_kind(std::string_view kind);
// Whether an expectation is evidence enough to decide a verdict (Note [Expected verdicts]): a failure the emulator
// cannot reproduce (unimplemented, wrong, error, crash). Flaky, not_a_bug and not_seen_passing entries, and entries
// about conversions to another dtype (below), annotate.
// An entry of an OpInfo whose samples convert to other dtypes (the `to` OpInfo, the dtype methods, the *_like and
// new_* factories, which PyTorch keys on every dtype; a "with_dtype" variant such as log_softmax's, which passes
// dtype=float64) is about converting to a dtype MPS lacks, which the emulator's dtype rules refuse themselves: it
// annotates; so does a sparse OpInfo's (sparse.mmreduce names aten::mm), which is about sparse inputs.
bool decides_verdict(std::string_view kind, bool every_dtype, std::string_view macos, std::string_view opinfo);
// Whether an OpInfo's samples convert to other dtypes (see decides_verdict()).
bool converts(std::string_view opinfo);
bool decides_verdict(const ExpectationNote& note);
std::string_view to_string(ExpectationScope scope);

// A macOS version as major * 100 + minor: 14.4 -> 1404, 26 -> 2600.
using MacosVersion = int;
// "14.4.1" -> 1404, "26" -> 2600; nullopt when it does not start with a number.
std::optional<MacosVersion> parse_macos_version(std::string_view text);

// A macOS condition's bounds: (true: below, false: at least) the version; all must hold.
using MacosBounds = std::vector<std::pair<bool, MacosVersion>>;
// "*" (none), "<15.0", ">=13.3,<14.4" -> its bounds. Else nullopt, with the bound that is none and its offset.
std::optional<MacosBounds> parse_macos_condition(std::string_view text, std::string& bad, size_t& bad_offset);
bool holds_on(const MacosBounds& bounds, MacosVersion macos);

struct Expectation {
  std::string op;                   // "aten::pow" (every overload), "aten::pow.Scalar" (one), "*" (every operator)
  std::vector<std::string> dtypes;  // empty: every dtype
  ExpectationKind kind = ExpectationKind::kError;
  ExpectationScope scope = ExpectationScope::kForward;
  std::string macos;  // the condition as written: "*", "<15.0", ">=13.3,<15.0"
  MacosBounds bounds;
  std::string list, opinfo, mapping, source, reason;
  SourceLocation where;

  bool holds_on(MacosVersion macos) const;
  bool covers(std::string_view dtype) const;
  // decides_verdict() of this row: evidence enough of a failure to decide a verdict.
  bool is_failure() const;
};

// One release's expectations, indexed by operator.
class Expectations {
 public:
  // Throws UserError with file:line:col for anything that is not a line of the format.
  static Expectations parse(const std::string& text, const std::string& path);
  static Expectations load(const std::string& path);

  const std::string& path() const { return path_; }
  const std::string& release() const { return release_; }  // from the "# release:" line
  const std::string& hash() const { return hash_; }        // the file's content hash (content_hash())
  const std::vector<Expectation>& rows() const { return rows_; }
  size_t unmappable() const { return unmappable_; }  // rows of list entries with no ATen operator ("-")

  // The expectations of `scope` that hold for `op` ("aten::pow.Scalar") in `dtype` on `macos`, failures first and
  // the worst of them first (crash, error, wrong, unimplemented, flaky), then the others, each in file order.
  std::vector<const Expectation*> find(const std::string& op, std::string_view dtype, ExpectationScope scope,
                                       MacosVersion macos) const;
  // The rows that name this operator (its overload or its base name; not the every-operator rows), in file order.
  std::vector<const Expectation*> naming(const std::string& op) const;

 private:
  std::string path_, release_, hash_;
  std::vector<Expectation> rows_;
  size_t unmappable_ = 0;
  std::unordered_map<std::string, std::vector<size_t>> by_op_;  // "aten::pow", "aten::pow.Scalar", "*"
};

// The expectations file of a release folder (data/pytorch-X.Y.Z), loaded; nullopt when the folder has none.
std::optional<Expectations> load_release_expectations(const std::string& release_dir);

}  // namespace mps_audit::emu
