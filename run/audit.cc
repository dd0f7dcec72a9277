// `mps-audit run`: see audit.h.
#include "run/audit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "common/data_home.h"
#include "common/diagnostics.h"
#include "common/flags.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "common/text.h"
#include "common/torch_compat.h"
#include "emu/expected_verdicts.h"
#include "emu/linked_gaps.h"
#include "emu/mps_emulator.h"
#include "emu/timeline.h"
#include "probe/dtypes.h"
#include "probe/probe_costs.h"
#include "probe/recorded_samples.h"
#include "probe/spec.h"
#include "registry/load_registry.h"
#include "registry/release_data.h"
#include "report/gate.h"
#include "report/renderers.h"
#include "results/results_file.h"
#include "run/folder_lock.h"
#include "run/journal.h"
#include "run/plan.h"
#include "run/pool.h"
#include "run/progress.h"
#include "run/stop_signals.h"
#include "targets/host.h"
#include "targets/targets.h"

namespace mps_audit {
namespace {

// Copies the host block (the fields describe_host() fills in, but the fallback variable: the run sets what its
// workers ran with) from `from` to `env`.
void take_host_block(RunEnvironment& env, const RunEnvironment& from) {
  env.os = from.os;
  env.macos = from.macos;
  env.mps_built = from.mps_built;
  env.mps_available = from.mps_available;
  env.mps_why_not = from.mps_why_not;
  env.cuda_built = from.cuda_built;
  env.cuda_available = from.cuda_available;
  env.cuda_devices = from.cuda_devices;
  env.targets = from.targets;
}

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

}  // namespace

namespace {

// What a run holds until its reports are written: the folder's lock, and its workers, reaped when it goes (Note
// [Workers at the end] in run/pool.cc). The pool goes first.
struct Held {
  explicit Held(const std::string& dir) : lock(dir) {}
  FolderLock lock;
  std::optional<WorkerPool> pool;
};

}  // namespace

AuditedRun audit_run(const RunOptions& requested, const Results* baseline, std::ostream& err) {
  RunOptions o = requested;
  check_choice("--fallback", o.fallback, {"on", "off"});
  check_choices("--dtypes", o.dtypes, known_dtype_names());
  check_positive_seconds("--timeout", o.timeout_s, "for no practical limit, give a large one such as 86400");
  if (o.jobs) check_at_least("--jobs", *o.jobs, 1);
  const Shard shard = o.shard.empty() ? Shard{} : parse_shard(o.shard);
  std::regex filter;
  try {
    filter = std::regex(o.ops.empty() ? ".*" : o.ops);
  } catch (const std::regex_error& e) {
    throw UserError(fmt::format("--ops: invalid regular expression '{}': {}", o.ops, e.what()));
  }
  // The spec and release the flags name, or the defaults (Note [Data homes]): the workers get these paths.
  if (o.spec.empty()) o.spec = default_spec_path();
  if (!o.emu_release.empty()) o.emu_release = release_folder(o.emu_release);
  std::string why;
  const std::string target = resolve_target(o.target, why);
  const emu::ExpectationMode expectation_mode = emu::expectation_mode(o.expectations, target);
  const std::vector<std::string> known = aten_ops();
  const std::string spec_text = read_file(o.spec);
  check_spec_not_empty(spec_text, o.spec);
  const Spec spec = parse_spec(spec_text, o.spec, known);
  // The recorded samples, read here too: a file that cannot be read stops the run before it starts, and its hash and
  // what it dropped go in the plan's identity and the environment.
  // They are the process's (process_recordings()): a worker forked from the run has them loaded already.
  std::string samples_path = "none";
  if (o.samples != "none") {
    const std::string path = o.samples.empty() ? default_recordings_path() : o.samples;
    if (!o.samples.empty() && !path_exists(path)) throw UserError("--samples: no such file", {path});
    if (!path.empty()) samples_path = path;
  }
  set_recordings_choice(samples_path);
  const Recordings* recordings = process_recordings();

  // What the registry says of each op for the target's key: the emulated release's YAML, or the live dispatcher.
  std::string release_dir = o.emu_release;
  if (target == "mps-emu" && release_dir.empty()) release_dir = emu::default_release_dir();
  if (target == "mps-emu" && release_dir.empty()) {
    throw UserError(
        fmt::format("no registry data for libtorch {} to emulate MPS with: pass --emu-release with a "
                    "folder holding its native_functions.yaml",
                    compat::kTorchVersion));
  }
  const Registry statuses =
      load_registry(target == "mps-emu" ? release_dir : std::string(kLiveSource), "", registry_key(target));
  // PyTorch's own expectations of real MPS: the emulated release's, or on a Mac the linked release's.
  const emu::RunExpectations expecting = emu::run_expectations(
      expectation_mode, target, target == "mps-emu" ? release_dir : emu::find_release_dir(compat::kTorchVersion),
      o.emu_macos, o.emu_chip, target == "mps" ? macos_version() : "", target == "mps" ? mac_chip() : "");
  const int macos_major = expecting.version / 100;
  err << expecting.none_line(target);
  const Registry on_cpu = load_registry(kLiveSource, "", "CPU");
  // What the run records without probing: what the linked libtorch cannot show, and what the caller says.
  std::map<std::string, std::string> not_probed =
      target == "mps-emu" ? linked_gaps(statuses) : std::map<std::string, std::string>{};
  not_probed.insert(o.not_probed.begin(), o.not_probed.end());

  PlanRequest request{
      &known,     &filter, &on_cpu, &spec, o.dtypes.empty() ? spec.dtypes : o.dtypes, {o.pairs.begin(), o.pairs.end()},
      &not_probed};
  if (!request.pairs.empty()) {
    request.dtypes.clear();
    for (const auto& [op, dtype] : request.pairs) {
      if (std::find(request.dtypes.begin(), request.dtypes.end(), dtype) == request.dtypes.end()) {
        request.dtypes.push_back(dtype);
      }
    }
  }
  const std::vector<PlannedProbe> whole = plan_probes(request);
  const std::vector<std::string>& dtypes = request.dtypes;
  if (whole.empty()) throw UserError(fmt::format("no operator matches --ops '{}'", o.ops));
  std::vector<std::string> whole_ops;
  for (const auto& p : whole) whole_ops.push_back(p.op);
  std::vector<PlannedProbe> plan;
  for (size_t i : shard_slice(whole_ops, shard)) plan.push_back(whole[i]);
  std::string plan_text;
  for (const auto& p : plan) plan_text += p.op + "\t" + p.dtype + "\n";

  // Every line this run writes says when MPS is emulated.
  std::string where = target, release_version;
  if (target == "mps-emu") {
    release_version = resolve_release(release_dir, "MPS").version;
    where +=
        " — " + emu::emulator_label(release_version.empty() ? compat::kTorchVersion : release_version, macos_major);
  }
  const nlohmann::json identity = {
      {"spec", o.spec},
      {"spec_hash", content_hash(spec_text)},
      {"samples_hash", recordings ? recordings->summary().hash : ""},
      {"target", target},
      {"emu_release", target == "mps-emu" ? (release_version.empty() ? release_dir : release_version) : ""},
      {"macos", target == "mps-emu" || target == "mps" ? expecting.mac.describe() : ""},
      {"dtypes", dtypes},
      {"ops", o.ops},
      {"fallback", o.fallback},
      {"expectations",
       expecting.expectations ? emu::to_string(expecting.mode) + " " + expecting.expectations->hash() : "none"},
      {"torch", compat::kTorchVersion},
      {"shard", shard.to_string()},
      {"plan_hash", content_hash(plan_text)},
      {"planned", plan.size()},
  };

  // From here on the folder is ours: nothing above wrote anything. A SIGINT or SIGTERM from now on stops the run
  // with its reports written (the pool sees it before handing out anything).
  std::optional<StopSignals> signals(std::in_place);
  make_directories(o.out_dir);
  auto held = std::make_shared<Held>(o.out_dir);
  const std::string journal_path = join_path(o.out_dir, "journal.jsonl");
  std::vector<ProbeResult> results(plan.size());
  std::vector<bool> done(plan.size(), false);
  size_t finished = 0;
  Journal recorded;
  bool resuming = false;
  if (o.resume && path_exists(journal_path)) {
    recorded = parse_journal(read_file(journal_path), journal_path);
    resuming = !recorded.identity.is_null();
  }
  if (resuming) {
    const std::string difference = identity_difference(recorded.identity, identity);
    if (!difference.empty()) {
      throw UserError(fmt::format("--resume: this folder's run was made with another {}; start it anew without "
                                  "--resume, or in another --out",
                                  difference),
                      {journal_path});
    }
    std::map<std::pair<std::string, std::string>, size_t> index;
    for (size_t i = 0; i < plan.size(); ++i) index[{plan[i].op, plan[i].dtype}] = i;
    for (auto& r : recorded.records) {
      const auto it = index.find({r.op, r.dtype});
      if (it == index.end()) {
        throw UserError(
            fmt::format("--resume: the journal has a record of {} {}, which is not in this run's plan", r.op, r.dtype),
            {journal_path});
      }
      if (!done[it->second]) ++finished;
      done[it->second] = true;
      results[it->second] = std::move(r);
    }
  }
  JournalWriter journal(journal_path, resuming, recorded.valid_bytes);
  if (!resuming) journal.line(plan_identity_line(identity));
  size_t left_out = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    const auto it = not_probed.find(plan[i].op);
    if (done[i] || it == not_probed.end()) continue;
    results[i] = not_probed_record(plan[i], it->second, statuses);
    journal.line(to_json(results[i]));
    done[i] = true;
    ++finished;
    if (skip_reason(results[i]) == "linked_libtorch") ++left_out;
  }
  if (left_out) {
    err << fmt::format(
        "{} op x dtype pairs not probed: the linked libtorch {} cannot show what PyTorch {} does "
        "there (skip reason linked_libtorch)\n",
        left_out, compat::kTorchVersion, release_version);
  }

