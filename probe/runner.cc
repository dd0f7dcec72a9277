// The run: plan, worker processes, journal, reports.
//
// Note [Worker protocol]
// The parent writes the plan (one "op<TAB>dtype" line per probe) to a file and starts N workers
// (`mps-audit __worker`), worker j taking probes j, j+N, ... Each worker prints, on its standard output,
//   env <json>            once, after it set up its target (RunEnvironment fields it knows)
//   start <i>             before probe i
//   target <i>            after its CPU reference, before the run on the target (once per sample)
//   result <i> <json>     after it (a ProbeResult)
// A worker that dies while probe i is started gets i recorded as a crash and is restarted at i+N; one whose probe
// outlives --timeout is killed, i is recorded as a timeout, and it restarts likewise. When that happens before
// "target <i>", it was the CPU reference that crashed or hung: i is a skip (no reference), not the target's fault.
// Workers load libtorch with PYTORCH_ENABLE_MPS_FALLBACK set as --fallback says, because MPS reads it once, when it
// loads.
#include "probe/runner.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include <ATen/core/dispatch/Dispatcher.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <spawn.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __APPLE__
#include <sys/sysctl.h>
#endif

#include "common/diagnostics.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "common/text.h"
#include "common/torch_compat.h"
#include "common/torch_info.h"
#include "emu/mps_emulator.h"
#include "probe/dtypes.h"
#include "probe/probe_op.h"
#include "probe/spec.h"
#include "registry/registry_command.h"
#include "registry/release_data.h"
#include "report/renderers.h"
#include "report/report_commands.h"
#include "results/results_file.h"

extern char** environ;

namespace mps_audit {
namespace {

std::string os_description() {
  struct utsname u {};
  if (uname(&u) != 0) return "unknown";
  return fmt::format("{} {} ({})", u.sysname, u.release, u.machine);
}

std::string registry_key(const std::string& target) {
  if (target == "mps" || target == "mps-emu") return "MPS";
  if (target == "cuda") return "CUDA";
  if (target == "meta") return "Meta";
  return "CPU";
}

// Every aten operator of the linked libtorch, with schema.
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

// The target a request means; `why` says how `auto` chose, for the log.
std::string resolve_target(const std::string& requested, std::string& why) {
  std::vector<std::string> targets = {"auto"};
  targets.insert(targets.end(), probe_target_names().begin(), probe_target_names().end());
  if (std::find(targets.begin(), targets.end(), requested) == targets.end()) {
    throw UserError(fmt::format("unknown target '{}', expected one of {}{}", requested, fmt::join(targets, ", "),
                                did_you_mean(requested, targets)));
  }
  const TorchInfo torch = linked_torch_info();
  if (requested == "auto") {
    const std::string picked = torch.has_mps ? "mps" : torch.has_cuda ? "cuda" : "mps-emu";
    why = fmt::format("target: auto picked {}{}\n", picked,
                      picked == "mps-emu" ? " (this libtorch has neither MPS nor CUDA: MPS is emulated)" : "");
    return picked;
  }
  if (requested == "mps" && !torch.has_mps) {
    throw UserError(
        "--target mps: this libtorch has no MPS backend (that needs macOS on Apple silicon); "
        "--target mps-emu emulates it");
  }
  if (requested == "cuda" && !torch.has_cuda) throw UserError("--target cuda: this libtorch was built without CUDA");
  return requested;
}

c10::Device device_for(const std::string& target) {
  if (target == "mps" || target == "mps-emu") return c10::Device(c10::DeviceType::MPS, 0);
  if (target == "cuda") return c10::Device(c10::DeviceType::CUDA, 0);
  if (target == "meta") return c10::Device(c10::DeviceType::Meta);
  return c10::Device(c10::DeviceType::CPU);
}

struct Probe {
  std::string op, dtype;
};

// The running macOS's major version (a real MPS target's); 0 elsewhere.
int macos_major_version() {
#ifdef __APPLE__
  char version[64] = {0};
  size_t size = sizeof version;
  if (sysctlbyname("kern.osproductversion", version, &size, nullptr, 0) == 0) return std::atoi(version);
#endif
  return 0;
}

std::vector<Probe> read_plan(const std::string& path) {
  std::vector<Probe> plan;
  std::istringstream in(read_file(path));
  std::string line;
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    if (tab != std::string::npos) plan.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  return plan;
}

struct Worker {
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;
  size_t next = 0;         // the next probe it will take
  long current = -1;       // the probe started and not finished, or -1
  bool on_target = false;  // whether that probe's CPU reference is done (a crash or hang is then the target's)
  std::chrono::steady_clock::time_point started;
  bool said_anything = false;
};

class Pool {
 public:
  Pool(const RunOptions& o, std::string target, std::string plan_path, std::string log_path, size_t plan_size,
       size_t jobs)
      : options_(o),
        target_(std::move(target)),
        plan_path_(std::move(plan_path)),
        log_path_(std::move(log_path)),
        plan_size_(plan_size),
        jobs_(jobs) {}

