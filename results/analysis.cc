// Counting, grouping and ranking a run's records (see analysis.h).
#include "results/analysis.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "common/target.h"

namespace mps_audit {
namespace {

// "aten::_foreach_add_.List" -> "_foreach_add_"
std::string_view base_name(std::string_view op) {
  if (op.rfind("aten::", 0) == 0) op.remove_prefix(6);
  return op.substr(0, op.find('.'));
}

bool has(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}
bool starts(std::string_view s, std::string_view prefix) {
  return s.rfind(prefix, 0) == 0;
}
bool any_of(std::string_view s, std::initializer_list<std::string_view> parts) {
  return std::any_of(parts.begin(), parts.end(), [&](std::string_view p) { return has(s, p); });
}

// Severity for ranking offenders (higher is worse); pass, skip and xfail are no offence.
int offence(Verdict v) {
  switch (v) {
    case Verdict::kCrash: return 7;
    case Verdict::kTimeout: return 6;
    case Verdict::kMismatch: return 5;
    case Verdict::kError: return 4;
    case Verdict::kXpass: return 3;
    case Verdict::kUnsupported:
    case Verdict::kKnownFailure: return 2;
    case Verdict::kFallback: return 1;
    default: return 0;
  }
}

}  // namespace

std::string_view op_group(std::string_view op) {
  const std::string_view n = base_name(op);
  if (starts(n, "_foreach")) return "foreach";
  if (starts(n, "__") || any_of(n, {"bitwise", "logical"})) return "pointwise";  // __and__, __lshift__, ...
  static const std::set<std::string_view> kSparseAccessors = {
      "_indices", "_values", "_nnz", "indices", "values", "crow_indices", "col_indices", "ccol_indices", "row_indices"};
  if (any_of(n, {"sparse", "_coo", "_csr", "_csc", "_bsr", "_bsc", "to_dense", "coalesce"}) ||
      kSparseAccessors.count(n)) {
    return "sparse";
  }
  if (any_of(n, {"quantize", "q_", "_per_tensor", "_per_channel", "qscheme", "fake_quant", "int_repr", "fbgemm"}) ||
      starts(n, "_make_per")) {
    return "quantized";
  }
  if (any_of(n, {"nested", "_nt_"})) return "nested";
  if (has(n, "backward")) return "backward";
  if (starts(n, "linalg") || starts(n, "_linalg") ||
      any_of(n, {"cholesky", "lu_", "svd", "eig", "qr", "inverse", "det", "solve", "lstsq", "pinv", "matrix_",
                 "triangular", "ormqr", "geqrf", "householder"})) {
    return "linalg";
  }
  if (starts(n, "fft") || starts(n, "_fft") || any_of(n, {"stft", "istft"})) return "fft";
  if (starts(n, "special") || starts(n, "_special")) return "special";
  if (any_of(n, {"rand", "normal", "bernoulli", "multinomial", "dropout", "poisson", "exponential", "geometric",
                 "cauchy", "log_normal", "uniform", "random"})) {
    return "random";
  }
  if (any_of(n, {"conv",      "pool",         "norm",
                 "loss",      "softmax",      "embedding",
                 "upsample",  "pad",          "relu",
                 "elu",       "gelu",         "silu",
                 "mish",      "sigmoid",      "tanh",
                 "hardswish", "hardtanh",     "threshold",
                 "glu",       "grid_sampler", "pixel_",
                 "attention", "lstm",         "gru",
                 "rnn",       "linear",       "bilinear",
                 "ctc",       "affine_grid",  "im2col",
                 "col2im",    "unfold",       "channel_shuffle",
                 "prelu",     "softplus",     "shrink",
                 "logsigmoid"})) {
    return "nn";
  }
  if (any_of(n, {"sum",   "mean",      "prod",   "max",    "min",      "std",     "var",  "all",  "any",
                 "cum",   "logsumexp", "median", "mode",   "argm",     "aminmax", "amax", "amin", "count_nonzero",
                 "histc", "bincount",  "unique", "nansum", "kthvalue", "topk",    "sort"})) {
    return "reduction";
  }
  if (any_of(n, {"index", "gather", "scatter", "take", "put", "masked", "nonzero", "where", "select", "slice", "narrow",
                 "diagonal", "embedding", "searchsorted", "bucketize"})) {
    return "indexing";
  }
  if ((any_of(n, {"empty", "zeros", "ones", "full", "arange", "linspace", "logspace", "eye", "tensor", "clone", "copy",
                  "_to_copy", "scalar_tensor", "like", "from_file", "tril_indices", "triu_indices"}) &&
       !any_of(n, {"total", "atom"})) ||
      n == "to" || starts(n, "to_") || starts(n, "_to_")) {
    return "creation";
  }
  if (any_of(n, {"view",       "reshape", "expand",     "permute", "transpose", "squeeze", "unsqueeze",
                 "flatten",    "alias",   "as_strided", "split",   "chunk",     "unbind",  "stack",
                 "cat",        "movedim", "swap",       "flip",    "roll",      "repeat",  "tile",
                 "contiguous", "detach",  "real",       "imag",    "conj",      "resize",  "set_"}) ||
      n == "t" || n == "t_") {
    return "view";
  }
  if (any_of(n, {"add",         "sub",          "mul",     "div",       "pow",      "exp",       "log",
                 "sin",         "cos",          "tan",     "sqrt",      "abs",      "neg",       "sign",
                 "floor",       "ceil",         "round",   "trunc",     "frac",     "clamp",     "clip",
                 "fmod",        "remainder",    "bitwise", "logical",   "eq",       "ne",        "lt",
                 "le",          "gt",           "ge",      "lerp",      "erf",      "gamma",     "reciprocal",
                 "rsqrt",       "hypot",        "atan",    "fill",      "zero_",    "isnan",     "isinf",
                 "isfinite",    "nan_to_num",   "maximum", "minimum",   "fmax",     "fmin",      "xlogy",
                 "copysign",    "heaviside",    "square",  "addc",      "lshift",   "rshift",    "polar",
                 "angle",       "i0",           "sinc",    "digamma",   "trigamma", "polygamma", "expm1",
                 "deg2rad",     "rad2deg",      "gcd",     "lcm",       "ldexp",    "nextafter", "float_power",
                 "true_divide", "floor_divide", "logit",   "positive",  "mm",       "mv",        "dot",
                 "bmm",         "baddbmm",      "addmm",   "addmv",     "addr",     "outer",     "ger",
                 "vdot",        "inner",        "kron",    "tensordot", "einsum",   "cross",     "trace",
                 "tril",        "triu",         "diag",    "cdist",     "dist",     "renorm",    "histogram"})) {
    return "pointwise";
  }
  return "other";
}

const std::vector<std::string_view>& op_groups() {
  static const std::vector<std::string_view> groups = {
      "pointwise", "reduction", "indexing", "view",    "creation", "nn",        "backward", "linalg",
      "fft",       "special",   "random",   "foreach", "sparse",   "quantized", "nested",   "other"};
  return groups;
}

size_t VerdictCounts::of(Verdict v) const {
  return n[verdict_index(v)];
}

void VerdictCounts::add(Verdict v) {
  ++n[verdict_index(v)];
  ++total;
}

VerdictCounts count_verdicts(const std::vector<ProbeResult>& records) {
  VerdictCounts c;
  for (const auto& r : records) c.add(r.verdict);
  return c;
}

std::vector<std::string> dtypes_of(const std::vector<ProbeResult>& records) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& r : records) {
    if (seen.insert(r.dtype).second) out.push_back(r.dtype);
  }
  return out;
}

