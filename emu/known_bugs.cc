// Reading the ledger of known MPS bugs and applying it to records.
#include "emu/known_bugs.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "common/data_home.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "common/text.h"

namespace mps_audit::emu {

// Note [Known bugs]
// PyTorch's lists say what its own tests saw; users meet more: a crash at rank 5, wrong values above a size, a view's
// storage offset, repeated indices, a CPU scalar operand, a macOS minor version, a chip family. The ledger
// (data/mps_known_bugs.yaml, docs/expectations.md) holds such bugs, each citing the thread it comes from. A record
// meets an entry when the entry names its operator (or the operator's base name) and dtype, the bug is in the
// emulated release (seen in it or before, or not said; not fixed by it), the macOS condition holds, and the chip is
// one it names. The entry is then carried in the record; it decides the verdict only where
// - the ledger places the bug near the release: between the release it was seen in and the one that fixed it, or
//   with a fix not recorded, within two minor versions after it was seen (a bug reported at 2.0 is not assumed in
//   2.14), with the release it was seen in not recorded, within two before the fix; with neither, never, and
// - one of the record's samples met its input condition (condition_met(): the prober's samples say what they were
//   like, results/result.h SampleTraits; a condition the prober cannot build, `other`, is never met), and
// - it names no chip, or names the emulated one (--emu-chip any: a chip-dependent bug is noted, never applied), and
// - the record is still what the target gave (PyTorch's own lists come first, emu/expected_verdicts.cc):
//   on emulated MPS a pass becomes known_failure (an observed fallback, refusal or crash stays); on a real Mac a
//   failure is xfail and a pass is xpass, "looks fixed: confirm and close", with the thread to close.

namespace {

const std::regex kWhen(
    "any|other|non_contiguous|storage_offset|duplicate_indices|out_of_range_indices|cpu_scalar|empty|channels_last|"
    "rank_ge:[0-9]+|size_gt:[0-9]+|numel_gt:[0-9]+|kwarg:[a-z_]+");
const std::regex kVersion("unknown|[0-9]+\\.[0-9]+\\.[0-9]+");
constexpr const char* kKinds[] = {"wrong_result", "crash", "hang", "error"};

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  SourceLocation at(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    if (m.is_null()) return {path_};
    return {path_, m.line + 1, m.column + 1};
  }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& message) const { throw UserError(message, at(n)); }

  std::string scalar(const YAML::Node& entry, const char* key, bool required) const {
    const YAML::Node n = entry[key];
    if (!n) {
      if (required) fail(entry, fmt::format("entry has no '{}'", key));
      return "";
    }
    if (!n.IsScalar()) fail(n, fmt::format("'{}' must be a string", key));
    return n.as<std::string>();
  }
  std::vector<std::string> list(const YAML::Node& entry, const char* key, bool required) const {
    const YAML::Node n = entry[key];
    if (!n) {
      if (required) fail(entry, fmt::format("entry has no '{}'", key));
      return {};
    }
    if (!n.IsSequence() || n.size() == 0) fail(n, fmt::format("'{}' must be a list of at least one string", key));
    std::vector<std::string> out;
    for (const auto& item : n) {
      if (!item.IsScalar()) fail(item, fmt::format("'{}' must be a list of strings", key));
      out.push_back(item.as<std::string>());
    }
    return out;
  }

  KnownBug entry(const YAML::Node& e) const {
    if (!e.IsMap()) fail(e, "an entry must be a mapping");
    KnownBug b;
    b.where = at(e);
    b.id = scalar(e, "id", true);
    b.ops = list(e, "ops", true);
    for (const auto& op : b.ops) {
      if (op.rfind("aten::", 0) != 0) fail(e["ops"], fmt::format("operator '{}': expected aten::NAME", op));
    }
    b.dtypes = list(e, "dtypes", true);
    if (std::find(b.dtypes.begin(), b.dtypes.end(), "all") != b.dtypes.end()) b.dtypes.clear();
    b.when = scalar(e, "when", true);
    if (!std::regex_match(b.when, kWhen)) {
      fail(e["when"], fmt::format("unknown condition '{}': expected any, other, non_contiguous, storage_offset, "
                                  "duplicate_indices, out_of_range_indices, cpu_scalar, empty, channels_last, "
                                  "rank_ge:N, size_gt:N, numel_gt:N or kwarg:NAME",
                                  b.when));
    }
    b.kind = scalar(e, "kind", true);
    if (std::find(std::begin(kKinds), std::end(kKinds), b.kind) == std::end(kKinds)) {
      fail(e["kind"], fmt::format("unknown kind '{}': expected wrong_result, crash, hang or error{}", b.kind,
                                  did_you_mean(b.kind, {"wrong_result", "crash", "hang", "error"})));
    }
    for (const char* key : {"seen_in", "fixed_in"}) {
      std::string v = scalar(e, key, std::string(key) == "fixed_in");
      if (v.empty()) v = "unknown";
      if (!std::regex_match(v, kVersion)) fail(e[key], fmt::format("{} '{}': expected X.Y.Z or unknown", key, v));
      (std::string(key) == "seen_in" ? b.seen_in : b.fixed_in) = v;
    }
    b.macos = scalar(e, "macos", false);
    if (!b.macos.empty()) {
      std::string bad;
      size_t offset = 0;
      const auto bounds = parse_macos_condition(b.macos, bad, offset);
      if (!bounds)
        fail(e["macos"], fmt::format("macOS condition '{}': expected bounds such as '<15.0', '>=13.3'", bad));
      b.bounds = *bounds;
    }
    for (const auto& chip : list(e, "chips", false)) {
      if (chip == "any") fail(e["chips"], "chips: name m1 to m5, or leave 'chips' out for every chip");
      try {
        b.chips.push_back(parse_chip("chips", chip));
      } catch (const UserError& bad) {
        fail(e["chips"], bad.message());
      }
    }
    b.when_detail = scalar(e, "when_detail", false);
    b.source = scalar(e, "source", true);
    b.fix = scalar(e, "fix", false);
    b.summary = scalar(e, "summary", true);
    return b;
  }

