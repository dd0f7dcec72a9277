// How long the registry takes: scanning the live dispatcher, and reading and classifying a release's YAML.
#include <string>

#include <benchmark/benchmark.h>

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

// What `mps-audit registry --native-functions data/pytorch-2.11.0` does before rendering.
void BM_LoadReleaseRegistry(benchmark::State& state) {
  for (auto _ : state) {
    Registry reg = load_registry(kRelease, "", "MPS");
    benchmark::DoNotOptimize(reg.ops.data());
  }
}
BENCHMARK(BM_LoadReleaseRegistry)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mps_audit

BENCHMARK_MAIN();
