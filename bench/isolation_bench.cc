// What isolating each probe in a worker process costs: one probe in this process (probe_op) against the same probe
// handed to a worker over its pipes (see Note [Worker protocol] in run/worker_protocol.cc), and starting a worker,
// which a crash or a timeout costs. On the cpu target with the spec's small default tensors, so the probe itself is
// cheap and the overhead shows.
#include <csignal>
#ifdef __linux__
#include <sched.h>
#endif
#include <stdexcept>
#include <string>
#include <system_error>
#include <variant>

#include <ATen/ops/add.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/randn.h>
#include <benchmark/benchmark.h>
#include <unistd.h>

#include "common/torch_compat.h"
#include "probe/probe_op.h"
#include "probe/recorded_samples.h"
#include "probe/spec.h"
#include "registry/live_registry.h"
#include "run/child_process.h"
#include "run/worker_protocol.h"

namespace mps_audit {
namespace {

const std::string kSpec = std::string(MPS_AUDIT_SOURCE_DIR) + "/opspec.yaml";

std::vector<std::string> all_ops() {
  std::vector<std::string> names;
  for (const auto& e : scan_live_dispatcher("CPU").ops) names.push_back(e.name);
  return names;
}

// A worker of the real binary, as `run` starts one (without the parent's log file and process group).
class WorkerProcess {
 public:
  WorkerProcess() {
    int to[2], from[2];
    if (::pipe(to) != 0 || ::pipe(from) != 0) throw std::runtime_error("pipe");
    std::vector<std::string> words = {MPS_AUDIT_BINARY, "__worker", "--target", "cpu",
                                      "--spec",         kSpec,      "--parent", std::to_string(::getpid()),
                                      "--samples",      "none"};
    ChildSetup setup;
    setup.descriptors = {{0, to[0], ""}, {1, from[1], ""}};
    set_cloexec(to[1]);
    set_cloexec(from[0]);
    if (spawn_child(words[0], words, setup, pid_) != 0) throw std::runtime_error("spawn");
    ::close(to[0]);
    ::close(from[1]);
    in_ = to[1];
    out_ = from[0];
    if (read_line().rfind("env ", 0) != 0) throw std::runtime_error("the worker did not start");
  }
  ~WorkerProcess() {
    ::close(in_);  // the worker exits when its input closes
    try {
      wait_for_child(pid_);
    } catch (const std::system_error&) {
    }
    ::close(out_);
  }
  // One probe, there and back: the line out, the result line back.
  std::string probe(const std::string& op, const std::string& dtype) {
    send(op, dtype);
    return receive();
  }
  void send(const std::string& op, const std::string& dtype) {
    const std::string line = work_line(0, op, dtype, /*joins=*/false);
    if (::write(in_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) throw std::runtime_error("w");
  }
  std::string receive() {
    std::string answer = read_line();
    // Read as the pool reads it (run/worker_protocol.h): the record's JSON is parsed too.
    if (!std::holds_alternative<ResultReply>(parse_reply(answer))) {
      throw std::runtime_error("not a result: " + answer);
    }
    return answer;
  }

 private:
  std::string read_line() {
    size_t nl;
    while ((nl = buffer_.find('\n')) == std::string::npos) {
      char chunk[65536];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n <= 0) throw std::runtime_error("the worker ended");
      buffer_.append(chunk, static_cast<size_t>(n));
    }
    std::string line = buffer_.substr(0, nl);
    buffer_.erase(0, nl + 1);
    return line;
  }
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string buffer_;
};

const char* const kOps[] = {"aten::add.Tensor", "aten::sin", "aten::mm"};

// The least a probe can be: two random 4x5 inputs, the op run twice (reference and "target"), the inputs copied for
// the second run, allclose. What the audit's probe costs, in a worker or not, is measured against this.
void BM_MinimalProbe(benchmark::State& state) {
  for (auto _ : state) {
    const at::Tensor a = at::randn({4, 5}), b = at::randn({4, 5});
    const at::Tensor expected = at::add(a, b);
    const at::Tensor a2 = a.clone(), b2 = b.clone();
    const at::Tensor actual = at::add(a2, b2);
    benchmark::DoNotOptimize(at::allclose(expected, actual));
  }
}
BENCHMARK(BM_MinimalProbe)->Unit(benchmark::kMicrosecond);

void BM_ProbeInProcess(benchmark::State& state) {
  compat::install_cheap_stack_trace_fetcher();  // as workers do
  set_recordings_choice("none");                // the spec's small default tensors, as the worker below gets
  const Spec spec = load_spec(kSpec, all_ops());
  ProbeTarget target;
  target.name = "cpu";
  target.torch_version = compat::kTorchVersion;
  const std::string op = kOps[state.range(0)];
  state.SetLabel(op);
  for (auto _ : state) {
    ProbeResult r = probe_op(target, spec, op, "float32");
    benchmark::DoNotOptimize(r.verdict);
  }
}
BENCHMARK(BM_ProbeInProcess)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);

// One probe at a time, there and back, with a worker of the real binary.
void ping_pong(benchmark::State& state) {
  WorkerProcess worker;
  const std::string op = kOps[state.range(0)];
  state.SetLabel(op);
  for (auto _ : state) {
    std::string answer = worker.probe(op, "float32");
    benchmark::DoNotOptimize(answer.data());
  }
}

void BM_ProbeInWorker(benchmark::State& state) {
  ping_pong(state);
}
BENCHMARK(BM_ProbeInWorker)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond)->UseRealTime();

#ifdef __linux__
// The same, with this process and its worker on one core: every hand-over is then a context switch on that core,
// not a wake-up of another, idle one. That is what a probe costs in a run that keeps every core busy (a worker per
// core): the figure above adds the time an idle core takes to wake, twice per probe, which on a virtual machine can
// be several times the probe itself.
void BM_ProbeInWorkerOneCore(benchmark::State& state) {
  cpu_set_t before, one;
  sched_getaffinity(0, sizeof before, &before);
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &before)) {
      CPU_SET(cpu, &one);
      break;
    }
  }
  sched_setaffinity(0, sizeof one, &one);  // the worker inherits it
  ping_pong(state);
  sched_setaffinity(0, sizeof before, &before);
}
BENCHMARK(BM_ProbeInWorkerOneCore)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond)->UseRealTime();
#endif

// As the run hands out probes (Note [Probes sent ahead] in run/scheduler.cc): the next probe is sent while the worker
// works on the one before, so it never waits for this process to answer. Each iteration is one probe's result.
void BM_ProbeInWorkerSentAhead(benchmark::State& state) {
  WorkerProcess worker;
  const std::string op = kOps[state.range(0)];
  state.SetLabel(op);
  worker.send(op, "float32");
  for (auto _ : state) {
    worker.send(op, "float32");
    std::string answer = worker.receive();
    benchmark::DoNotOptimize(answer.data());
  }
  worker.receive();
}
BENCHMARK(BM_ProbeInWorkerSentAhead)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Starting a worker until it is ready for work (loads libtorch, sets up its target, reads the spec), then ending it.
void BM_WorkerStart(benchmark::State& state) {
  for (auto _ : state) {
    WorkerProcess worker;
  }
}
BENCHMARK(BM_WorkerStart)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);

}  // namespace
}  // namespace mps_audit
