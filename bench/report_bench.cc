// How long a run's last step takes: rendering the results of the default audit (30,078 records) as results.json.
#include <string>

#include <benchmark/benchmark.h>

#include "results/results_file.h"

namespace mps_audit {
namespace {

const std::string kResults = std::string(MPS_AUDIT_SOURCE_DIR) + "/docs/examples/cuda-torch-2.11.0/results.json";

void BM_RenderResultsJson(benchmark::State& state) {
  const Results results = load_results(kResults);
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = render_results_json(results);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["records"] = static_cast<double>(results.records.size());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_RenderResultsJson)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace mps_audit