 private:
  std::string path_;
};

std::string kind_words(const std::string& kind) {
  if (kind == "wrong_result") return "wrong results";
  if (kind == "crash") return "a crash";
  if (kind == "hang") return "a hang";
  return "an error";
}

// "seen in 2.7.0, fixed in 2.14.0" / "not fixed as of 2.11.0"
std::string history(const KnownBug& b, const std::string& release) {
  return fmt::format("{}{}", b.seen_in == "unknown" ? "" : "seen in " + b.seen_in + ", ",
                     b.fixed_in == "unknown" ? "not known fixed as of " + release : "fixed in " + b.fixed_in);
}

}  // namespace

bool KnownBug::in_release(const std::string& release) const {
  if (seen_in != "unknown" && compare_versions(release, seen_in) < 0) return false;
  return fixed_in == "unknown" || compare_versions(release, fixed_in) < 0;
}

namespace {

// Minor versions in release order: 2.0 followed 1.13. nullopt for no X.Y.Z.
std::optional<int> minor_ordinal(const std::string& version) {
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2 || major < 1) return std::nullopt;
  return (major - 1) * 14 + minor;
}

constexpr int kNearby = 2;  // minor versions from a known end that an unknown one is assumed to reach

}  // namespace

bool KnownBug::decides_in(const std::string& release) const {
  if (!in_release(release)) return false;
  const auto at = minor_ordinal(release);
  const auto seen = seen_in == "unknown" ? std::nullopt : minor_ordinal(seen_in);
  const auto fixed = fixed_in == "unknown" ? std::nullopt : minor_ordinal(fixed_in);
  if (!at || (!seen && !fixed)) return false;
  if (seen && fixed) return true;
  return seen ? *at - *seen <= kNearby : *fixed - *at <= kNearby;
}

