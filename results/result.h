// The prober's typed result: one record per operator x dtype, the worst sample deciding. Reporters render these;
// they never decide a verdict.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mps_audit {

// In order of severity, worst last (see worse()).
enum class Verdict {
  kSkip,          // not probed: no reference, no inputs, or the spec says so
  kPass,          // native, and matches the CPU
  kXfail,         // failed, as the spec (or, on real MPS, PyTorch's own MPS test lists) says it does
  kFallback,      // matches, but (part of) the work ran on the CPU
  kUnsupported,   // the target refuses the op or dtype (NotImplementedError, dtype TypeError)
  kKnownFailure,  // ran fine here, but PyTorch's own MPS test lists expect it to fail on a real Mac (emulated MPS)
  kXpass,         // passed, though the spec (or, on real MPS, PyTorch's own MPS test lists) says it fails
  kMismatch,      // differs from the CPU beyond tolerance
  kError,         // another exception on the target while the CPU succeeded
  kTimeout,       // the probe did not finish in time
  kCrash,         // the probe killed its worker process
};

inline constexpr std::array<Verdict, 11> kAllVerdicts = {
    Verdict::kPass,        Verdict::kFallback, Verdict::kKnownFailure, Verdict::kMismatch,
    Verdict::kUnsupported, Verdict::kError,    Verdict::kCrash,        Verdict::kTimeout,
    Verdict::kSkip,        Verdict::kXfail,    Verdict::kXpass};

std::string_view to_string(Verdict v);
std::optional<Verdict> parse_verdict(std::string_view name);
// A verdict's position in kAllVerdicts (the order reports list verdicts in).
size_t verdict_index(Verdict v);
// The worse of two verdicts of one op x dtype (the worst sample decides).
Verdict worse(Verdict a, Verdict b);

// What a verdict rests on (every record says): a kernel that ran on the target; the emulated release's registry
// (which kernels it has, MPS's dtype rules) with the CPU's numbers; or PyTorch's own expectations of real MPS.
inline constexpr const char* kBasisKernel = "kernel";
inline constexpr const char* kBasisRegistry = "registry";
inline constexpr const char* kBasisExpectations = "expectations";
inline constexpr const char* kBasisKnownBugs = "known_bugs";  // the ledger of known MPS bugs (emu/known_bugs.h)
// A limit of MPS's kernels that the emulator enforces, where a Mac aborts (emu/mps_limits.h).
inline constexpr const char* kBasisLimits = "mps_limits";

// PyTorch's own expectation of real MPS for a record (emu/expectations.h): the entry of its MPS test lists that
// applies to the op x dtype, as the record carries it.
struct ExpectationNote {
  std::string kind;          // unimplemented, wrong, error, crash, flaky, not_a_bug
  std::string scope;         // forward, gradient
  std::string release;       // "2.11.0": whose lists
  std::string list;          // "UNIMPLEMENTED_XFAILLIST"
  std::string opinfo;        // the OpInfo the list names
  std::string source;        // "torch/testing/_internal/common_mps.py:412"
  std::string reason;        // the list's comment
  std::string macos;         // the condition: "*", "<15.0"
  bool every_dtype = false;  // the list keyed it on the whole OpInfo (None: every dtype), not on this dtype
  bool decided = false;      // it decided the record's verdict; else it annotates the record
};

