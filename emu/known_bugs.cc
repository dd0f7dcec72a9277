// Reading the ledger of known MPS bugs and applying it to records.
#include "emu/known_bugs.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "common/data_home.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "common/text.h"
#include "emu/yaml_reader.h"

namespace mps_audit::emu {

// Note [Known bugs]
// PyTorch's lists say what its own tests saw; users meet more: a crash at rank 5, wrong values above a size, a view's
// storage offset, repeated indices, a CPU scalar operand, a macOS minor version, a chip family. The ledger
// (data/mps_known_bugs.yaml, data/README.md) holds such bugs, each citing the thread it comes from and the fix that
// closed it, with the thread's own call (its repro). A record meets an entry when the entry names its operator (or the
// operator's base name) and dtype, the bug is in the emulated release (seen in it or before, or not said; not fixed
// by it), the macOS condition holds, and the chip is one it names. The entry is then carried in the record; it
// decides something only where
// - the ledger places the bug near the release: between the release it was seen in and the one that fixed it, or
//   with a fix not recorded, within two minor versions after it was seen (a bug reported at 2.0 is not assumed in
//   2.14), with the release it was seen in not recorded, within two before the fix; with neither, never, and
// - a sample met its condition (condition_met(), Note [Conditions of known bugs] in bug_conditions.cc), and
// - it names no chip, or names the emulated one (--emu-chip any: a chip-dependent bug is noted, never applied), and
// - what it decides is still what the target gave (PyTorch's own lists come first, emu/expected_verdicts.cc).
//
// Note [Conditional failures]
// A record's verdict is what its ordinary samples (the spec's, the recorded ones, synthesized ones) show, and only an
// unconditional bug (`any`: every input of its dtypes) decides it: on emulated MPS a pass becomes known_failure (an
// observed fallback, refusal or crash stays); on a real Mac a failure is xfail and a pass is xpass, "looks fixed:
// confirm and close", with the thread to close. A bug with a narrower condition (a view, rank 5, a size, an argument's
// value) is a conditional failure: the operator works for ordinary inputs and fails under it. It applies where a
// sample met its condition: then the condition sample that met it (ProbeResult::conditions) takes the verdict the bug
// gives, as above, and the record says which bug and which condition, beside its own verdict, which stays. So
// conv2d on 2.11.0 is a pass with a conditional failure on chunk() channel views (pytorch-169342), not "broken". Where
// one of the record's ordinary samples met such a condition, the bug applies to the record as a conditional failure
// too (KnownBugNote::applies without a condition), and its verdict stays.

namespace {

constexpr const char* kKinds[] = {"wrong_result", "crash", "hang", "error"};
const std::vector<std::string> kEntryKeys = {"id",
                                             "source",
                                             "summary",
                                             "kind",
                                             "ops",
                                             "dtypes",
                                             "when",
                                             "when_detail",
                                             "seen_in",
                                             "seen_in_note",
                                             "macos",
                                             "chips",
                                             "fix",
                                             "fix_merged",
                                             "fix_evidence",
                                             "cherry_picked_into",
                                             "fixed_in_stated",
                                             "fix_candidate",
                                             "fix_candidate_note",
                                             "fixed_in",
                                             "checked",
                                             "repro",
                                             "repro_note"};

class Reader : public YamlReader {
 public:
  using YamlReader::YamlReader;

  std::vector<std::string> when(const YAML::Node& e) const {
    const YAML::Node n = e["when"];
    if (!n) fail(e, "entry has no 'when'");
    std::vector<std::string> atoms =
        n.IsScalar() ? std::vector<std::string>{n.as<std::string>()} : list(e, "when", true);
    for (size_t k = 0; k < atoms.size(); ++k) {
      if (!std::regex_match(atoms[k], known_bug_atom())) {
        fail(n.IsScalar() ? n : n[k],
             fmt::format("unknown condition '{}': expected any, other, non_contiguous, storage_offset, channels_last, "
                         "empty, duplicate_indices, out_of_range_indices, cpu_scalar, nan, inf, rank_ge:N, "
                         "size_gt:N, numel_gt:N, bytes_gt:N or arg:NAME<op>VALUE (op one of = != > >= < <=)",
                         atoms[k]));
      }
    }
    if (atoms.size() > 1 && std::find(atoms.begin(), atoms.end(), "any") != atoms.end()) {
      fail(n, "'any' stands alone: every input meets it");
    }
    return atoms;
  }

