// The limits of MPS's kernels (data/mps_limits.yaml, format mps-audit-mps-limits/1): a rank, an axis, a size past
// which a kernel aborts the process or refuses the call on a real Mac, each with where it is stated and the threads
// that met it. The emulator enforces them as a Mac's kernels do (Note [MPS limits] in mps_limits.cc).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/diagnostics.h"
#include "emu/expectations.h"

namespace mps_audit::emu {

inline constexpr const char* kMpsLimitsFile = "mps_limits.yaml";
inline constexpr const char* kMpsLimitsFormat = "mps-audit-mps-limits/1";

// What the limits look at in a call of an MPS kernel.
struct LimitedCall {
  std::vector<std::vector<int64_t>> shapes;  // each tensor argument's sizes, in argument order
  std::vector<int64_t> itemsizes;            // and its element size in bytes
  std::optional<int64_t> dim;               // the `dim` argument, where the operator has one (its default if not given)
  std::map<std::string, std::string> args;  // the other arguments' values, as argument_text() gives them
  std::vector<std::vector<int64_t>> results;  // each tensor result's sizes, once the kernel computed them
};

// One atom of a limit's `when` (Note [MPS limits] in mps_limits.cc lists them).
struct LimitAtom {
  enum class Quantity {
    kAxisFromLast,  // axis_from_last_gt:N  the first tensor argument, along `dim`, more than N from its last
    kRank,          // rank_gt:N            a tensor argument of rank above N
    kRankBelow,     // rank_lt:N            every tensor argument of rank below N
    kNumel,         // numel_gt:N           a tensor argument of more than N elements
    kBytes,         // bytes_gt:N           a tensor argument of more than N bytes
    kDim,           // dim_gt:N             a dimension of a tensor argument larger than N
    kResultDim,     // out_dim_gt:N         a dimension of a result larger than N
    kArgument,      // arg:NAME<op>VALUE    an argument's value, as the known bugs' `arg:` atoms compare it
  };
  Quantity quantity = Quantity::kRank;
  int64_t bound = 0;
  std::string name, op, value;  // of kArgument

  // What of `call` meets it ("a rank-5 tensor"); empty where nothing does.
  std::string met_by(const LimitedCall& call) const;
};

struct MpsLimit {
  std::string id;       // "ndarray-scan-sort-axis"
  std::string summary;  // what happens, in a sentence
  std::string outcome;  // crash (the process aborts), error (the call raises) or refusal (NotImplementedError)
  std::string message;  // what a Mac prints or raises
  std::string source;   // where the limit is stated
  std::vector<std::string> threads;
  std::vector<std::string> ops;   // "aten::cumsum" (every overload) or one overload
  std::vector<std::string> when;  // the atoms as written: ["out_dim_gt:65536", "rank_lt:5"]
  std::vector<LimitAtom> atoms;   // all must hold
  // The releases whose kernels meet it: from `since` (unknown: every release before `until`) to before `until`
  // (unknown: every release since).
  std::string since = "unknown", until = "unknown";
  std::string macos;  // "*" or bounds such as "<15.0"
  MacosBounds bounds;
  SourceLocation where;

  bool in_release(const std::string& release) const;
  // Whether an atom looks at the results: the limit is then checked once the kernel computed them.
  bool on_results() const;
  // What of `call` meets every atom ("a sort along dim 0 of a rank-5 tensor"); empty where one is not met.
  std::string met_by(const LimitedCall& call) const;
};

class MpsLimits {
 public:
  // Throws UserError with file:line:col for anything not of the format.
  static MpsLimits parse(const std::string& text, const std::string& path);
  static MpsLimits load(const std::string& path);

  const std::vector<MpsLimit>& limits() const { return limits_; }
  const std::string& path() const { return path_; }
  const std::string& hash() const { return hash_; }  // of the file's text
  // The limits of `release` on `macos` naming `op` (its overload or its base name): none for most operators, which
  // callers test first, before they look at a call.
  std::vector<const MpsLimit*> of(const std::string& op, const std::string& release, MacosVersion macos) const;
  // The macOS conditions of the limits of `release`, for the default --emu-macos (newest_named_macos()).
  std::vector<std::string> conditions_in(const std::string& release) const;

 private:
  std::string path_, hash_;
  std::vector<MpsLimit> limits_;
  std::unordered_map<std::string, std::vector<size_t>> by_op_;
};

// The limits of the first data home that has them; nullopt where none does.
std::optional<MpsLimits> load_shipped_mps_limits();

// What a kernel that met `limit` through `met_by` says: "<the Mac's message> (emulated MPS limit <id>: <met_by>;
// <source>)".
std::string limit_message(const MpsLimit& limit, const std::string& met_by);

}  // namespace mps_audit::emu
