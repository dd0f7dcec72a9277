// A run's plan and its shards: see plan.h.
#include "run/plan.h"

#include <algorithm>
#include <regex>

#include <ATen/core/dispatch/Dispatcher.h>
#include <fmt/format.h>

#include "common/diagnostics.h"

namespace mps_audit {

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

std::string registry_key(const std::string& target) {
  if (target == "mps" || target == "mps-emu") return "MPS";
  if (target == "cuda") return "CUDA";
  if (target == "meta") return "Meta";
  return "CPU";
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
