// The release timeline of MPS support, from the shipped registries and PyTorch's own expectations.
#include "emu/timeline.h"

#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/diagnostics.h"
#include "common/output_file.h"
#include "common/target.h"
#include "common/text.h"
#include "emu/emulated_mac.h"
#include "emu/expectations.h"
#include "emu/known_bugs.h"
#include "registry/load_registry.h"
#include "registry/release_data.h"
#include "registry/release_range.h"

namespace mps_audit::emu {
namespace {

std::vector<ShippedRelease> releases_or_throw() {
  std::vector<ShippedRelease> shipped = shipped_releases();
  if (shipped.empty()) {
    throw UserError(
        "no release data found: the timeline reads the pytorch-X.Y.Z folders of $MPS_AUDIT_DATA_DIR "
        "and of the source tree's data/");
  }
  return shipped;
}

// Runs on MPS without the CPU fallback: a kernel of its own, or one composed of other operators.
bool runs_on_mps(const std::string& status) {
  return status == "native" || status == "composite_explicit" || status == "composite_implicit";
}

// The failure PyTorch's lists expect of `op` in `dtype` (forward, on `macos`), or nullptr.
const Expectation* expected_failure(const std::optional<Expectations>& e, const std::string& op,
                                    const std::string& dtype, MacosVersion macos) {
  if (!e) return nullptr;
  for (const Expectation* x : e->find(op, dtype, ExpectationScope::kForward, macos)) {
    if (x->is_failure()) return x;
  }
  return nullptr;
}

// Whether the lists expect `op` to work in `dtype` on MPS. Lists of failures (2.x) expect whatever they do not name
// to work; a release whose lists are an allow list of what passed (1.13.1) expects only what that names.
bool expected_to_work(const std::optional<Expectations>& e, bool allow_list, const std::string& op,
                      const std::string& dtype, MacosVersion macos) {
  if (!e) return !allow_list;
  bool allowed = !allow_list;
  for (const Expectation* x : e->find(op, dtype, ExpectationScope::kForward, macos)) {
    if (x->is_failure()) return false;
    allowed = allowed || x->kind == ExpectationKind::kPasses;
  }
  return allowed;
}

// What the lists expect to fail of `op` (forward, on `macos`): "LIST kind" -> the dtypes, "*" for every dtype.
std::map<std::string, std::set<std::string>> expected_failures(const std::optional<Expectations>& e,
                                                               const std::string& op, MacosVersion macos) {
  std::map<std::string, std::set<std::string>> out;
  if (!e) return out;
  for (const Expectation* x : e->naming(op)) {
    if (x->scope != ExpectationScope::kForward || !x->is_failure() || !x->holds_on(macos)) continue;
    std::set<std::string> dtypes(x->dtypes.begin(), x->dtypes.end());
    if (x->dtypes.empty()) dtypes.insert("*");
    dtypes.erase("complex32");  // as in the by-dtype column
    if (!dtypes.empty()) out[fmt::format("{} {}", x->list, to_string(x->kind))].insert(dtypes.begin(), dtypes.end());
  }
  return out;
}

// {"after": "1.13.1", "by": "2.6.0"}: both ends of the range, null where there is none (Note [Since, as a range]).
nlohmann::json range_json(const Timeline& t, const std::string& first) {
  const ReleaseRange r = since_range(t.releases, first);
  const auto or_null = [](const std::string& s) { return s.empty() ? nlohmann::json() : nlohmann::json(s); };
  return {{"after", or_null(r.after)}, {"by", or_null(r.by)}};
}

}  // namespace

Timeline compute_timeline(const std::string& ops_regex, MacosVersion macos) {
  std::regex filter;
  try {
    filter = std::regex(ops_regex.empty() ? ".*" : ops_regex);
  } catch (const std::regex_error& e) {
    throw UserError(fmt::format("--ops: invalid regular expression '{}': {}", ops_regex, e.what()));
  }
  Timeline t;
  t.macos = macos_text(macos);
  std::vector<Registry> registries;
  std::vector<std::optional<Expectations>> expectations;
  std::vector<bool> allow_list;
  const std::optional<KnownBugs> bugs = load_shipped_known_bugs();
  if (bugs) t.known_bugs = bugs->path();
  for (const auto& r : releases_or_throw()) {
    t.releases.push_back(r.version);
    t.dirs.push_back(r.dir);
    registries.push_back(load_registry(r.dir, "", "MPS"));
    expectations.push_back(load_release_expectations(r.dir));
    if (!expectations.back()) t.without_expectations.push_back(r.version);
    const auto& rows = expectations.back() ? expectations.back()->rows() : std::vector<Expectation>();
    allow_list.push_back(
        std::any_of(rows.begin(), rows.end(), [](const Expectation& x) { return x.kind == ExpectationKind::kPasses; }));
  }
  std::set<std::string> names;
  for (const auto& reg : registries) {
    for (const auto& e : reg.ops) {
      if (std::regex_search(e.name, filter)) names.insert(e.name);
    }
  }
  for (const auto& name : names) {
    OpTimeline o;
    o.op = name;
    std::set<std::string> dtypes;  // that some release's lists name for this operator
    for (size_t i = 0; i < registries.size(); ++i) {
      const RegistryEntry* e = registries[i].find(name);
      o.status.push_back(e ? std::string(to_string(e->status)) : "absent");
      if (o.native_since.empty() && o.status.back() == "native") o.native_since = t.releases[i];
      if (!expectations[i]) continue;
      for (const Expectation* x : expectations[i]->naming(name)) {
        if (x->scope == ExpectationScope::kForward && x->kind != ExpectationKind::kNotABug) {
          dtypes.insert(x->dtypes.begin(), x->dtypes.end());
        }
      }
    }
    dtypes.erase("complex32");  // not a dtype the tool probes, nor one MPS tensors take
    for (size_t i = 0; i < registries.size(); ++i) {
      const auto failing = expected_failures(expectations[i], name, macos);
      o.partial.push_back(!failing.empty());
      if (i + 1 == registries.size()) o.still_failing = failing;
    }
    const auto works_since = [&](const std::string& dtype) {
      for (size_t i = 0; i < registries.size(); ++i) {
        if (runs_on_mps(o.status[i]) && expected_to_work(expectations[i], allow_list[i], name, dtype, macos)) {
          return t.releases[i];
        }
      }
      return std::string();
    };
    o.works_since = works_since("float32");
    for (const auto& d : dtypes) {
      o.dtype_works_since[d] = works_since(d);
      if (const Expectation* x = expected_failure(expectations.back(), name, d, macos)) {
        o.dtype_held_back_by[d] = fmt::format("{} {}, {}", x->list, to_string(x->kind), x->source);
      }
    }
    if (bugs) {
      for (const KnownBug* b : bugs->naming(name)) {
        o.known_bugs.push_back(note_of(*b));
      }
    }
    t.ops.push_back(std::move(o));
  }
  return t;
}

ReleaseTimeline native_since(const std::vector<std::string>& ops,
                             const std::map<std::string, const Registry*>& loaded) {
  ReleaseTimeline out;
  for (const auto& r : shipped_releases()) {
    out.releases.push_back(r.version);
    const auto known = loaded.find(r.version);
    const Registry read = known == loaded.end() ? load_registry(r.dir, "", "MPS") : Registry();
    const Registry& reg = known == loaded.end() ? read : *known->second;
    for (const auto& op : ops) {
      const RegistryEntry* e = reg.find(op);
      if (e && e->status == OpStatus::kNative && !out.native_since.count(op)) out.native_since[op] = r.version;
    }
  }
  return out;
}

std::string render_timeline(const Timeline& t, const std::string& format) {
  const auto since = [&](const std::string& first) { return since_text(since_range(t.releases, first)); };
  const std::string releases = fmt::format("{}", fmt::join(t.releases, ", "));
  const std::string lacking = t.without_expectations.empty()
                                  ? ""
                                  : fmt::format(" ({} ship no expectations)", fmt::join(t.without_expectations, ", "));
  if (format == "json") {
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& o : t.ops) {
      nlohmann::json dtypes = nlohmann::json::object();
      for (const auto& [d, first] : o.dtype_works_since) {
        dtypes[d] = {{"works_since", range_json(t, first)}};
        if (const auto it = o.dtype_held_back_by.find(d); it != o.dtype_held_back_by.end()) {
          dtypes[d]["held_back_by"] = it->second;
        }
      }
      nlohmann::json bugs = nlohmann::json::array();
      for (const auto& b : o.known_bugs) {
        bugs.push_back({{"id", b.id},
                        {"kind", b.kind},
                        {"when", b.when},
                        {"seen_in", b.seen_in},
                        {"fixed_in", b.fixed_in},
                        {"source", b.source}});
      }
      ops.push_back({{"op", o.op},
                     {"status", o.status},
                     {"native_since", range_json(t, o.native_since)},
                     {"works_since", range_json(t, o.works_since)},
                     {"dtypes", dtypes},
                     {"known_bugs", bugs}});
    }
    return nlohmann::json{{"releases", t.releases},     {"release_dirs", t.dirs},
                          {"macos", t.macos},           {"without_expectations", t.without_expectations},
                          {"known_bugs", t.known_bugs}, {"ops", ops}}
               .dump(1) +
           "\n";
  }
  const auto dtype_text = [&](const OpTimeline& o, const char* separator) {
    std::vector<std::string> parts;
    for (const auto& [d, first] : o.dtype_works_since) {
      const auto it = o.dtype_held_back_by.find(d);
      parts.push_back(first.empty() && it != o.dtype_held_back_by.end() ? fmt::format("{}: not yet ({})", d, it->second)
                                                                        : fmt::format("{}: {}", d, since(first)));
    }
    return fmt::format("{}", fmt::join(parts, separator));
  };
  // "pytorch-154881 (a crash under a condition: rank 5 or more; fixed in 2.14.0)", linked in Markdown
  const auto bugs_text = [&](const OpTimeline& o, bool markdown, const char* separator) {
    std::vector<std::string> parts;
    for (const auto& b : o.known_bugs) {
      parts.push_back(known_bug_brief(b, markdown ? fmt::format("[{}]({})", b.id, b.source) : b.id));
    }
    return fmt::format("{}", fmt::join(parts, separator));
  };
  std::string out;
  if (format == "md") {
    out += fmt::format(
        "# Which release runs each operator on MPS\n\nPyTorch {}{}; PyTorch's own MPS test lists read for macOS {}. "
        "*Native since*: when it got an MPS kernel of its own; *works since*: when it began to run on MPS without the "
        "CPU fallback with the lists expecting no failure in float32; then each dtype the lists single out. Each is "
        "a range of the releases shipped: *after A, by B* holds in B and not in A, the shipped release before it; "
        "*by A* holds in the oldest one already. *Known bugs*: the ledger's (data/mps_known_bugs.yaml), with the "
        "release that fixed each.\n\n| operator | native since | works since | by dtype | known bugs |\n"
        "| --- | --- | --- | --- | --- |\n",
        releases, lacking, t.macos);
    for (const auto& o : t.ops) {
      out += fmt::format("| `{}` | {} | {} | {} | {} |\n", o.op, since(o.native_since), since(o.works_since),
                         dtype_text(o, "<br>"), bugs_text(o, true, "<br>"));
    }
    return out;
  }
  out += fmt::format("Which release runs each operator on MPS: PyTorch {}{}; PyTorch's own lists read for macOS {}\n",
                     releases, lacking, t.macos);
  out += fmt::format("{:<48} {:<23} {:<23} {}\n", "operator", "native since", "works since", "by dtype");
  for (const auto& o : t.ops) {
    const std::string bugs = bugs_text(o, false, ", ");
    out += fmt::format("{:<48} {:<23} {:<23} {}{}\n", o.op, since(o.native_since), since(o.works_since),
                       dtype_text(o, "; "), bugs.empty() ? "" : "; known bugs: " + bugs);
  }
  return out;
}

// Note [Native since, when asked]
// Which shipped release first had a native MPS kernel of each operator is read from every shipped release's
// registry: three YAML files besides the run's own, over half a second on two cores, and only the HTML report shows
// it. So a run reads them only when it writes that report (RunRequest::native_since), and results.json holds the
// timeline only then; `mps-audit render` and `merge` read them for results without one when they write the HTML
// report, so that report is the same whether written by the run or later.
void add_native_since(Results& results, const std::map<std::string, const Registry*>& loaded) {
  const std::optional<TargetKind> kind = target_kind_named(results.environment.target);
  if (!results.timeline.releases.empty() || !kind || !Target{*kind, {}}.mps()) return;
  std::vector<std::string> ops;
  for (const auto& r : results.records) {
    if (ops.empty() || ops.back() != r.op) ops.push_back(r.op);
  }
  results.timeline = native_since(ops, loaded);
}

}  // namespace mps_audit::emu
