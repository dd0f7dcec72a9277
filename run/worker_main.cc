// The worker side of a run: see worker_main.h.
#include "run/worker_main.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <functional>
#include <iostream>
#include <thread>
#include <vector>

#include <ATen/Parallel.h>
#include <ATen/ops/ones.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include "common/diagnostics.h"
#include "common/torch_compat.h"
#include "emu/mps_emulator.h"
#include "probe/caught_faults.h"
#include "probe/probe_op.h"
#include "probe/recorded_samples.h"
#include "probe/repros.h"
#include "probe/spec.h"
#include "results/results_file.h"
#include "run/child_process.h"
#include "run/plan.h"
#include "run/worker_protocol.h"
#include "targets/host.h"
#include "targets/targets.h"

namespace mps_audit {
namespace {

// A worker's work, one line at a time, read by the thread that runs the probes: no other thread hands it over.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // The next line without its newline; nullopt when the input has closed.
  std::optional<std::string> next() {
    for (;;) {
      if (auto line = take_line()) return line;
      if (!read_more(/*wait=*/true)) return std::nullopt;
    }
  }

  // The next line if it is here already (sent, whether read yet or not) and `wanted`; else nullopt, and the line
  // stays for next().
  std::optional<std::string> next_here(const std::function<bool(const std::string&)>& wanted) {
    if (buffer_.find('\n', start_) == std::string::npos) read_more(/*wait=*/false);
    const size_t nl = buffer_.find('\n', start_);
    if (nl == std::string::npos || !wanted(buffer_.substr(start_, nl - start_))) return std::nullopt;
    return take_line();
  }

 private:
  std::optional<std::string> take_line() {
    const size_t nl = buffer_.find('\n', start_);
    if (nl == std::string::npos) return std::nullopt;
    std::string line = buffer_.substr(start_, nl - start_);
    start_ = nl + 1;
    return line;
  }

  // Reads what there is, waiting for it or not; false at the end of the input.
  bool read_more(bool wait) {
    buffer_.erase(0, start_);
    start_ = 0;
    if (closed_) return false;
    for (;;) {
      if (!wait) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 0) <= 0) return true;
      }
      char chunk[4096];
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        closed_ = true;
        return false;
      }
      buffer_.append(chunk, static_cast<size_t>(n));
      return true;
    }
  }

  int fd_;
  std::string buffer_;
  size_t start_ = 0;
  bool closed_ = false;
};

}  // namespace

std::optional<std::string> device_unusable(const c10::Device& device) {
  if (device.is_cpu() || device.is_meta()) return std::nullopt;
  try {
    at::ones({1}, at::TensorOptions().device(device)).add(1).cpu();
  } catch (const std::exception& e) {
    return error_text(e);
  }
  return std::nullopt;
}

// A current stream with nothing left to run has run all of the probe's work; once a kernel has faulted, every later
// CUDA call of the process reports it, this question included. A stream still busy, an error or another device
// leave it to device_unusable().
bool known_usable(const c10::Device& device) {
  if (!device.is_cuda()) return false;
  try {
    return c10::impl::getDeviceGuardImpl(device.type())->getStream(device).query();
  } catch (const std::exception&) {
    return false;
  }
}