std::string expectations_sentence(const Results& results) {
  const RunEnvironment& env = results.environment;
  if (env.expectations.empty()) return "";
  size_t refused = 0, known = 0, xfail = 0, xpass = 0, carried = 0, bugs = 0;
  for (const auto& r : results.records) {
    if (r.basis == kBasisKnownBugs) ++bugs;
    if (!r.expectation) continue;
    ++carried;
    if (r.basis == kBasisExpectations) (r.verdict == Verdict::kUnsupported ? refused : known) += 1;
    if (!r.observed.empty() && r.verdict == Verdict::kXfail) ++xfail;
    if (!r.observed.empty() && r.verdict == Verdict::kXpass) ++xpass;
  }
  const std::string whose = fmt::format(
      "PyTorch {}'s own MPS test lists ({}), for {}", env.expectations_release.empty() ? "?" : env.expectations_release,
      env.expectations, env.expectations_mac.empty() ? "macOS " + env.expectations_macos : env.expectations_mac);
  const auto pairs = [](size_t n) { return fmt::format("{} op x dtype pair{}", n, n == 1 ? "" : "s"); };
  if (env.expectations_mode == "check") {
    return fmt::format(
        "{}: {} failed as they expect (xfail), {} passed though they expect a failure (xpass: the "
        "lists look stale)",
        whose, pairs(xfail), xpass);
  }
  return fmt::format(
             "{}: {} they expect to fail on a real Mac ran fine here: {} refused as not implemented for "
             "their dtype, {} known_failure; {} an entry of theirs",
             whose, pairs(refused + known), refused, known,
             carried == 1 ? "1 record carries" : fmt::format("{} records carry", carried)) +
         (env.known_bugs.empty()
              ? ""
              : fmt::format("; the known MPS bugs of {} make {} more known_failure", env.known_bugs, pairs(bugs)));
}