  // Runs every probe; calls on_result for each result (in arrival order).
  template <typename F>
  void run(std::vector<ProbeResult>& results, RunEnvironment& env, F&& on_result) {
    std::vector<Worker> workers(jobs_);
    for (size_t j = 0; j < jobs_; ++j) {
      workers[j].next = j;
      if (j < plan_size_) start(workers[j]);
    }
    const std::vector<Probe> plan = read_plan(plan_path_);
    auto record = [&](size_t i, ProbeResult r) {
      r.op = plan[i].op;
      r.dtype = plan[i].dtype;
      results[i] = r;
      on_result(i, results[i]);
    };
    for (;;) {
      std::vector<pollfd> fds;
      std::vector<Worker*> owners;
      for (auto& w : workers) {
        if (w.fd >= 0) {
          fds.push_back({w.fd, POLLIN, 0});
          owners.push_back(&w);
        }
      }
      if (fds.empty()) break;
      ::poll(fds.data(), fds.size(), 200);
      const auto now = std::chrono::steady_clock::now();
      for (size_t k = 0; k < fds.size(); ++k) {
        Worker& w = *owners[k];
        if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
          char chunk[65536];
          const ssize_t n = ::read(w.fd, chunk, sizeof chunk);
          if (n > 0) {
            w.buffer.append(chunk, static_cast<size_t>(n));
            size_t nl;
            while ((nl = w.buffer.find('\n')) != std::string::npos) {
              handle_line(w, w.buffer.substr(0, nl), env, record);
              w.buffer.erase(0, nl + 1);
            }
            continue;
          }
          finish(w, record);  // end of output: the worker exited
          continue;
        }
        if (w.current >= 0 && std::chrono::duration<double>(now - w.started).count() > options_.timeout_s) {
          ::kill(w.pid, SIGKILL);
          ::waitpid(w.pid, nullptr, 0);
          ::close(w.fd);
          w.fd = -1;
          ProbeResult r;
          r.verdict = w.on_target ? Verdict::kTimeout : Verdict::kSkip;
          r.message = w.on_target
                          ? fmt::format("no result after {:g} s; the worker was killed", options_.timeout_s)
                          : fmt::format("no reference: the CPU run did not finish in {:g} s", options_.timeout_s);
          r.seconds = options_.timeout_s;
          const size_t i = static_cast<size_t>(w.current);
          record(i, r);
          restart_after(w, i);
        }
      }
    }
  }