namespace {

// Dies with the parent, however it dies; false when the parent is gone already. Asked for after the exec, so the
// parent may have died before.
bool tie_to_parent(const WorkerOptions& o) {
  if (!die_with_parent(static_cast<pid_t>(o.parent))) return false;
  if (o.lifeline >= 0) watch_lifeline(o.lifeline);  // from here on, the parent's end closing ends this process
  return true;
}

// The target the worker probes; `env` gets what the run's reports say of the host and the target.
ProbeTarget set_up_target(const WorkerOptions& o, RunEnvironment& env) {
  // The host block of the run's reports (Note [Forked workers]), described before the emulator is active, as the
  // run itself would: describe_host() takes an active emulator's MPS kernels for no MPS backend.
  describe_host(env);
  if (o.target.emulated()) {
    const emu::EmulatorOptions emu_options{o.target.emu.release_dir, o.emu_macos / 100, std::nullopt, o.emu_macos};
    env.emulator = emu::activate_mps_emulator(emu_options).label();
  }
  ProbeTarget target;
  target.name = std::string(o.target.name());
  target.device = o.target.device();
  target.torch_version = compat::kTorchVersion;
  // Turns on CUDA (Note [Probes in one turn]); MPS_AUDIT_IN_TURNS=1 or 0 sets them on any target, to compare.
  const char* in_turns = std::getenv("MPS_AUDIT_IN_TURNS");
  target.in_turns = in_turns && *in_turns ? std::string(in_turns) == "1" : target.device.is_cuda();
  if (o.target.emulated()) target.macos_major = o.emu_macos / 100;
  if (o.target.real_mps()) target.macos_major = macos_major_version();
  env.device = target.device.str();
  return target;
}

// What every probe of the worker reads: the run's spec and its recorded samples (none: null).
struct ProbeData {
  const Spec* spec = nullptr;
  const Recordings* recordings = nullptr;
};

// Everything a probe needs, ready before the worker says so (Note [Spare workers]): the recorded samples (a forked
// worker's are the run's; a spawned one reads them on a thread of its own meanwhile), the spec (the run's, or loaded
// into `loaded`), and the device, which a first tiny operation sets up (seconds on a GPU). A device that fails that
// operation is left to the probes, which say how.
ProbeData get_ready(const WorkerOptions& o, const ProbeTarget& target, std::optional<Spec>& loaded) {
  ProbeData data{o.run_spec, o.run_recordings};
  std::exception_ptr recordings_error;
  std::thread preload;
  // A forked worker has the run's spec and recorded samples (none: null) in its options; a spawned one reads both.
  MPS_AUDIT_ASSERT(o.run_spec || !o.run_recordings, "a worker given the run's recordings without its spec");
  if (!o.run_spec) {
    set_recordings_choice(o.samples);
    preload = std::thread([&] {
      try {
        data.recordings = process_recordings();
      } catch (...) {
        recordings_error = std::current_exception();
      }
    });
  }
  try {
    if (!o.run_spec) {
      const std::vector<std::string> known = aten_ops();
      loaded.emplace(load_spec(o.spec, known));
      add_shipped_repros(*loaded, known);  // as the run's plan did (Note [Known bugs' own calls])
    }
    if (auto broken = device_unusable(target.device))
      std::cerr << "the device failed its first operation: " << *broken << "\n";
  } catch (...) {
    if (preload.joinable()) preload.join();
    throw;
  }
  if (preload.joinable()) preload.join();
  if (recordings_error) std::rethrow_exception(recordings_error);
  if (!data.spec) data.spec = &*loaded;
  return data;
}

// Reads the next probes into `held` (handed out, not run yet): those of the next turn, with the probes that join it as
// far as they are here already when `in_turns` (Note [Probes in one turn]); else one. Returns how many of `held` run
// now, or 0 when the input has closed.
size_t next_turn(LineReader& work, std::deque<WorkLine>& held, bool in_turns) {
  while (held.empty()) {
    const std::optional<std::string> next = work.next();
    if (!next) return 0;
    if (auto line = parse_work_line(*next)) held.push_back(*line);
  }
  while (in_turns) {
    std::optional<WorkLine> joining;
    const auto joins = [&](const std::string& text) {
      joining = parse_work_line(text);
      return joining && joining->joins;
    };
    if (!work.next_here(joins)) break;
    held.push_back(*joining);
  }
  return in_turns ? held.size() : 1;
}

bool failed(const ProbeResult& r) {
  return r.verdict != Verdict::kPass && r.verdict != Verdict::kFallback && r.verdict != Verdict::kSkip;
}

// Note [Unusable device]
// Some device errors are sticky: after an illegal memory access, every later CUDA call of the process fails with the
// same error, so every later probe of this worker would report it. The error may also surface only at the next
// synchronisation when the probe threw first. So after a probe that failed, a tiny operation on the device checks
// that it still works; when it does not, the probe's record says so and the worker retires. On CUDA a stream that
// has run everything queued on it, without an error, says so without the check's own turn on the GPU
// (known_usable()): most failed probes were refused before anything ran on the device, and the default audit has
// about 1,800 failed probes. After a turn of several probes, it cannot say which of them broke the device: those that
// failed run again, each alone (Note [Turns that fail]).
std::optional<std::string> unusable_after(const std::vector<ProbeResult>& results, const c10::Device& device) {
  if (std::none_of(results.begin(), results.end(), failed) || known_usable(device)) return std::nullopt;
  return device_unusable(device);
}

// The replies to a turn's results, in order (Note [Worker protocol]): `held` begins with their probes; `caught`: the
// worker caught a fault in them; `broken`: why the device is unusable after them.
void answer(std::ostream& out, const std::deque<WorkLine>& held, const std::vector<ProbeResult>& results, bool caught,
            const std::optional<std::string>& broken) {
  if (broken) out << encode(RetireReply{});
  for (size_t k = 0; k < results.size(); ++k) {
    if (broken && results.size() > 1 && failed(results[k])) {
      out << encode(AgainReply{held[k].index});
      continue;
    }
    ResultReply reply{held[k].index, results[k]};
    if (broken && failed(reply.result)) {
      reply.result.message += fmt::format(" (and the device was unusable after it: {})", *broken);
    }
    if (caught && !broken && k + 1 == results.size()) out << encode(FinishReply{});
    out << encode(reply);
  }
  out << std::flush;
}

}  // namespace