// What a record's samples that ran on the target were like: the input conditions that known MPS bugs depend on
// (data/mps_known_bugs.yaml's `when`, emu/known_bugs.h). The prober fills it from every sample it ran on the target;
// a known bug applies to a record only when one of them met its condition.
struct SampleTraits {
  int max_rank = 0;                   // the highest rank of a tensor argument
  int64_t max_numel = 0;              // the most elements of one tensor argument
  int64_t max_size = 0;               // the largest size of one dimension of a tensor argument
  int64_t max_bytes = 0;              // the most bytes of one tensor argument
  bool non_contiguous = false;        // a tensor argument that is neither contiguous nor channels-last contiguous
  bool storage_offset = false;        // a tensor argument that starts at a storage offset (a view)
  bool duplicate_indices = false;     // an index argument with a value repeated
  bool out_of_range_indices = false;  // an index argument with a value outside its dimension (the CPU refuses it)
  bool cpu_scalar = false;            // a 0-d CPU tensor operand beside device tensors
  bool empty = false;                 // a tensor argument without elements
  bool channels_last = false;         // a 4-d or 5-d tensor argument in channels-last layout
  bool nan = false;                   // a floating-point tensor argument holding a NaN
  bool inf = false;                   // a floating-point tensor argument holding an infinity
  // Values a sample's tensor arguments hold that were not read (a recorded call's tensor described by its shape, too
  // large to keep): repeated or out-of-range indices, NaNs and infinities cannot be told.
  bool values_unknown = false;
  std::vector<std::string> kwargs;  // the keyword-only arguments a sample set ("dtype"), sorted, each once
  // The other arguments' values by schema name, as text ("0", "true", "none", "floor", "[1, 2]"), each value once,
  // sorted: what the ledger's `arg:` conditions read. Defaults included: a sample that left `dim` out had dim none.
  std::map<std::string, std::vector<std::string>> args;

  bool operator==(const SampleTraits& o) const;
  // Adds what another sample was like.
  void merge(const SampleTraits& o);
};

// A known MPS bug of the ledger (emu/known_bugs.h) that a record may meet, as the record carries it.
struct KnownBugNote {
  std::string id;        // "pytorch-154881"
  std::string kind;      // wrong_result, crash, hang, error
  std::string when;      // the input condition, its atoms joined by " and ": "rank_ge:5 and arg:dim=0"
  std::string met_by;    // what a sample had that met it ("a rank-5 argument"); empty when no sample met it
  std::string seen_in;   // the first release it was seen in, or "unknown"
  std::string fixed_in;  // the release that fixed it, or "unknown"
  std::string source;    // the thread: "https://github.com/pytorch/pytorch/issues/154881"
  std::string summary;
  bool decided = false;  // it decided the record's verdict; else it annotates the record
  // The condition sample that met it (ConditionOutcome::sample), where one did and the record's own samples did not:
  // the bug is the record's only under that condition (Note [Conditional failures] in emu/known_bugs.cc).
  std::string condition;
  bool applies = false;  // met on this Mac (release window, chip), so the condition sample's verdict rests on it
  // A recorded call may meet it: what the recording kept cannot tell (`met_by` says what; Note [Known bugs a call
  // meets] in model/calls_replay.cc).
  bool maybe = false;
  // Where it is not known fixed: a pull request that says it fixes the thread, whose merge does not show.
  std::string fix_candidate;
};

// A condition sample's own outcome (Note [Condition samples] in probe/condition_samples.cc): what the operator did
// on inputs of one kind (a view, rank 5, a size, repeated indices, a CPU scalar, a known bug's own call), beside the
// record's verdict, which the record's ordinary samples decide. A crash is no condition's: it ends the worker, and is
// the record's verdict.
struct ConditionOutcome {
  std::string condition;  // "view", "rank5", "size1025", "size32769", "duplicate-indices", "cpu-scalar", "repro"
  std::string sample;     // "recorded:0+view"; a known bug's own call: "repro:pytorch-169342"
  Verdict verdict = Verdict::kPass;
  std::string observed;  // the verdict the target gave, where a known bug changed it; else empty
  std::string basis;  // kBasisKnownBugs where a known bug decided it, kBasisLimits a limit; else empty (the target's)
  std::string message;
  std::vector<std::string> fallback_ops;
  SampleTraits traits;
  std::vector<std::string> known_bugs;  // the ids of the record's known_bugs this sample met
};

// "wrong results", "a crash", "a hang", "an error" for a known bug's kind.
std::string bug_kind_words(const std::string& kind);

// A known bug's condition (KnownBugNote::when) in words: "non_contiguous and storage_offset" -> "non-contiguous, at a
// storage offset"; and with what it means: "for every input", "under a condition: non-contiguous, ...".
std::string when_words(const std::string& when);
std::string bug_condition_words(const KnownBugNote& b);
// "fixed in 2.5.0", "not known fixed", or where a pull request says it fixes the thread but its merge does not show,
// "not known fixed (a fix proposed, its merge unseen: URL)": every report's words for a known bug's fix; with
// `as_of`, "not known fixed as of 2.11.0 ...".
std::string fixed_words(const std::string& fixed_in, const std::string& fix_candidate, const std::string& as_of = "");
std::string fixed_words(const KnownBugNote& b);
// "pytorch-169342 (wrong results under a condition: non-contiguous, at a storage offset; not known fixed)", the id
// written as `id` (a link, in Markdown): the timeline's and the coverage page's words for a known bug.
std::string known_bug_brief(const KnownBugNote& b, const std::string& id);