  const std::string log_path = join_path(o.out_dir, "workers.log");
  const std::string log_header =
      fmt::format("standard error of the workers of a run on {}{}\n", where, resuming ? " (resumed)" : "");
  if (resuming && path_exists(log_path)) {
    write_file_atomically(log_path, read_file(log_path) + log_header);
  } else {
    write_file_atomically(log_path, log_header);
  }

  RunEnvironment env;
  env.target = target;
  env.requested = o.target;
  env.fallback_mode = o.fallback;
  env.spec = o.spec;
  env.spec_hash = identity["spec_hash"].get<std::string>();
  if (recordings) {
    env.samples = recordings->summary().path;
    env.samples_hash = recordings->summary().hash;
    env.samples_calls = recordings->summary().kept;
    for (const auto& [why, n] : recordings->summary().dropped) env.samples_dropped += n;
  }
  // The host block (`mps-audit env`, targets/host.h) is the first worker's, or filled in once the workers are
  // done when none started: asking CUDA how many devices it has sets up its driver in this process, and workers
  // forked from it could not use CUDA then (Note [Forked workers]).
  env.torch_version = compat::kTorchVersion;
  // What the probes ran with (the workers' environment, set from --fallback), not the parent's own variable.
  env.fallback_variable = o.fallback == "on" ? "1" : "0";
  env.device = device_for(target).str();
  if (target == "mps-emu") {
    env.emulator = emu::emulator_label(release_version.empty() ? compat::kTorchVersion : release_version, macos_major);
  }
  expecting.describe(env);
  if (recorded.environment) {
    env.device = recorded.environment->device;
    env.emulator = recorded.environment->emulator;
    env.torch_version = recorded.environment->torch_version;
  }