int run_worker(const WorkerOptions& o, std::ostream& out) {
  if (!tie_to_parent(o)) return kExitOk;
  std::atomic<int64_t>* on_target = o.state >= 0 ? map_shared_word(o.state) : nullptr;
  if (o.state >= 0 && !on_target) throw UserError(fmt::format("cannot map --state {}", o.state));
  // Failed synthesis attempts throw, and libtorch's own fetcher makes every throw expensive (see the function's
  // comment). MPS_AUDIT_TORCH_BACKTRACES=1 keeps it, to measure what that costs.
  if (!std::getenv("MPS_AUDIT_TORCH_BACKTRACES")) compat::install_cheap_stack_trace_fetcher();
  // Note [One thread per worker]
  // The run has a worker per core, so each worker computes on one thread. libtorch would otherwise give each worker
  // a pool of threads as large as the machine for its CPU kernels: on 16 cores, 16 workers with 16 threads each,
  // whose idle threads spin after every parallel region and take the cores the other workers need (the default
  // audit on CUDA spent over twice as much CPU time as its probes took). The inputs are small, so a CPU kernel
  // rarely splits its work at all.
  at::set_num_threads(1);
  EnvReply ready;
  const ProbeTarget target = set_up_target(o, ready.env);
  std::optional<Spec> loaded;
  const ProbeData data = get_ready(o, target, loaded);
  out << encode(ready) << std::flush;
  LineReader work(STDIN_FILENO);
  std::deque<WorkLine> held;  // handed out, not run yet
  bool caught_any = false;    // one probe at a time after a caught fault (Note [Probes after a caught fault])
  for (;;) {
    const size_t count = next_turn(work, held, target.in_turns && !caught_any);
    if (count == 0) std::_Exit(kExitOk);  // the parent is done with us (static destructors may be slow or unsafe)
    std::vector<ProbeRequest> requests;
    for (size_t k = 0; k < count; ++k) requests.push_back({held[k].op, held[k].dtype});
    const size_t caught_before = faults_caught();
    const std::vector<ProbeResult> results =
        probe_ops(target, *data.spec, data.recordings, requests, [&](size_t k, ProbeStage stage) {
          if (on_target) on_target->store(stage_word(held[k].index, stage), std::memory_order_relaxed);
        });
    const bool caught = faults_caught() != caught_before;
    caught_any = caught_any || caught;
    const std::optional<std::string> broken = unusable_after(results, target.device);
    answer(out, held, results, caught, broken);
    if (broken) std::_Exit(kExitOk);  // with the device broken, releasing its memory could abort
    held.erase(held.begin(), held.begin() + static_cast<long>(results.size()));
  }
}

}  // namespace mps_audit
