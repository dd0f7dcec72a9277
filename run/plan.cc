// A run's plan and its shards: see plan.h.
#include "run/plan.h"

#include <algorithm>
#include <future>
#include <regex>
#include <tuple>

#include <ATen/core/dispatch/Dispatcher.h>
#include <fmt/format.h>

#include "common/diagnostics.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "common/text.h"
#include "common/torch_compat.h"
#include "emu/known_bugs.h"
#include "emu/linked_gaps.h"
#include "emu/mps_emulator.h"
#include "emu/mps_limits.h"
#include "probe/repros.h"
#include "registry/load_registry.h"
#include "registry/release_data.h"
#include "targets/host.h"

namespace mps_audit {
namespace {

// What the linked libtorch cannot show of the emulated release (Note [Kernels the linked libtorch lacks]): this process
// has no emulator active, so its MPS registry holds the linked library's composite kernels alone. The linked release's
// own YAML tells its operators from those defined elsewhere; read only when it is another release.
std::map<std::string, std::string> linked_gaps(const Registry& release) {
  const Registry live = load_registry(kLiveSource, "", "MPS");
  const std::string own = emu::find_release_dir(compat::kTorchVersion);
  if (own.empty()) return emu::linked_kernel_gaps(release, live, nullptr);
  if (resolve_release(own, "MPS").version == release.torch_version) {
    return emu::linked_kernel_gaps(release, live, &release);
  }
  const Registry linked_release = load_registry(own, "", "MPS");
  return emu::linked_kernel_gaps(release, live, &linked_release);
}

// The dtypes of a request: its pairs' (in the pairs' sorted order, whatever order the caller gave them in) when it
// names pairs, else as asked, else the spec's.
std::vector<std::string> planned_dtypes(const RunRequest& request, const Spec& spec) {
  if (request.pairs.empty()) return request.dtypes.empty() ? spec.dtypes : request.dtypes;
  std::vector<std::string> dtypes;
  const std::set<std::pair<std::string, std::string>> pairs(request.pairs.begin(), request.pairs.end());
  for (const auto& [op, dtype] : pairs) {
    if (std::find(dtypes.begin(), dtypes.end(), dtype) == dtypes.end()) dtypes.push_back(dtype);
  }
  return dtypes;
}

// The identity of a plan (Note [Journal] in run/journal.cc): what must be equal for a journal to resume it.
nlohmann::json plan_identity(const RunRequest& request, const RunPlan& plan, const std::string& spec_text) {
  const Target& target = request.target;
  std::string plan_text;
  for (const auto& p : plan.probes) plan_text += p.op + "\t" + p.dtype + "\n";
  const emu::RunExpectations& expecting = plan.expecting;
  return {
      {"spec", request.spec},
      {"spec_hash", content_hash(spec_text)},
      {"known_bugs_hash", plan.known_bugs_hash},
      {"mps_limits_hash", plan.mps_limits_hash},
      {"samples_hash", plan.recordings ? plan.recordings->summary().hash : ""},
      {"target", target.name()},
      {"emu_release",
       target.emulated() ? (plan.release_version.empty() ? target.emu.release_dir : plan.release_version) : ""},
      {"macos", target.mps() ? expecting.mac.describe() : ""},
      {"dtypes", plan.dtypes},
      {"ops", request.ops},
      {"fallback", request.fallback},
      {"expectations",
       expecting.expectations ? emu::to_string(expecting.mode) + " " + expecting.expectations->hash() : "none"},
      {"torch", compat::kTorchVersion},
      {"shard", request.shard.to_string()},
      {"plan_hash", content_hash(plan_text)},
      {"planned", plan.probes.size()},
  };
}

}  // namespace

// Note [Reading in parallel]
// Before its first probe a run reads what it knows beforehand: the recorded samples, the target's registry (an
// emulated release's YAML) and what the linked libtorch cannot show of it, the CPU's registry, PyTorch's expectations
// and the ledger, and the spec. They do not depend on each other, so the samples and the target's registry are read on
// threads of their own while this thread reads the rest; both are joined (std::future::get) before the plan is made,
// and an error in either reaches the caller as one from here would, after any error of the spec, the expectations and
// the CPU's registry. No thread of the run is left when it forks its workers (Note [Forked workers] in
// run/worker_process.cc).
RunPlan make_run_plan(const RunRequest& request, std::ostream& err) {
  const Target& target = request.target;
  RunPlan plan;
  // The recorded samples, read here too: a file that cannot be read stops the run before it starts, and its hash and
  // what it dropped go in the plan's identity and the environment.
  // They are the process's (process_recordings()): a worker forked from the run has them loaded already.
  std::future<const Recordings*> recordings = std::async(std::launch::async, [&request] {
    set_recordings_choice(request.samples);
    return process_recordings();
  });
  // What the registry says of each op for the target's key: the emulated release's YAML, or the live dispatcher; and
  // what the run records without probing, what the linked libtorch cannot show of an emulated release.
  std::future<std::pair<Registry, std::map<std::string, std::string>>> statuses =
      std::async(std::launch::async, [&target] {
        Registry r = load_registry(target.emulated() ? target.emu.release_dir : std::string(kLiveSource), "",
                                   std::string(target.backend()));
        std::map<std::string, std::string> gaps;
        if (target.emulated()) gaps = linked_gaps(r);
        return std::make_pair(std::move(r), std::move(gaps));
      });
  const std::vector<std::string> known = aten_ops();
  const std::string spec_text = read_file(request.spec);
  check_spec_not_empty(spec_text, request.spec);
  plan.spec = parse_spec(spec_text, request.spec, known);
  plan.spec_hash = content_hash(spec_text);
  plan.release_version = target.emu.release_version;
  // PyTorch's own expectations of real MPS: the emulated release's, or on a Mac the linked release's.
  plan.expecting = emu::run_expectations(request.expectations, target, target.real_mps() ? macos_version() : "",
                                         target.real_mps() ? mac_chip() : "");
  // The known bugs' own calls, on every target (Note [Known bugs' own calls] in probe/repros.cc): from the ledger the
  // expectations read, else the shipped one.
  std::optional<emu::KnownBugs> shipped;
  if (!plan.expecting.known_bugs) shipped = emu::load_shipped_known_bugs();
  if (const auto& ledger = plan.expecting.known_bugs ? plan.expecting.known_bugs : shipped) {
    add_repros(plan.spec, *ledger, known);
    plan.known_bugs_hash = ledger->hash();
  }
  // The limits the emulated kernels will enforce: read here too, so that a broken file stops the run before it begins.
  if (target.emulated()) {
    if (const auto limits = emu::load_shipped_mps_limits()) plan.mps_limits_hash = limits->hash();
  }
  const Registry on_cpu = load_registry(kLiveSource, "", "CPU");
  plan.recordings = recordings.get();
  std::tie(plan.statuses, plan.not_probed) = statuses.get();
  err << plan.expecting.none_line(target);
  // And what the caller says is not probed.
  plan.not_probed.insert(request.not_probed.begin(), request.not_probed.end());

  PlanRequest what{&known,
                   &request.filter,
                   &on_cpu,
                   &plan.spec,
                   planned_dtypes(request, plan.spec),
                   {request.pairs.begin(), request.pairs.end()},
                   &plan.not_probed};
  const std::vector<PlannedProbe> whole = plan_probes(what);
  plan.dtypes = what.dtypes;
  if (whole.empty()) throw UserError(fmt::format("no operator matches --ops '{}'", request.ops));
  std::vector<std::string> whole_ops;
  for (const auto& p : whole) whole_ops.push_back(p.op);
  for (size_t i : shard_slice(whole_ops, request.shard)) plan.probes.push_back(whole[i]);
  plan.whole = whole.size();

  // Every line this run writes says when MPS is emulated.
  plan.where = std::string(target.name());
  if (target.emulated()) plan.where += " — " + plan.emulator();
  plan.identity = plan_identity(request, plan, spec_text);
  return plan;
}

std::string RunPlan::emulator() const {
  return emu::emulator_label(release_version.empty() ? compat::kTorchVersion : release_version, macos_major());
}

void RunPlan::annotate(ProbeResult& r, const Target& target) const {
  if (const RegistryEntry* e = statuses.find(r.op)) r.registry_status = std::string(to_string(e->status));
  if (r.basis.empty()) r.basis = target.emulated() ? kBasisRegistry : kBasisKernel;  // a limit's crash says so
  if (!emu::set_aside_linked_gap(r, not_probed)) expecting.apply(r);
}

WorkOrder order_work(const RunRequest& request, const RunPlan& plan, const std::vector<bool>& done,
                     const Results* baseline) {
  WorkOrder order;
  const std::vector<PlannedProbe>& probes = plan.probes;
  for (size_t i = 0; i < probes.size(); ++i) {
    if (done[i]) continue;
    if (order.groups.empty() ||
        base_operator_name(probes[order.groups.back().front()].op) != base_operator_name(probes[i].op)) {
      order.groups.emplace_back();
    }
    order.groups.back().push_back(i);
    ++order.probes;
  }
  // Workers take the operators that took longest in the last run in this folder (or the baseline) first, else those
  // with the most probes (plan order among equals): an operator's probes run one after another in one worker, so a
  // slow one begun last would leave the other workers idle at the end while it finishes. Records still take their
  // places in plan order.
  const std::string target(request.target.name());
  order.costs_path = join_path(request.out_dir, kProbeCostsFile);
  order.costs = read_probe_costs(order.costs_path, target);
  if (baseline) add_missing_costs(order.costs, *baseline);
  if (const std::string release = emu::find_release_dir(compat::kTorchVersion); !release.empty()) {
    add_missing_costs(order.costs, read_probe_costs(release_costs_path(release, target), target));
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  pairs.reserve(probes.size());
  for (const auto& p : probes) pairs.emplace_back(p.op, p.dtype);
  order.expected = expected_seconds(pairs, order.costs);  // each probe's (Note [Starts that pay])
  order_slowest_first(order.groups, order.expected);
  order.jobs = std::min(request.jobs, order.groups.size());
  return order;
}

std::vector<PlannedProbe> plan_probes(const PlanRequest& r) {
  std::vector<std::string> names = *r.ops;
  if (r.not_probed) {
    for (const auto& [op, why] : *r.not_probed) {
      if (!std::binary_search(r.ops->begin(), r.ops->end(), op)) names.push_back(op);
    }
    std::sort(names.begin(), names.end());
  }
  std::vector<PlannedProbe> plan;
  for (const auto& name : names) {
    if (!std::regex_search(name, *r.filter)) continue;
    const bool planned_anyway = r.not_probed && r.not_probed->count(name);
    const RegistryEntry* cpu = r.on_cpu->find(name);
    if (!planned_anyway && (!cpu || cpu->status == OpStatus::kNone)) continue;  // the CPU cannot run it: no reference
    const OpSpec* entry = r.spec->find(name);
    for (const auto& d : r.dtypes) {
      if (entry && !entry->dtypes.empty() &&
          std::find(entry->dtypes.begin(), entry->dtypes.end(), d) == entry->dtypes.end()) {
        continue;
      }
      if (!r.pairs.empty() && !r.pairs.count({name, d})) continue;
      plan.push_back({name, d});
    }
  }
  return plan;
}

ProbeResult not_probed_record(const PlannedProbe& p, const std::string& why, const Registry& statuses) {
  ProbeResult r;
  r.op = p.op;
  r.dtype = p.dtype;
  r.verdict = Verdict::kSkip;
  r.message = why;
  if (const RegistryEntry* e = statuses.find(p.op)) r.registry_status = std::string(to_string(e->status));
  r.basis = kBasisRegistry;
  return r;
}

std::vector<std::string> aten_ops() {
  std::vector<std::string> names;
  auto& d = c10::Dispatcher::singleton();
  for (const auto& name : d.getAllOpNames()) {
    if (name.name.rfind("aten::", 0) != 0) continue;
    auto op = d.findOp(name);
    if (op && op->hasSchema()) names.push_back(c10::toString(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

void check_spec_not_empty(const std::string& text, const std::string& path) {
  bool in_comment = false;
  for (char c : text) {
    if (c == '\n') in_comment = false;
    if (in_comment || c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    if (c == '#') {
      in_comment = true;
      continue;
    }
    return;
  }
  throw UserError(
      "the spec is empty; for one without entries (every operator gets synthesized inputs in the default dtypes) "
      "write 'version: 1'",
      {path});
}

std::vector<size_t> shard_slice(const std::vector<std::string>& plan_ops, const Shard& shard) {
  std::vector<size_t> all(plan_ops.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  if (shard.count == 0) return all;
  struct Group {
    size_t first, size;
  };
  std::vector<Group> groups;
  for (size_t i = 0; i < plan_ops.size(); ++i) {
    if (i == 0 || plan_ops[i] != plan_ops[i - 1]) groups.push_back({i, 0});
    ++groups.back().size;
  }
  std::vector<size_t> order(groups.size());
  for (size_t g = 0; g < order.size(); ++g) order[g] = g;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return groups[a].size > groups[b].size; });
  std::vector<size_t> load(shard.count, 0), owner(groups.size(), 0);
  for (size_t g : order) {
    const size_t k = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    owner[g] = k;
    load[k] += groups[g].size;
  }
  std::vector<size_t> slice;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (owner[g] != shard.index - 1) continue;
    for (size_t i = 0; i < groups[g].size; ++i) slice.push_back(groups[g].first + i);
  }
  return slice;
}

}  // namespace mps_audit