  KnownBugRepro repro(const YAML::Node& r) const {
    if (!r.IsMap()) fail(r, "'repro' must be a mapping: {op, args}");
    for (const auto& kv : r) {
      const std::string key = kv.first.as<std::string>();
      if (key != "op" && key != "args" && key != "cpu" && key != "note") {
        fail(kv.first,
             fmt::format("unknown key '{}' in repro{}", key, did_you_mean(key, {"op", "args", "cpu", "note"})));
      }
    }
    KnownBugRepro out;
    out.where = at(r);
    out.op = scalar(r, "op", true);
    if (out.op.rfind("aten::", 0) != 0) fail(r["op"], fmt::format("operator '{}': expected aten::NAME", out.op));
    out.args = r["args"] ? r["args"] : YAML::Node(YAML::NodeType::Map);
    if (!out.args.IsMap()) fail(r["args"], "repro args must map argument names to values");
    if (r["cpu"]) {
      const std::string cpu = scalar(r, "cpu", false);
      if (cpu != "raises" && cpu != "varies") fail(r["cpu"], "repro cpu: the values are 'raises' and 'varies'");
      out.cpu_raises = cpu == "raises";
      out.cpu_varies = cpu == "varies";
    }
    out.note = scalar(r, "note", false);
    return out;
  }

