// Tests of the run's pieces: shards of a plan, reading a journal back, and a worker's checks of its device.
#include "run/journal.h"
#include "run/plan.h"
#include "run/pool.h"
#include "run/worker_main.h"
#include "run/worker_process.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <ATen/Context.h>
#include <ATen/ops/full.h>
#include <ATen/ops/index.h>
#include <ATen/ops/zeros.h>
#include <gtest/gtest.h>

#include "common/diagnostics.h"
#include "test_support.h"

namespace mps_audit {
namespace {

std::vector<std::string> plan_of(const std::vector<std::pair<std::string, int>>& ops) {
  std::vector<std::string> plan;
  for (const auto& [op, dtypes] : ops) plan.insert(plan.end(), dtypes, op);
  return plan;
}

using Variables = std::vector<std::pair<std::string, std::string>>;

// Note [Worker environment]: the fallback variable as --fallback says, and on CUDA one hardware queue per context,
// unless the run's own environment says how many.
TEST(WorkerEnvironment, TheFallbackAsToldAndOnCudaOneHardwareQueueUnlessTheRunSetsIt) {
  const char* plain[] = {"HOME=/root", "PYTORCH_ENABLE_MPS_FALLBACK=1", nullptr};
  const Target emulated{TargetKind::kMpsEmu, {}}, mps{TargetKind::kMps, {}}, cuda{TargetKind::kCuda, {}};
  EXPECT_EQ(worker_variables(emulated, "off", plain), (Variables{{"PYTORCH_ENABLE_MPS_FALLBACK", "0"}}));
  EXPECT_EQ(worker_variables(mps, "on", plain), (Variables{{"PYTORCH_ENABLE_MPS_FALLBACK", "1"}}));
  EXPECT_EQ(worker_variables(cuda, "on", plain),
            (Variables{{"PYTORCH_ENABLE_MPS_FALLBACK", "1"}, {"CUDA_DEVICE_MAX_CONNECTIONS", "1"}}));
  const char* told[] = {"CUDA_DEVICE_MAX_CONNECTIONS=4", nullptr};
  EXPECT_EQ(worker_variables(cuda, "on", told), (Variables{{"PYTORCH_ENABLE_MPS_FALLBACK", "1"}}));
  const char* alike[] = {"CUDA_DEVICE_MAX_CONNECTIONS_X=4", nullptr};  // another variable
  EXPECT_EQ(worker_variables(cuda, "off", alike),
            (Variables{{"PYTORCH_ENABLE_MPS_FALLBACK", "0"}, {"CUDA_DEVICE_MAX_CONNECTIONS", "1"}}));
}

// Note [Half the workers first]: on CUDA half the workers start at once (at least one), elsewhere all of them.
TEST(WorkerStarts, OnCudaHalfTheWorkersStartFirst) {
  EXPECT_EQ(workers_started_first(c10::Device("cuda"), 16), 8u);
  EXPECT_EQ(workers_started_first(c10::Device("cuda:0"), 3), 1u);
  EXPECT_EQ(workers_started_first(c10::Device("cuda"), 1), 1u);
  EXPECT_EQ(workers_started_first(c10::Device("cpu"), 16), 16u);
  EXPECT_EQ(workers_started_first(c10::Device("mps"), 2), 2u);
  EXPECT_EQ(workers_started_first(c10::Device("meta"), 5), 5u);
}

// Note [Unusable device]: after a failed probe, a worker skips the check's tiny operation only where the device says
// it has run everything queued without a fault: a CUDA stream that is done. Everywhere else the operation decides.
TEST(DeviceChecks, OnlyACudaStreamThatRanEverythingIsKnownUsable) {
  EXPECT_FALSE(known_usable(c10::Device("cpu")));
  EXPECT_FALSE(known_usable(c10::Device("meta")));
  EXPECT_FALSE(device_unusable(c10::Device("cpu")).has_value());
  if (!at::hasCUDA()) GTEST_SKIP() << "the rest needs a CUDA device";
  // A fault leaves CUDA unusable for the rest of the process, so it happens in a process of its own.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const c10::Device cuda("cuda:0");
        auto fail = [](const char* why) {
          std::fprintf(stderr, "%s\n", why);
          std::_Exit(1);
        };
        if (device_unusable(cuda)) fail("a new device is unusable");
        if (!known_usable(cuda)) fail("an idle stream is not known usable");
        // An index far out of range: the kernel asserts on the device, and nothing waits for it.
        const at::Tensor t = at::zeros({3}, at::TensorOptions().device(cuda));
        const at::Tensor i = at::full({1}, int64_t{1} << 40, at::TensorOptions().device(cuda).dtype(at::kLong));
        try {
          (void)at::index(t, c10::List<c10::optional<at::Tensor>>({i}));
        } catch (const std::exception& e) {
          fail(e.what());  // it is found on the device, later
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        if (known_usable(cuda)) fail("a faulted device is known usable");
        if (!device_unusable(cuda)) fail("a faulted device runs a tiny operation");
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Shards, EveryProbeInExactlyOneShardOperatorsWholeAndBalanced) {
  // Uneven operators: 7 dtypes of one, 1 of another, ...
  const auto plan = plan_of({{"a", 7}, {"b", 1}, {"c", 3}, {"d", 3}, {"e", 2}, {"f", 6}, {"g", 1}, {"h", 4}});
  for (size_t n = 1; n <= 5; ++n) {
    std::vector<int> owner(plan.size(), 0);
    size_t largest = 0, smallest = plan.size();
    for (size_t k = 1; k <= n; ++k) {
      const auto slice = shard_slice(plan, {k, n});
      EXPECT_TRUE(std::is_sorted(slice.begin(), slice.end()));  // plan order
      for (size_t i : slice) ++owner[i];
      largest = std::max(largest, slice.size());
      smallest = std::min(smallest, slice.size());
      for (size_t j = 1; j < slice.size(); ++j) {
        // an operator's probes are contiguous in the plan, so they are contiguous in its shard
        if (plan[slice[j]] == plan[slice[j - 1]]) EXPECT_EQ(slice[j], slice[j - 1] + 1);
      }
      for (size_t i = 0; i < plan.size(); ++i) {
        const bool in = std::find(slice.begin(), slice.end(), i) != slice.end();
        for (size_t j = 0; j < plan.size(); ++j) {
          if (plan[j] == plan[i]) EXPECT_EQ(in, std::find(slice.begin(), slice.end(), j) != slice.end());
        }
      }
    }
    for (int o : owner) EXPECT_EQ(o, 1);
    EXPECT_LE(largest - smallest, 7u) << n;  // never worse than the largest operator
  }
  // 27 probes in 3 shards: 9 each (7+1+1, 6+3, 4+3+2).
  EXPECT_EQ(shard_slice(plan, {1, 3}).size(), 9u);
  EXPECT_EQ(shard_slice(plan, {2, 3}).size(), 9u);
  EXPECT_EQ(shard_slice(plan, {3, 3}).size(), 9u);
  EXPECT_EQ(shard_slice(plan, {}).size(), plan.size());  // no shard: all of it
}

TEST(Shards, ParseRefusesWhatIsNotKOfN) {
  EXPECT_EQ(parse_shard("2/3").to_string(), "2/3");
  EXPECT_EQ(parse_shard("1/1").to_string(), "1/1");
  for (const char* bad : {"0/3", "4/3", "x", "3", "1/0", "-1/3", "1/3/4", " 1/3", ""}) {
    EXPECT_THROW(parse_shard(bad), UserError) << bad;
  }
}

const std::string kHeader = R"({"journal":1,"plan":{"target":"cpu","planned":2}})";
const std::string kRecord = R"({"op":"aten::sin","dtype":"float32","verdict":"pass","fallback_ops":[],"message":""})";

TEST(Journal, ReadsIdentityEnvironmentAndRecords) {
  const std::string text = kHeader + "\n" + R"({"environment":{"device":"cpu"}})" + "\n" + kRecord + "\n";
  const Journal j = parse_journal(text, "journal.jsonl");
  EXPECT_EQ(j.identity["target"], "cpu");
  ASSERT_TRUE(j.environment.has_value());
  EXPECT_EQ(j.environment->device, "cpu");
  ASSERT_EQ(j.records.size(), 1u);
  EXPECT_EQ(j.records[0].op, "aten::sin");
  EXPECT_EQ(j.records[0].verdict, Verdict::kPass);
  EXPECT_FALSE(j.torn);
  EXPECT_EQ(j.valid_bytes, text.size());
}

TEST(Journal, DropsALastLineCutShort) {
  const std::string good = kHeader + "\n" + kRecord + "\n";
  for (const std::string& torn : {kRecord.substr(0, 20), kRecord}) {  // cut in the JSON, or before its newline
    const Journal j = parse_journal(good + torn, "journal.jsonl");
    EXPECT_TRUE(j.torn);
    EXPECT_EQ(j.records.size(), 1u);
    EXPECT_EQ(j.valid_bytes, good.size());
  }
  // An empty journal (killed before its first line): nothing recorded.
  EXPECT_TRUE(parse_journal("", "j").identity.is_null());
}

TEST(Journal, RefusesWhatIsNotAJournal) {
  const testing::BadInput cases[] = {
      {"no_header", "{\"op\": \"aten::sin\"}\n", 1, 1, "not the journal of a run of this mps-audit"},
      {"broken_middle", "{\"journal\":1,\"plan\":{}}\n{\"op\n{}\n", 2, 1, "not a journal line (not JSON)"},
      {"not_a_record", "{\"journal\":1,\"plan\":{}}\n{\"x\": 1}\n", 2, 1, "not a journal line"},
  };
  for (const auto& c : cases) {
    testing::expect_diagnostic(c, "j.jsonl", [](const std::string& text) { parse_journal(text, "j.jsonl"); });
  }
}

}  // namespace
}  // namespace mps_audit
