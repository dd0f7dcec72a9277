// Tests of merging shards: order, accounting, and what is refused.
#include "results/merge.h"

#include <gtest/gtest.h>

#include "common/diagnostics.h"

namespace mps_audit {
namespace {

ProbeResult record(const std::string& op, const std::string& dtype, Verdict v = Verdict::kPass) {
  ProbeResult r;
  r.op = op;
  r.dtype = dtype;
  r.verdict = v;
  return r;
}

MergeInput shard(const std::string& name, std::vector<ProbeResult> records) {
  MergeInput in;
  in.path = name + ".json";
  in.results.environment.target = "mps-emu";
  in.results.environment.torch_version = "2.11.0";
  in.results.environment.os = "Darwin 23.6.0 (arm64)";
  in.results.run.shard = name;
  in.results.run.planned = in.results.run.finished = records.size();
  in.results.records = std::move(records);
  return in;
}

std::string message_of(const std::vector<MergeInput>& parts) {
  try {
    merge_results(parts);
  } catch (const UserError& e) {
    return format_diagnostic(e);
  }
  return "merged";
}

TEST(Merge, PlanOrderAndAccounting) {
  auto a = shard("1/2", {record("aten::add", "float32"), record("aten::add", "float16"), record("aten::sin", "int64")});
  auto b = shard("2/2", {record("aten::cos", "float32"), record("aten::cos", "bool")});
  b.results.environment.os = "Darwin 23.4.0 (arm64)";  // another minor release of one macOS: same environment
  b.results.run.planned = 3;                           // interrupted with one probe not run
  b.results.run.interrupted = "SIGTERM";
  const Results m = merge_results({b, a});
  std::vector<std::string> order;
  for (const auto& r : m.records) order.push_back(r.op + " " + r.dtype);
  EXPECT_EQ(order, (std::vector<std::string>{"aten::add float32", "aten::add float16", "aten::cos float32",
                                             "aten::cos bool", "aten::sin int64"}));
  EXPECT_EQ(m.run.planned, 6u);
  EXPECT_EQ(m.run.finished, 5u);
  EXPECT_EQ(m.run.interrupted, "SIGTERM in shard 2/2");
  EXPECT_FALSE(m.run.complete());
  EXPECT_EQ(m.run.shard, "");
  EXPECT_EQ(m.environment.target, "mps-emu");
}

TEST(Merge, Refusals) {
  const auto a = shard("1/2", {record("aten::add", "float32")});
  auto b = shard("2/2", {record("aten::sin", "float32")});
  EXPECT_EQ(message_of({a, b}), "merged");

  auto other = b;
  other.results.environment.emulator = "emulated MPS (PyTorch 2.11.0 registry, macOS 13 rules)";
  EXPECT_EQ(message_of({a, other}),
            "error: 2/2.json: not from the same environment as 1/2.json: emulator (release and macOS rules) "
            "'emulated MPS (PyTorch 2.11.0 registry, macOS 13 rules)', not 'none'; only shards of one run merge");
  other = b;
  other.results.environment.os = "Darwin 24.0.0 (arm64)";
  EXPECT_NE(message_of({a, other}).find("operating system 'Darwin 24 (arm64)', not 'Darwin 23 (arm64)'"),
            std::string::npos);

  other = b;
  other.results.environment.spec_hash = "fnv1a64:0000000000000001";  // same path, edited between the shards
  EXPECT_NE(message_of({a, other}).find("spec's content 'fnv1a64:0000000000000001', not 'none'"), std::string::npos)
      << message_of({a, other});

  other = b;
  other.results.environment.samples_hash = "fnv1a64:0000000000000002";  // shards replayed other recordings
  EXPECT_NE(message_of({a, other}).find("recorded samples 'fnv1a64:0000000000000002', not 'none'"), std::string::npos)
      << message_of({a, other});

  auto overlap = shard("2/2", {record("aten::sin", "float32"), record("aten::add", "float32")});
  EXPECT_EQ(message_of({a, overlap}),
            "error: 2/2.json: aten::add float32 is also in 1/2.json: the parts overlap, so they are not shards of one "
            "run");
  EXPECT_EQ(message_of({a}), "error: shard 2/2 of this split is missing: merge every shard of a run");
  auto twice = a;
  twice.path = "copy.json";
  EXPECT_EQ(message_of({a, twice}), "error: copy.json: shard 1/2 is given twice (also 1/2.json)");
  EXPECT_NE(message_of({a, shard("2/3", {})}).find("only the shards of one split merge"), std::string::npos);
}

}  // namespace
}  // namespace mps_audit