  // What is left to run, by operator name (every overload: logaddexp and logaddexp.out meet the same kernels, which
  // CUDA compiles at first use in each process), each in plan order.
  // Workers take the operators that took longest in the last run in this folder (or the baseline) first, else those
  // with the most probes (plan order among equals): an operator's probes run one after another in one worker, so a slow
  // one begun last would leave the other workers idle at the end while it finishes (Note [Slowest operators first] in
  // probe/probe_costs.cc). Records still take their places in plan order.
  std::vector<std::vector<size_t>> groups;
  size_t to_run = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (done[i]) continue;
    if (groups.empty() || base_operator_name(plan[groups.back().front()].op) != base_operator_name(plan[i].op))
      groups.emplace_back();
    groups.back().push_back(i);
    ++to_run;
  }
  const std::string costs_path = join_path(o.out_dir, kProbeCostsFile);
  ProbeCosts costs = read_probe_costs(costs_path, target);
  if (baseline) add_missing_costs(costs, *baseline);
  if (const std::string release = emu::find_release_dir(compat::kTorchVersion); !release.empty()) {
    add_missing_costs(costs, read_probe_costs(release_costs_path(release, target), target));
  }
  std::vector<double> expected;  // each probe's seconds, as far as the figures say (Note [Starts that pay])
  {
    std::vector<std::pair<std::string, std::string>> probes;
    probes.reserve(plan.size());
    for (const auto& p : plan) probes.emplace_back(p.op, p.dtype);
    expected = expected_seconds(probes, costs);
    order_slowest_first(groups, expected);
  }
  const long cores = std::max<long>(1, static_cast<long>(std::thread::hardware_concurrency()));
  const size_t jobs = std::min<size_t>(static_cast<size_t>(o.jobs ? *o.jobs : cores), groups.size());
  err << why;
  const std::string slice =
      shard.count ? fmt::format(" (shard {} of the plan's {})", shard.to_string(), whole.size()) : std::string();
  if (o.resume && !resuming) err << fmt::format("--resume: nothing recorded in {} yet: a new run\n", o.out_dir);
  if (resuming) {
    err << fmt::format("resuming the run in {}: {} of {} probes{} recorded{}\n", o.out_dir, finished, plan.size(),
                       slice, recorded.torn ? " (the journal's last line was cut short: that probe runs again)" : "");
  }
  // An emulated release says which libtorch runs it in the run's first line.
  err << fmt::format("probing {} op x dtype pairs{} on {}{} with {} worker{}\n", to_run, resuming ? "" : slice, where,
                     target == "mps-emu" ? fmt::format(" on libtorch {}", compat::kTorchVersion) : "", jobs,
                     jobs == 1 ? "" : "s");

  Progress progress(err, to_run, o.progress && to_run > 0, isatty(STDERR_FILENO), where);
  size_t ran = 0;
  bool env_written = false, host_described = false;
  int stopped_by = 0;
  {
    WorkerLaunch launch;
    launch.self = o.self;
    launch.target = target;
    launch.spec = o.spec;
    launch.emu_release = o.emu_release;
    launch.emu_macos = macos_major;
    launch.samples = recordings ? recordings->summary().path : "none";
    launch.fallback = o.fallback;
    launch.log_path = log_path;
    launch.run_spec = &spec;
    std::optional<WorkerPool>& pool = held->pool;  // reaped after the reports (Note [Workers at the end])
    pool.emplace(std::move(launch), plan, std::move(expected), o.timeout_s);
    stopped_by = pool->run(
        std::move(groups), jobs,
        [&](const RunEnvironment& e) {
          env.device = e.device;
          env.emulator = e.emulator;
          env.torch_version = e.torch_version;
          take_host_block(env, e);
          host_described = true;
          if (!env_written) journal.line({{"environment", to_json(env)}});
          env_written = true;
        },
        [&](size_t i, ProbeResult& r) {
          if (const RegistryEntry* e = statuses.find(r.op)) r.registry_status = std::string(to_string(e->status));
          r.basis = target == "mps-emu" ? kBasisRegistry : kBasisKernel;
          if (!emu::set_aside_linked_gap(r, not_probed)) expecting.apply(r);
          journal.line(to_json(r));
          MPS_AUDIT_ASSERT(!done[i], "a second record of one probe");
          results[i] = r;
          done[i] = true;
          ++finished;
          ++ran;
          progress.update(ran, r);
        });
    if (!stopped_by && stop_signal()) stopped_by = stop_signal();  // it came after the last result
    if (stopped_by && finished == plan.size()) stopped_by = 0;     // too late to lose anything
  }
  signals.reset();  // a signal while the reports are written ends the process; each report is whole or absent
  if (!host_described) {
    RunEnvironment host;
    describe_host(host);
    take_host_block(env, host);
  }

  Results doc;
  doc.environment = env;
  // Which release first had a native MPS kernel of each operator (the HTML report's "native since"), from the shipped
  // releases' registries. Read here, not beside the workers: the run starts no threads (Note [Forked workers]).
  if (target == "mps" || target == "mps-emu") {
    std::vector<std::string> ops;
    for (const auto& p : plan) {
      if (ops.empty() || ops.back() != p.op) ops.push_back(p.op);
    }
    std::map<std::string, const Registry*> loaded;
    if (target == "mps-emu" && !release_version.empty()) loaded[release_version] = &statuses;
    doc.timeline = emu::native_since(ops, loaded);
  }
  doc.run.planned = plan.size();
  doc.run.finished = finished;
  doc.run.shard = shard.to_string();
  if (stopped_by) doc.run.interrupted = signal_name(stopped_by);
  for (size_t i = 0; i < plan.size(); ++i) {
    if (done[i]) doc.records.push_back(std::move(results[i]));
  }
  MPS_AUDIT_ASSERT(stopped_by || doc.records.size() == plan.size(), "a planned probe without a record");
  write_file_atomically(costs_path, render_probe_costs(std::move(costs), doc.records));
  return {std::move(doc), stopped_by, std::move(held)};
}

}  // namespace mps_audit