// Whether a condition's outcome is a failure of the operator under that condition (a wrong result, a refusal, an
// error, or a known bug's prediction of one): a conditional failure of its record.
bool conditional_failure(const ConditionOutcome& c);
// Whether the record passes (or falls back) for ordinary inputs and fails under a condition.
bool has_conditional_failure(const struct ProbeResult& r);

struct ProbeResult {
  std::string op;     // "aten::add.Tensor"
  std::string dtype;  // "float32"
  Verdict verdict = Verdict::kSkip;
  std::vector<std::string> fallback_ops;  // operators that ran aten::_to_cpu on the target
  std::string message;                    // why, for anything but pass
  std::string sample;                     // the sample that decided the verdict
  std::string registry_status;            // the registry's static classification for the target's key
  std::vector<std::string> warnings;      // what the target run warned (warn-always on), each message once
  int samples = 0;                        // samples run
  // Comparison of the deciding sample (zero when values were not compared).
  double max_abs_error = 0, max_rel_error = 0;
  int64_t mismatches = 0;
  std::string first_mismatch;  // "[1, 2]"
  double seconds = 0;
  std::string basis;     // kBasisKernel, kBasisRegistry, kBasisExpectations, kBasisKnownBugs, kBasisLimits; empty: old
  std::string observed;  // the verdict the target gave, where PyTorch's expectations changed it; else empty
  std::optional<ExpectationNote> expectation;
  SampleTraits traits;
  // Samples whose outcome is not the record's own: a sample that failed only because of an operand of another dtype
  // (a complex or float64 operand of a float32 record), as "sample 3: <why>". The record's verdict rests on the rest.
  std::vector<std::string> sample_notes;
  // Known MPS bugs of the ledger for this op x dtype on the emulated (or real) Mac: the one that decided the verdict
  // first, when one did; the others annotate, or are the conditions' (KnownBugNote::condition).
  std::vector<KnownBugNote> known_bugs;
  // The condition samples' outcomes, in the order they ran; `traits` and the verdict are the ordinary samples'.
  std::vector<ConditionOutcome> conditions;
  // A program's replay (`mps-audit model --calls`): each replayed call's own traits, by its sample ("call:12"), so
  // that a known bug is said to meet the calls whose arguments meet its condition, not every call of the operator.
  std::map<std::string, SampleTraits> call_traits;
};

// Why an op x dtype was not probed, from a skip's message (empty for other verdicts):
//   spec                the spec says so
//   no_inputs           no inputs could be made for an argument's type: a sample in the spec would help
//   no_cpu_kernel       the CPU has no kernel for the operator (CUDA-only, or a library this libtorch lacks), or
//                       only a stub that raises for any input (a Dimname overload not supported yet), or a CPU
//                       path that needs a backend this libtorch lacks
//   cpu_dtype           the CPU kernel refuses the dtype: the operator does not take it
//   cpu_rejects_inputs  the CPU refused every synthesized input: a sample in the spec would help
//   cpu_crash           the CPU reference crashed or did not finish
//   cpu_unstable        the CPU reference differs from run to run (reads memory it never wrote): nothing to compare
//   linked_libtorch     the linked libtorch cannot show what the emulated release does (Note [Kernels the linked
//                       libtorch lacks] in emu/linked_gaps.cc), or cannot make the input (named tensors, gone in 2.14)
//   recording_device    a replayed call the recording's CPU made with an operator of its own, which a Mac does not
//                       call (Note [The recording device's own choices] in probe/device_choices.cc)
std::string_view skip_reason(const ProbeResult& r);
inline constexpr std::array<std::string_view, 9> kSkipReasons = {
    "spec",      "no_inputs",    "no_cpu_kernel",   "cpu_dtype",       "cpu_rejects_inputs",
    "cpu_crash", "cpu_unstable", "linked_libtorch", "recording_device"};

}  // namespace mps_audit