  KnownBug entry(const YAML::Node& e) const {
    if (!e.IsMap()) fail(e, "an entry must be a mapping");
    only_keys(e, kEntryKeys, "an entry");
    KnownBug b;
    b.where = at(e);
    b.id = scalar(e, "id", true);
    b.ops = list(e, "ops", true);
    for (const auto& op : b.ops) {
      if (op.rfind("aten::", 0) != 0) fail(e["ops"], fmt::format("operator '{}': expected aten::NAME", op));
    }
    b.dtypes = list(e, "dtypes", true);
    if (std::find(b.dtypes.begin(), b.dtypes.end(), "all") != b.dtypes.end()) b.dtypes.clear();
    b.when = when(e);
    b.kind = scalar(e, "kind", true);
    if (std::find(std::begin(kKinds), std::end(kKinds), b.kind) == std::end(kKinds)) {
      fail(e["kind"], fmt::format("unknown kind '{}': expected wrong_result, crash, hang or error{}", b.kind,
                                  did_you_mean(b.kind, {"wrong_result", "crash", "hang", "error"})));
    }
    b.seen_in = version(e, "seen_in", false);
    b.seen_in_note = scalar(e, "seen_in_note", false);
    b.fixed_in = version(e, "fixed_in", true);
    b.fix = scalar(e, "fix", false);
    b.fix_merged = date(e, "fix_merged", false);
    if (!b.fix.empty() && b.fix_merged.empty()) fail(e["fix"], "a fix needs 'fix_merged': the date it merged");
    b.fix_candidate = scalar(e, "fix_candidate", false);
    b.checked = date(e, "checked", false);
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
    b.summary = scalar(e, "summary", true);
    if (e["repro"]) {
      b.repro = repro(e["repro"]);
      if (b.repro->note.empty()) b.repro->note = scalar(e, "repro_note", false);
    }
    return b;
  }
};

// "seen in 2.7.0, fixed in 2.14.0" / "not fixed as of 2.11.0"
std::string history(const KnownBug& b, const std::string& release) {
  return fmt::format("{}{}", b.seen_in == "unknown" ? "" : "seen in " + b.seen_in + ", ",
                     fixed_words(b.fixed_in, b.fix_candidate, release));
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
  const YAML::Node entries = reader.document_list(text, kKnownBugsFormat, "a known-bugs ledger", "entries");
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
  std::vector<const KnownBug*> out;
  for (const size_t i : rows_naming(by_op_, op)) out.push_back(&entries_[i]);
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
  const std::string path = release_root_file(kKnownBugsFile);
  if (path.empty()) return std::nullopt;
  return KnownBugs::load(path);
}

KnownBugNote note_of(const KnownBug& b) {
  KnownBugNote note;
  note.id = b.id;
  note.kind = b.kind;
  note.when = b.condition_text();
  note.seen_in = b.seen_in;
  note.fixed_in = b.fixed_in;
  note.fix_candidate = b.fix_candidate;
  note.source = b.source;
  note.summary = b.summary;
  return note;
}

bool KnownBug::unconditional() const {
  return when.size() == 1 && when.front() == "any";
}

std::string KnownBug::condition_text() const {
  return fmt::format("{}", fmt::join(when, " and "));
}

namespace {

// The record's or a condition's verdict as the bug's prediction (emulated MPS) or check (a real Mac) makes it, with
// `why`; false where it leaves it as it is (an observed fallback, refusal or crash on emulated MPS).
bool decide(Verdict& verdict, std::string& observed, std::string& message, std::string& basis, ExpectationMode mode,
            const KnownBug& b, const std::string& why) {
  const bool passed = verdict == Verdict::kPass;
  const bool failed = verdict != Verdict::kPass && verdict != Verdict::kFallback && verdict != Verdict::kXfail &&
                      verdict != Verdict::kXpass && verdict != Verdict::kSkip;
  if (mode == ExpectationMode::kPredict && (passed || verdict == Verdict::kSkip)) {
    observed = std::string(to_string(verdict));
    basis = kBasisKnownBugs;
    verdict = Verdict::kKnownFailure;
    message = fmt::format("expected to fail on a real Mac: {} (emulated: here it gave {})", why, observed);
    return true;
  }
  if (mode == ExpectationMode::kCheck && (passed || failed)) {
    observed = std::string(to_string(verdict));
    verdict = passed ? Verdict::kXpass : Verdict::kXfail;
    message = passed ? fmt::format("looks fixed: confirm and close {}: passed, though {}", b.source, why)
                     : fmt::format("expected failure, {}: {}", why, message);
    return true;
  }
  return false;
}

}  // namespace

// Calls f(bug, in_window) for each entry of `op` x `dtype` that is in `release`, whose macOS condition holds on
// `mac`, and that names its chip (or any, where the emulated chip is any); `in_window`: it may decide there (the chip
// is its, and the ledger places the bug near the release).
void each_entry_on(const KnownBugs& bugs, const std::string& release, const EmulatedMac& mac, const std::string& op,
                   const std::string& dtype, const std::function<void(const KnownBug&, bool)>& f) {
  for (const KnownBug* b : bugs.find(op, dtype)) {
    if (!b->in_release(release) || !holds_on(b->bounds, mac.macos)) continue;
    const bool on_chip = b->chips.empty() || std::find(b->chips.begin(), b->chips.end(), mac.chip) != b->chips.end();
    if (!on_chip && mac.chip != Chip::kAny) continue;
    f(*b, on_chip && b->decides_in(release));
  }
}

std::vector<KnownBugNote> bugs_of_call(const KnownBugs& bugs, const std::string& release, const EmulatedMac& mac,
                                       const std::string& op, const std::string& dtype, const SampleTraits* traits) {
  std::vector<KnownBugNote> out;
  each_entry_on(bugs, release, mac, op, dtype, [&](const KnownBug& b, bool in_window) {
    ConditionMet met = traits ? condition_met(b, *traits)
                       : b.unconditional()
                           ? ConditionMet{ConditionMet::How::kYes, "every call"}
                           : ConditionMet{ConditionMet::How::kMaybe, "the replay did not run this call"};
    if (met.how == ConditionMet::How::kNo) return;
    KnownBugNote note = note_of(b);
    note.met_by = met.by;
    note.applies = met.yes() && in_window;
    note.maybe = met.maybe();
    out.push_back(std::move(note));
  });
  return out;
}

void apply_known_bugs(ProbeResult& r, const KnownBugs& bugs, const std::string& release, const EmulatedMac& mac,
                      ExpectationMode mode) {
  if (mode == ExpectationMode::kOff || r.verdict == Verdict::kSkip) return;
  std::optional<size_t> decided;  // its index in r.known_bugs
  each_entry_on(bugs, release, mac, r.op, r.dtype, [&](const KnownBug& b, bool in_window) {
    KnownBugNote note = note_of(b);
    const auto why = [&](const std::string& met_by) {
      return fmt::format("known MPS bug {} ({}, {}{}; met by {}): {} {}", b.id, bug_kind_words(b.kind),
                         history(b, release), b.chips.empty() ? "" : ", on " + mac.describe(), met_by, b.summary,
                         b.source);
    };
    // The record's own samples.
    const ConditionMet own = condition_met(b, r.traits);
    if (own.yes()) {
      note.met_by = own.by;
      if (b.unconditional()) {
        if (in_window && r.observed.empty() && !decided &&
            decide(r.verdict, r.observed, r.message, r.basis, mode, b, why(own.by))) {
          note.decided = true;
          decided = r.known_bugs.size();
        }
      } else {
        note.applies = in_window;
      }
      r.known_bugs.push_back(std::move(note));
      return;
    }
    // Else the first condition sample that met it (the bug's own call among them) is its.
    for (ConditionOutcome& c : r.conditions) {
      const ConditionMet met = condition_met(b, c.traits, c.sample == "repro:" + b.id);
      if (!met.yes()) continue;
      note.met_by = met.by;
      note.condition = c.sample;
      note.applies = in_window;
      c.known_bugs.push_back(b.id);
      if (in_window && c.basis.empty() && c.observed.empty()) {
        decide(c.verdict, c.observed, c.message, c.basis, mode, b, why(met.by));
      }
      break;
    }
    r.known_bugs.push_back(std::move(note));
  });
  // The entry that decided comes first.
  if (decided) {
    const auto it = r.known_bugs.begin() + static_cast<std::ptrdiff_t>(*decided);
    std::rotate(r.known_bugs.begin(), it, it + 1);
  }
}

}  // namespace mps_audit::emu
