// What a run's records add up to, computed once for every report: counts per verdict, operator groups, coverage
// per registry status, the worst offenders, the operators that fall back, failures grouped by operator and by
// message. Renderers only format these.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "registry/op_tier.h"
#include "results/results_file.h"

namespace mps_audit {

// The family an operator belongs to, from its name: "foreach", "linalg", "fft", "special", "sparse", "quantized",
// "nested", "random", "backward", "nn" (convolution, pooling, normalisation, losses, activations, padding,
// upsampling, attention, RNNs), "reduction", "indexing", "creation", "view", "pointwise" or "other".
// JUnit suites and the HTML filters group by it.
std::string_view op_group(std::string_view op);
// Every group op_group() can return, in display order.
const std::vector<std::string_view>& op_groups();

struct VerdictCounts {
  std::array<size_t, kAllVerdicts.size()> n{};
  size_t total = 0;
  size_t of(Verdict v) const;
  void add(Verdict v);
};
VerdictCounts count_verdicts(const std::vector<ProbeResult>& records);

// The dtypes of a run, in the order they were first seen.
std::vector<std::string> dtypes_of(const std::vector<ProbeResult>& records);

// Coverage of one registry status (native, cpu_fallback, ...; "" when the run had no registry): how many of its
// operators were probed at all, and how their records came out.
struct StatusCoverage {
  std::string status;
  size_t operators = 0;     // operators of this status in the run
  size_t probed = 0;        // of them, with at least one record that is not a skip
  size_t pass_float32 = 0;  // of them, whose float32 record is pass
  size_t has_float32 = 0;   // of them, with a float32 record that is not a skip
  VerdictCounts records;    // op x dtype records of this status
};

// One operator whose records went worst.
struct Offender {
  std::string op;
  OpTier tier = OpTier::kPublic;
  Verdict worst = Verdict::kPass;
  std::vector<std::string> dtypes;  // those with the worst verdict
  std::string message;              // of the first of them
};

// One operator that fell back to the CPU in at least one dtype.
struct FallbackRow {
  std::string op;
  OpTier tier = OpTier::kPublic;
  std::string registry_status;
  std::map<std::string, Verdict> by_dtype;  // every probed dtype of the operator
  std::vector<std::string> fallback_ops;    // the leaf operators that ran on the CPU, across dtypes
  size_t fallback_dtypes = 0;
};

// Failures of one verdict, grouped.
struct FailureGroup {
  std::string key;                 // the operator, or the message
  std::vector<std::string> items;  // dtypes (by operator) or "op dtype" (by message)
  std::string detail;              // the message (by operator: of the first dtype) or ""
  size_t distinct_messages = 1;    // by operator: how many different messages its dtypes gave
};
struct FailureSection {
  Verdict verdict = Verdict::kError;
  size_t records = 0;
  std::vector<FailureGroup> by_operator;  // most dtypes first
  std::vector<FailureGroup> by_message;   // most records first
};

// What a run's verdicts rest on beyond what the target showed, and the evidence that only annotates (Note [Expected
// verdicts] in emu/expected_verdicts.cc, Note [Known bugs] in emu/known_bugs.cc).
struct EvidenceRow {
  std::string key;     // "PyTorch 1.13.1's BLOCKLIST: crash", "pytorch-154881", "flaky"
  std::string link;    // a known bug's thread
  std::string detail;  // a known bug's summary and history, or what an annotation means
  size_t records = 0;
  std::vector<std::string> examples;  // "aten::cumsum float32", the first few
};
struct Evidence {
  std::vector<EvidenceRow> lists;        // PyTorch's lists decided these records, by list and kind
  std::vector<EvidenceRow> bugs;         // the ledger decided these, by bug
  std::vector<EvidenceRow> conditional;  // the ledger's bugs these records meet under a condition, by bug
  size_t observed = 0;                   // failures the target showed itself
  std::vector<EvidenceRow> annotations;  // entries that decided nothing, by kind, then ledger entries no sample met
  std::vector<EvidenceRow> looks_fixed;  // real Mac: ledger entries a met sample passed (xpass), by bug
  bool empty() const {
    return lists.empty() && bugs.empty() && conditional.empty() && annotations.empty() && looks_fixed.empty();
  }
};
Evidence evidence_of(const std::vector<ProbeResult>& records);

// A record that passes (or falls back) for its ordinary samples and fails under a condition (Note [Conditional
// failures] in emu/known_bugs.cc): one row per condition that failed, and per known bug one of the record's own
// samples met.
struct ConditionalFailure {
  std::string op, dtype;
  Verdict verdict = Verdict::kPass;  // the record's
  std::string sample;                // the condition sample ("recorded:0+view", "repro:pytorch-169342"); "" its own
  std::string condition;             // in words: "a non-contiguous view at an offset", "the thread's own call"
  std::string failure;               // "wrong results", "a crash", or what the target gave: "mismatch"
  bool observed = false;             // the target showed it; else a known bug predicts it
  std::string message;               // what the target gave under the condition, where it failed there itself
  bool limit = false;                // a limit of MPS the emulated kernel enforced (emu/mps_limits.h) gave it
  std::string bug, link, seen_in, fixed_in, fix_candidate, summary;  // the known bug behind it, where one is
};
std::vector<ConditionalFailure> conditional_failures(const std::vector<ProbeResult>& records);
// " (observed)", " (an MPS limit, emulated)" or "": what a conditional failure rests on, for the reports.
std::string evidence_words(const ConditionalFailure& f);
std::vector<ConditionalFailure> conditional_failures(const ProbeResult& r);
// "a non-contiguous view at an offset" for "view"; "the thread's own call" for a repro.
std::string condition_words(const std::string& condition);

struct Analysis {
  VerdictCounts counts;
  std::vector<std::string> dtypes;
  size_t operators = 0;
  std::vector<StatusCoverage> coverage;  // native first, then the other statuses in registry order
  // Both by tier (Note [Operator tiers] in registry/op_tier.cc): the Core ATen opset first.
  std::vector<Offender> worst;         // then worst first; at most 10
  std::vector<FallbackRow> fallbacks;  // then most dtypes falling back first, then by name
  size_t fallback_records = 0;
  std::vector<FailureSection>
      failures;  // crash, timeout, error, mismatch, xpass, unsupported, known_failure, xfail: those present
  std::vector<ConditionalFailure> conditional;                // by operator, as the records come
  size_t conditional_records = 0;                             // records with a conditional failure
  std::map<std::string, size_t> skip_reasons;                 // skip_reason -> records
  std::vector<std::pair<std::string, size_t>> skip_messages;  // the most common skip messages (first 90 chars)
  Evidence evidence;
};

// The verdicts a failure section is made for, worst first.
inline constexpr std::array<Verdict, 8> kFailureVerdicts = {
    Verdict::kCrash, Verdict::kTimeout,     Verdict::kError,        Verdict::kMismatch,
    Verdict::kXpass, Verdict::kUnsupported, Verdict::kKnownFailure, Verdict::kXfail};

// Tiers from the newest shipped release's Core ATen opset (shipped_core_ops()), or from `core`.
Analysis analyze(const Results& results);
Analysis analyze(const Results& results, const CoreOps& core);

// Sentences of coverage, with their denominators, e.g. "465 operators the emulated release implements for MPS:
// 465 probed, 452 of the 459 probed in float32 pass", and the fallbacks' count.
std::vector<std::string> coverage_sentences(const Results& results, const Analysis& a);

// What PyTorch's own MPS expectations did to a run, one sentence (empty when the run applied none): on emulated MPS,
// "PyTorch 2.11.0's own MPS test lists, for macOS 14: 210 op x dtype pairs they expect to fail ran fine here: 88
// refused as not implemented for their dtype, 122 known_failure"; on a real Mac, the xfail and xpass counts.
std::string expectations_sentence(const Results& results);

// One character per verdict for matrices, with a legend.
std::string_view verdict_symbol(Verdict v);

}  // namespace mps_audit