bool KnownBug::covers(const std::string& dtype) const {
  return dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

KnownBugs KnownBugs::parse(const std::string& text, const std::string& path) {
  Reader reader(path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw UserError(fmt::format("not YAML: {}", e.msg), {path, e.mark.line + 1, e.mark.column + 1});
  }
  if (!root.IsMap() || !root["format"] || !root["format"].IsScalar() ||
      root["format"].as<std::string>() != kKnownBugsFormat) {
    throw UserError(fmt::format("not a known-bugs ledger: expected 'format: {}'", kKnownBugsFormat),
                    reader.at(root["format"] ? root["format"] : root));
  }
  const YAML::Node entries = root["entries"];
  if (!entries || !entries.IsSequence()) reader.fail(root, "no 'entries' list");
  KnownBugs out;
  out.path_ = path;
  out.hash_ = content_hash(text);
  for (const auto& e : entries) {
    out.entries_.push_back(reader.entry(e));
    for (const auto& op : out.entries_.back().ops) out.by_op_[op].push_back(out.entries_.size() - 1);
  }
  return out;
}

KnownBugs KnownBugs::load(const std::string& path) {
  return parse(read_file(path), path);
}

std::vector<const KnownBug*> KnownBugs::find(const std::string& op, const std::string& dtype) const {
  std::vector<const KnownBug*> out;
  for (const KnownBug* b : naming(op)) {
    if (b->covers(dtype)) out.push_back(b);
  }
  return out;
}

std::vector<const KnownBug*> KnownBugs::naming(const std::string& op) const {
  std::vector<size_t> rows;
  for (const std::string& key : {op, base_operator_name(op)}) {
    if (const auto it = by_op_.find(key); it != by_op_.end())
      rows.insert(rows.end(), it->second.begin(), it->second.end());
    if (key == base_operator_name(op)) break;
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  std::vector<const KnownBug*> out;
  for (size_t i : rows) out.push_back(&entries_[i]);
  return out;
}

std::vector<std::string> KnownBugs::conditions_in(const std::string& release) const {
  std::vector<std::string> out;
  for (const auto& b : entries_) {
    if (!b.macos.empty() && b.seen_in != "unknown" && b.in_release(release)) out.push_back(b.macos);
  }
  return out;
}

std::optional<KnownBugs> load_shipped_known_bugs() {
  for (const auto& root : release_roots()) {
    const std::string path = root + "/" + kKnownBugsFile;
    if (path_exists(path)) return KnownBugs::load(path);
  }
  return std::nullopt;
}

std::string condition_met(const std::string& when, const SampleTraits& t) {
  const size_t colon = when.find(':');
  const std::string name = when.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : when.substr(colon + 1);
  const auto number = [&]() { return std::stoll(arg); };
  if (name == "any") return "every sample";
  if (name == "rank_ge" && t.max_rank >= number()) return fmt::format("a rank-{} argument", t.max_rank);
  if (name == "size_gt" && t.max_size > number()) return fmt::format("a dimension of size {}", t.max_size);
  if (name == "numel_gt" && t.max_numel > number()) return fmt::format("an argument of {} elements", t.max_numel);
  if (name == "non_contiguous" && t.non_contiguous) return "a non-contiguous argument";
  if (name == "storage_offset" && t.storage_offset) return "an argument at a storage offset";
  if (name == "duplicate_indices" && t.duplicate_indices) return "duplicate indices";
  if (name == "out_of_range_indices" && t.out_of_range_indices) return "out-of-range indices";
  if (name == "cpu_scalar" && t.cpu_scalar) return "a CPU scalar operand";
  if (name == "empty" && t.empty) return "an empty argument";
  if (name == "channels_last" && t.channels_last) return "a channels-last argument";
  if (name == "kwarg" && std::find(t.kwargs.begin(), t.kwargs.end(), arg) != t.kwargs.end()) {
    return fmt::format("the keyword argument {}", arg);
  }
  return "";
}

void apply_known_bugs(ProbeResult& r, const KnownBugs& bugs, const std::string& release, const EmulatedMac& mac,
                      ExpectationMode mode) {
  if (mode == ExpectationMode::kOff || r.verdict == Verdict::kSkip) return;
  std::optional<size_t> decided;  // its index in r.known_bugs
  for (const KnownBug* b : bugs.find(r.op, r.dtype)) {
    if (!b->in_release(release) || !holds_on(b->bounds, mac.macos)) continue;
    const bool on_chip = b->chips.empty() || std::find(b->chips.begin(), b->chips.end(), mac.chip) != b->chips.end();
    if (!on_chip && mac.chip != Chip::kAny) continue;
    KnownBugNote note{b->id,      b->kind,     b->when,   condition_met(b->when, r.traits),
                      b->seen_in, b->fixed_in, b->source, b->summary};
    const bool decides = !note.met_by.empty() && on_chip && b->decides_in(release) && r.observed.empty() && !decided;
    r.known_bugs.push_back(std::move(note));
    if (!decides) continue;
    const KnownBugNote& n = r.known_bugs.back();
    const std::string why =
        fmt::format("known MPS bug {} ({}, {}{}; met by {}): {} {}", b->id, kind_words(b->kind), history(*b, release),
                    b->chips.empty() ? "" : ", on " + mac.describe(), n.met_by, b->summary, b->source);
    const bool passed = r.verdict == Verdict::kPass;
    const bool failed = r.verdict != Verdict::kPass && r.verdict != Verdict::kFallback &&
                        r.verdict != Verdict::kXfail && r.verdict != Verdict::kXpass;
    if (mode == ExpectationMode::kPredict && passed) {
      r.observed = "pass";
      r.basis = kBasisKnownBugs;
      r.verdict = Verdict::kKnownFailure;
      r.message = fmt::format("expected to fail on a real Mac: {} (emulated: here it gave pass)", why);
    } else if (mode == ExpectationMode::kCheck && (passed || failed)) {
      r.observed = std::string(to_string(r.verdict));
      r.verdict = passed ? Verdict::kXpass : Verdict::kXfail;
      r.message = passed ? fmt::format("looks fixed: confirm and close {}: passed, though {}", b->source, why)
                         : fmt::format("expected failure, {}: {}", why, r.message);
    } else {
      continue;
    }
    decided = r.known_bugs.size() - 1;
    r.known_bugs.back().decided = true;
  }
  // The entry that decided comes first.
  if (decided) {
    const auto it = r.known_bugs.begin() + static_cast<std::ptrdiff_t>(*decided);
    std::rotate(r.known_bugs.begin(), it, it + 1);
  }
}

}  // namespace mps_audit::emu