std::string_view verdict_symbol(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "✓";
    case Verdict::kFallback: return "↓";
    case Verdict::kMismatch: return "≠";
    case Verdict::kUnsupported: return "✗";
    case Verdict::kError: return "E";
    case Verdict::kCrash: return "💥";
    case Verdict::kTimeout: return "⏱";
    case Verdict::kSkip: return "·";
    case Verdict::kXfail: return "x";
    case Verdict::kXpass: return "X";
    case Verdict::kKnownFailure: return "!";
  }
  return "?";
}

namespace {

// What an annotation of each kind means, for the reports.
std::string annotation_meaning(const std::string& kind) {
  if (kind == "flaky") return "PyTorch's lists call it flaky: it fails at times and passes on the next run";
  if (kind == "not_a_bug") return "random or tie-dependent outputs, or no output to compare: not a device bug";
  if (kind == "not_seen_passing") return "1.13.1's allow list names the operator, not this dtype: not seen passing";
  if (kind == "whole OpInfo") return "an entry keyed on every dtype of an OpInfo, about some of its inputs";
  return "PyTorch expects a failure where the target had already shown what it does";
}

EvidenceRow& row_for(std::vector<EvidenceRow>& rows, std::map<std::string, size_t>& index, const std::string& key) {
  const auto [it, added] = index.emplace(key, rows.size());
  if (added) rows.push_back(EvidenceRow{key, "", "", 0, {}});
  return rows[it->second];
}

void count(EvidenceRow& row, const ProbeResult& r) {
  ++row.records;
  if (row.examples.size() < 4) row.examples.push_back(r.op + " " + r.dtype);
}

bool most_records_first(const EvidenceRow& a, const EvidenceRow& b) {
  return a.records != b.records ? a.records > b.records : a.key < b.key;
}

}  // namespace

Evidence evidence_of(const std::vector<ProbeResult>& records) {
  Evidence e;
  std::map<std::string, size_t> lists, bugs, conditional, annotations, looks_fixed;
  for (const auto& r : records) {
    bool decided = false;
    if (const auto& n = r.expectation) {
      if (n->decided) {
        count(row_for(e.lists, lists, fmt::format("PyTorch {}'s {}: {}", n->release, n->list, n->kind)), r);
        decided = true;
      } else {
        const std::string kind = n->every_dtype && n->kind != "flaky" && n->kind != "not_a_bug" ? "whole OpInfo"
                                 : n->kind == "flaky" || n->kind == "not_a_bug" || n->kind == "not_seen_passing"
                                     ? n->kind
                                     : "kept observed";
        EvidenceRow& row = row_for(e.annotations, annotations, kind);
        row.detail = annotation_meaning(kind);
        count(row, r);
      }
    }
    for (const auto& b : r.known_bugs) {
      const std::string history = fmt::format(
          "{}; {}", b.seen_in == "unknown" ? "first seen: not said" : "seen in " + b.seen_in, fixed_words(b));
      EvidenceRow& row = b.applies                      ? row_for(e.conditional, conditional, b.id)
                         : !b.decided                   ? row_for(e.annotations, annotations, b.id)
                         : r.verdict == Verdict::kXpass ? row_for(e.looks_fixed, looks_fixed, b.id)
                                                        : row_for(e.bugs, bugs, b.id);
      row.link = b.source;
      row.detail = fmt::format("{} ({}, when {}; {})", b.summary, b.kind, b.when, history);
      count(row, r);
      decided = decided || b.decided;
    }
    const bool failed = r.verdict == Verdict::kMismatch || r.verdict == Verdict::kError ||
                        r.verdict == Verdict::kCrash || r.verdict == Verdict::kTimeout ||
                        r.verdict == Verdict::kUnsupported;
    if (failed && !decided) ++e.observed;
  }
  for (auto* rows : {&e.lists, &e.bugs, &e.conditional, &e.annotations, &e.looks_fixed}) {
    std::stable_sort(rows->begin(), rows->end(), most_records_first);
  }
  return e;
}