 private:
  template <typename R>
  void handle_line(Worker& w, const std::string& line, RunEnvironment& env, R& record) {
    w.said_anything = true;
    if (line.rfind("env ", 0) == 0) {
      const RunEnvironment e = run_environment_from_json(nlohmann::json::parse(line.substr(4)));
      env.device = e.device;
      env.emulator = e.emulator;
      env.torch_version = e.torch_version;
    } else if (line.rfind("start ", 0) == 0) {
      w.current = std::stol(line.substr(6));
      w.on_target = false;
      w.started = std::chrono::steady_clock::now();
    } else if (line.rfind("target ", 0) == 0) {
      w.on_target = true;
    } else if (line.rfind("result ", 0) == 0) {
      const size_t space = line.find(' ', 7);
      const size_t i = std::stoul(line.substr(7, space - 7));
      ProbeResult r;
      try {
        r = probe_result_from_json(nlohmann::json::parse(line.substr(space + 1)));
      } catch (const std::exception& e) {
        r.verdict = Verdict::kError;
        r.message = std::string("unreadable result from the worker: ") + e.what();
      }
      record(i, r);
      w.current = -1;
    }
  }

  template <typename R>
  void finish(Worker& w, R& record) {
    int status = 0;
    ::waitpid(w.pid, &status, 0);
    ::close(w.fd);
    w.fd = -1;
    if (w.current < 0) {
      if (!w.said_anything && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        throw UserError(fmt::format("a worker could not start: {}", last_log_line()));
      }
      return;
    }
    ProbeResult r;
    const std::string how = WIFSIGNALED(status)
                                ? fmt::format("died of signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)))
                                : fmt::format("exited with status {}", WEXITSTATUS(status));
    r.verdict = w.on_target ? Verdict::kCrash : Verdict::kSkip;
    r.message = w.on_target ? "the worker " + how : "no reference: the CPU run killed the worker (it " + how + ")";
    const size_t i = static_cast<size_t>(w.current);
    record(i, r);
    restart_after(w, i);
  }

  void restart_after(Worker& w, size_t i) {
    w.current = -1;
    w.buffer.clear();
    w.next = i + jobs_;
    if (w.next < plan_size_) start(w);
  }

  std::string last_log_line() const {
    std::ifstream in(log_path_);
    std::string line, last;
    while (std::getline(in, line)) {
      if (!line.empty()) last = line;
    }
    return last.empty() ? "no message (see " + log_path_ + ")" : last;
  }

  void start(Worker& w) {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) throw UserError("cannot create a pipe for a worker");
    std::vector<std::string> words = {options_.self, "__worker",
                                      "--target",    target_,
                                      "--spec",      options_.spec,
                                      "--plan",      plan_path_,
                                      "--first",     std::to_string(w.next),
                                      "--step",      std::to_string(jobs_),
                                      "--emu-macos", std::to_string(options_.emu_macos)};
    if (!options_.emu_release.empty()) {
      words.push_back("--emu-release");
      words.push_back(options_.emu_release);
    }
    std::vector<char*> argv;
    for (auto& s : words) argv.push_back(s.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) {
      if (std::strncmp(*e, "PYTORCH_ENABLE_MPS_FALLBACK=", 28) != 0) env_strings.emplace_back(*e);
    }
    env_strings.push_back(std::string("PYTORCH_ENABLE_MPS_FALLBACK=") + (options_.fallback == "on" ? "1" : "0"));
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    posix_spawn_file_actions_addopen(&actions, 2, log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const int rc = posix_spawn(&w.pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_fds[1]);
    if (rc != 0) {
      ::close(pipe_fds[0]);
      throw UserError(fmt::format("cannot start a worker ({}): {}", options_.self, std::strerror(rc)));
    }
    w.fd = pipe_fds[0];
    w.current = -1;
    w.said_anything = false;
  }

  const RunOptions& options_;
  std::string target_, plan_path_, log_path_;
  size_t plan_size_, jobs_;
};

class Progress {
 public:
  Progress(std::ostream& err, size_t total, bool enabled, bool tty, std::string where)
      : err_(err), total_(total), enabled_(enabled), tty_(tty), where_(std::move(where)) {}
  void update(size_t done, const ProbeResult& last) {
    if (!enabled_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double eta = done ? elapsed / static_cast<double>(done) * static_cast<double>(total_ - done) : 0;
    const int percent = total_ ? static_cast<int>(100 * done / total_) : 100;
    if (tty_) {
      err_ << fmt::format("\r[{}/{}] {:3d}% ETA {:4.0f}s  {:<48.48}", done, total_, percent, eta,
                          last.op + " " + last.dtype)
           << std::flush;
      if (done == total_) err_ << "\n";
    } else if (percent >= next_percent_ || done == total_) {
      err_ << fmt::format("progress on {}: {}/{} probes ({}%), {:.0f}s elapsed, ETA {:.0f}s\n", where_, done, total_,
                          percent, elapsed, eta);
      next_percent_ = percent / 10 * 10 + 10;
    }
  }

 private:
  std::ostream& err_;
  size_t total_;
  bool enabled_, tty_;
  std::string where_;
  int next_percent_ = 10;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

int run_audit(const RunOptions& o, std::ostream& out, std::ostream& err) {
  check_report_formats(o.formats);
  if (!o.baseline.empty()) check_baseline(o.baseline);
  if (o.fallback != "on" && o.fallback != "off") {
    throw UserError(fmt::format("--fallback must be on or off, not '{}'", o.fallback));
  }
  for (const auto& d : o.dtypes) {
    if (!parse_dtype(d)) throw UserError(fmt::format("unknown dtype '{}'{}", d, did_you_mean(d, known_dtype_names())));
  }
  std::vector<Verdict> fail_on;
  for (const auto& v : o.fail_on) {
    auto parsed = parse_verdict(v);
    if (!parsed) {
      std::vector<std::string> names;
      for (Verdict k : kAllVerdicts) names.emplace_back(to_string(k));
      throw UserError(fmt::format("unknown verdict '{}' in --fail-on{}", v, did_you_mean(v, names)));
    }
    fail_on.push_back(*parsed);
  }
  std::regex filter;
  try {
    filter = std::regex(o.ops.empty() ? ".*" : o.ops);
  } catch (const std::regex_error& e) {
    throw UserError(fmt::format("--ops: invalid regular expression '{}': {}", o.ops, e.what()));
  }
  if (o.emu_macos < 11 || o.emu_macos > 30)
    throw UserError(fmt::format("--emu-macos {} is not a macOS version", o.emu_macos));
  std::string why;
  const std::string target = resolve_target(o.target, why);
  const std::vector<std::string> known = aten_ops();
  const Spec spec = load_spec(o.spec, known);

  // What the registry says of each op for the target's key: the emulated release's YAML, or the live dispatcher.
  std::string release_dir = o.emu_release;
  if (target == "mps-emu" && release_dir.empty()) release_dir = emu::find_release_dir(compat::kTorchVersion);
  if (target == "mps-emu" && release_dir.empty()) {
    throw UserError(
        fmt::format("no registry data for libtorch {} to emulate MPS with: pass --emu-release with a "
                    "folder holding its native_functions.yaml",
                    compat::kTorchVersion));
  }
  const Registry statuses =
      load_registry(target == "mps-emu" ? release_dir : std::string(kLiveSource), "", registry_key(target));
  const Registry on_cpu = load_registry(kLiveSource, "", "CPU");

  std::vector<Probe> plan;
  const std::vector<std::string>& dtypes = o.dtypes.empty() ? spec.dtypes : o.dtypes;
  for (const auto& name : known) {
    if (!std::regex_search(name, filter)) continue;
    const RegistryEntry* cpu = on_cpu.find(name);
    if (!cpu || cpu->status == OpStatus::kNone) continue;  // the CPU cannot run it: no reference
    const OpSpec* entry = spec.find(name);
    for (const auto& d : dtypes) {
      if (entry && !entry->dtypes.empty() &&
          std::find(entry->dtypes.begin(), entry->dtypes.end(), d) == entry->dtypes.end()) {
        continue;
      }
      plan.push_back({name, d});
    }
  }
  if (plan.empty()) throw UserError(fmt::format("no operator matches --ops '{}'", o.ops));

  make_directories(o.out_dir);
  const std::string plan_path = join_path(o.out_dir, ".plan.tsv");
  std::string plan_text;
  for (const auto& p : plan) plan_text += p.op + "\t" + p.dtype + "\n";
  write_file_atomically(plan_path, plan_text);
  // Every line this run writes says when MPS is emulated.
  std::string where = target;
  if (target == "mps-emu") {
    const std::string version = resolve_release(release_dir, "MPS").version;
    where += " — " + emu::emulator_label(version.empty() ? compat::kTorchVersion : version, o.emu_macos);
  }
  const std::string log_path = join_path(o.out_dir, "workers.log");
  write_file_atomically(log_path, fmt::format("standard error of the workers of a run on {}\n", where));
  const std::string journal_path = join_path(o.out_dir, "journal.jsonl");
  std::ofstream journal(journal_path, std::ios::trunc);

  RunEnvironment env;
  env.target = target;
  env.requested = o.target;
  env.os = os_description();
  env.fallback_mode = o.fallback;
  env.spec = o.spec;
  env.torch_version = compat::kTorchVersion;
  const size_t jobs = static_cast<size_t>(
      std::max<long>(1, std::min<long>(o.jobs > 0 ? o.jobs : static_cast<long>(std::thread::hardware_concurrency()),
                                       static_cast<long>(plan.size()))));
  err << why;
  err << fmt::format("probing {} op x dtype pairs on {} with {} worker{}\n", plan.size(), where, jobs,
                     jobs == 1 ? "" : "s");

  std::vector<ProbeResult> results(plan.size());
  Progress progress(err, plan.size(), o.progress, isatty(STDERR_FILENO), where);
  size_t done = 0;
  Pool pool(o, target, plan_path, log_path, plan.size(), jobs);
  pool.run(results, env, [&](size_t i, ProbeResult& r) {
    if (const RegistryEntry* e = statuses.find(r.op)) r.registry_status = std::string(to_string(e->status));
    journal << to_json(r).dump() << "\n" << std::flush;
    ++done;
    progress.update(done, r);
  });
  std::remove(plan_path.c_str());

  Results doc;
  doc.environment = env;
  doc.run.planned = plan.size();
  doc.run.finished = done;
  doc.records = std::move(results);
  RenderOptions render;
  render.strict = o.strict;
  write_reports(doc, o.formats, o.out_dir, render);
  out << render_summary(doc);
  out << fmt::format("reports in {}/ ({})\n", o.out_dir, fmt::join(o.formats, ", "));
  int exit_code = kExitOk;
  if (!o.baseline.empty()) exit_code = apply_baseline_gate(doc, o.baseline, o.out_dir, out);
  for (const auto& r : doc.records) {
    if (std::find(fail_on.begin(), fail_on.end(), r.verdict) != fail_on.end()) return kExitGateFailed;
  }
  return exit_code;
}

int run_worker(const WorkerOptions& o, std::ostream& out) {
  RunEnvironment env;
  env.torch_version = compat::kTorchVersion;
  if (o.target == "mps-emu") {
    const emu::EmulatorOptions emu_options{o.emu_release, o.emu_macos};
    env.emulator = emu::activate_mps_emulator(emu_options).label();
  }
  ProbeTarget target;
  target.name = o.target;
  target.device = device_for(o.target);
  target.torch_version = compat::kTorchVersion;
  if (o.target == "mps-emu") target.macos_major = o.emu_macos;
  if (o.target == "mps") target.macos_major = macos_major_version();
  env.device = target.device.str();
  const Spec spec = load_spec(o.spec, aten_ops());
  const std::vector<Probe> plan = read_plan(o.plan);
  out << "env " << to_json(env).dump() << "\n" << std::flush;
  for (size_t i = o.first; i < plan.size(); i += o.step) {
    out << "start " << i << "\n" << std::flush;
    const ProbeResult r =
        probe_op(target, spec, plan[i].op, plan[i].dtype, [&] { out << "target " << i << "\n"
                                                                    << std::flush; });
    out << "result " << i << " " << to_json(r).dump() << "\n" << std::flush;
  }
  return kExitOk;
}

}  // namespace mps_audit
