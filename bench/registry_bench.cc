// How long the registry takes: scanning the live dispatcher, and reading and classifying a release's YAML.
#include <cstdlib>
#include <string>

#include <benchmark/benchmark.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/output_file.h"
#include "registry/live_registry.h"
#include "registry/load_registry.h"
#include "registry/native_functions.h"
#include "registry/static_registry.h"

namespace mps_audit {
namespace {

const std::string kRelease = std::string(MPS_AUDIT_SOURCE_DIR) + "/data/pytorch-2.11.0";

void BM_LiveScan(benchmark::State& state) {
  for (auto _ : state) {
    Registry reg = scan_live_dispatcher("MPS");
    benchmark::DoNotOptimize(reg.ops.data());
    state.counters["operators"] = static_cast<double>(reg.ops.size());
  }
}
BENCHMARK(BM_LiveScan)->Unit(benchmark::kMillisecond);

void BM_ParseNativeFunctions(benchmark::State& state) {
  const std::string text = read_file(kRelease + "/native_functions.yaml");
  for (auto _ : state) {
    auto decls = parse_native_functions(text, "native_functions.yaml");
    benchmark::DoNotOptimize(decls.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseNativeFunctions)->Unit(benchmark::kMillisecond);

void BM_ClassifyNativeFunctions(benchmark::State& state) {
  const auto decls = read_native_functions(kRelease + "/native_functions.yaml");
  for (auto _ : state) {
    Registry reg = classify_native_functions(decls, {}, "MPS");
    benchmark::DoNotOptimize(reg.ops.data());
  }
}
BENCHMARK(BM_ClassifyNativeFunctions)->Unit(benchmark::kMillisecond);

// What `mps-audit registry --native-functions data/pytorch-2.11.0` does before rendering: a copy of the release
// whose YAML differs in a comment at each iteration, since a process parses a file it has read before with the same
// text only once (read_native_functions).
void BM_LoadReleaseRegistry(benchmark::State& state) {
  char folder[] = "/tmp/mps-audit-bench-XXXXXX";
  if (!::mkdtemp(folder)) {
    state.SkipWithError("mkdtemp failed");
    return;
  }
  const std::string copy = std::string(folder) + "/pytorch-2.11.0";
  ::mkdir(copy.c_str(), 0755);
  write_file_atomically(copy + "/mps_extra_registrations.tsv", read_file(kRelease + "/mps_extra_registrations.tsv"));
  const std::string yaml = read_file(kRelease + "/native_functions.yaml");
  size_t iteration = 0;
  for (auto _ : state) {
    state.PauseTiming();
    write_file_atomically(copy + "/native_functions.yaml", yaml + "# " + std::to_string(++iteration) + "\n");
    state.ResumeTiming();
    Registry reg = load_registry(copy, "", "MPS");
    benchmark::DoNotOptimize(reg.ops.data());
  }
  for (const char* file : {"/native_functions.yaml", "/mps_extra_registrations.tsv"}) ::unlink((copy + file).c_str());
  ::rmdir(copy.c_str());
  ::rmdir(folder);
}
BENCHMARK(BM_LoadReleaseRegistry)->Unit(benchmark::kMillisecond);

// The same release loaded again, its YAML unchanged: what a worker forked from a run pays to activate the emulator
// (Note [Forked workers] in run/worker_process.cc).
void BM_LoadReleaseRegistryAgain(benchmark::State& state) {
  (void)load_registry(kRelease, "", "MPS");
  for (auto _ : state) {
    Registry reg = load_registry(kRelease, "", "MPS");
    benchmark::DoNotOptimize(reg.ops.data());
  }
}
BENCHMARK(BM_LoadReleaseRegistryAgain)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mps_audit

BENCHMARK_MAIN();