namespace {

// A run's records by operator, the operators in first-seen order.
struct RecordsByOp {
  std::vector<std::string> ops;
  std::unordered_map<std::string, std::vector<const ProbeResult*>> by_op;
};

RecordsByOp records_by_op(const std::vector<ProbeResult>& records) {
  RecordsByOp g;
  for (const auto& r : records) {
    auto& list = g.by_op[r.op];
    if (list.empty()) g.ops.push_back(r.op);
    list.push_back(&r);
  }
  return g;
}

// Coverage per registry status, in the statuses' order, then any other status by name.
std::vector<StatusCoverage> status_coverage(const RecordsByOp& g) {
  static const std::vector<std::string> kStatusOrder = {
      "native", "cpu_fallback", "composite_explicit", "composite_implicit", "none", ""};
  std::map<std::string, StatusCoverage> coverage;
  for (const auto& op : g.ops) {
    const auto& list = g.by_op.at(op);
    StatusCoverage& c = coverage[list.front()->registry_status];
    c.status = list.front()->registry_status;
    ++c.operators;
    bool probed = false;
    for (const ProbeResult* r : list) {
      c.records.add(r->verdict);
      if (r->verdict == Verdict::kSkip) continue;
      probed = true;
      if (r->dtype == "float32") {
        ++c.has_float32;
        if (r->verdict == Verdict::kPass) ++c.pass_float32;
      }
    }
    if (probed) ++c.probed;
  }
  std::vector<StatusCoverage> out;
  for (const auto& s : kStatusOrder) {
    if (coverage.count(s)) out.push_back(coverage.at(s));
  }
  for (const auto& [status, c] : coverage) {
    if (std::find(kStatusOrder.begin(), kStatusOrder.end(), status) == kStatusOrder.end()) out.push_back(c);
  }
  return out;
}

// The ten worst offenders, core operators first, and every operator that fell back; counts the fallback records.
void add_offenders_and_fallbacks(const RecordsByOp& g, const CoreOps& core, Analysis& a) {
  for (const auto& op : g.ops) {
    const auto& list = g.by_op.at(op);
    const OpTier tier = op_tier(op, core);
    Offender o{op, tier, Verdict::kPass, {}, ""};
    int worst = 0;
    FallbackRow f{op, tier, list.front()->registry_status, {}, {}, 0};
    for (const ProbeResult* r : list) {
      f.by_dtype[r->dtype] = r->verdict;
      if (r->verdict == Verdict::kFallback) {
        ++f.fallback_dtypes;
        ++a.fallback_records;
        for (const auto& leaf : r->fallback_ops) {
          if (std::find(f.fallback_ops.begin(), f.fallback_ops.end(), leaf) == f.fallback_ops.end()) {
            f.fallback_ops.push_back(leaf);
          }
        }
      }
      const int k = offence(r->verdict);
      if (k == 0) continue;
      if (k > worst) {
        worst = k;
        o.worst = r->verdict;
        o.dtypes.clear();
        o.message = r->message;
      }
      if (k == worst) o.dtypes.push_back(r->dtype);
    }
    if (worst > 0) a.worst.push_back(std::move(o));
    if (f.fallback_dtypes > 0) a.fallbacks.push_back(std::move(f));
  }
  std::stable_sort(a.worst.begin(), a.worst.end(), [](const Offender& x, const Offender& y) {
    if (x.tier != y.tier) return x.tier < y.tier;
    const int kx = offence(x.worst), ky = offence(y.worst);
    if (kx != ky) return kx > ky;
    return x.dtypes.size() > y.dtypes.size();
  });
  if (a.worst.size() > 10) a.worst.resize(10);
  std::stable_sort(a.fallbacks.begin(), a.fallbacks.end(), [](const FallbackRow& x, const FallbackRow& y) {
    if (x.tier != y.tier) return x.tier < y.tier;
    if (x.fallback_dtypes != y.fallback_dtypes) return x.fallback_dtypes > y.fallback_dtypes;
    return x.op < y.op;
  });
}

// The failures of each failing verdict, grouped by operator and by message, the largest groups first.
std::vector<FailureSection> failure_sections(const RecordsByOp& g) {
  std::vector<FailureSection> out;
  for (Verdict v : kFailureVerdicts) {
    FailureSection s;
    s.verdict = v;
    std::map<std::string, size_t> message_index;
    for (const auto& op : g.ops) {
      FailureGroup group{op, {}, "", 0};
      std::set<std::string> messages;
      for (const ProbeResult* r : g.by_op.at(op)) {
        if (r->verdict != v) continue;
        ++s.records;
        if (group.items.empty()) group.detail = r->message;
        group.items.push_back(r->dtype);
        messages.insert(r->message);
        auto [it, inserted] = message_index.emplace(r->message, s.by_message.size());
        if (inserted) s.by_message.push_back({r->message, {}, "", 1});
        s.by_message[it->second].items.push_back(r->op + " " + r->dtype);
      }
      group.distinct_messages = messages.size();
      if (!group.items.empty()) s.by_operator.push_back(std::move(group));
    }
    if (s.records == 0) continue;
    std::stable_sort(s.by_operator.begin(), s.by_operator.end(),
                     [](const FailureGroup& x, const FailureGroup& y) { return x.items.size() > y.items.size(); });
    std::stable_sort(s.by_message.begin(), s.by_message.end(),
                     [](const FailureGroup& x, const FailureGroup& y) { return x.items.size() > y.items.size(); });
    out.push_back(std::move(s));
  }
  return out;
}

// Skips: by kind, and the 25 most common messages (their first 90 characters).
void add_skips(const std::vector<ProbeResult>& records, Analysis& a) {
  std::map<std::string, size_t> messages;
  for (const auto& r : records) {
    if (r.verdict != Verdict::kSkip) continue;
    ++a.skip_reasons[std::string(skip_reason(r))];
    ++messages[r.message.substr(0, 90)];
  }
  for (const auto& [m, k] : messages) a.skip_messages.emplace_back(m, k);
  std::stable_sort(a.skip_messages.begin(), a.skip_messages.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  if (a.skip_messages.size() > 25) a.skip_messages.resize(25);
}

}  // namespace

Analysis analyze(const Results& results) {
  return analyze(results, shipped_core_ops());
}

Analysis analyze(const Results& results, const CoreOps& core) {
  const std::vector<ProbeResult>& records = results.records;
  Analysis a;
  a.counts = count_verdicts(records);
  a.dtypes = dtypes_of(records);
  a.evidence = evidence_of(records);
  const RecordsByOp g = records_by_op(records);
  a.operators = g.ops.size();
  a.coverage = status_coverage(g);
  add_offenders_and_fallbacks(g, core, a);
  a.failures = failure_sections(g);
  a.conditional = conditional_failures(records);
  for (const auto& r : records) a.conditional_records += has_conditional_failure(r) ? 1 : 0;
  add_skips(records, a);
  return a;
}

std::vector<std::string> coverage_sentences(const Results& results, const Analysis& a) {
  const RunEnvironment& env = results.environment;
  const Target target{target_kind_named(env.target).value_or(TargetKind::kCpu), {}};
  const std::string key(target.backend());
  const std::string who = env.emulator.empty() ? "libtorch " + env.torch_version : "the emulated release";
  std::vector<std::string> out;
  for (const auto& c : a.coverage) {
    if (c.status.empty()) continue;
    std::string what;
    if (c.status == "native")
      what = fmt::format("{} implements for {}", who, key);
    else if (c.status == "cpu_fallback")
      what = fmt::format("{} registers for {} as always-CPU kernels", who, key);
    else if (c.status == "composite_explicit")
      what = "with one kernel for every backend (CompositeExplicitAutograd)";
    else if (c.status == "composite_implicit")
      what = "decomposed into other operators (CompositeImplicitAutograd)";
    else if (c.status == "none")
      what = fmt::format("without a {} kernel (the backend fallback)", key);
    else
      what = "of registry status " + c.status;
    std::string sentence =
        fmt::format("{} operator{} {}: {} probed", c.operators, c.operators == 1 ? "" : "s", what, c.probed);
    if (c.has_float32 > 0)
      sentence += fmt::format(", {} of the {} probed in float32 pass", c.pass_float32, c.has_float32);
    out.push_back(sentence);
  }
  out.push_back(fmt::format("fall back to the CPU: {} op x dtype pair{} of {} operator{}", a.fallback_records,
                            a.fallback_records == 1 ? "" : "s", a.fallbacks.size(),
                            a.fallbacks.size() == 1 ? "" : "s"));
  return out;
}

}  // namespace mps_audit
