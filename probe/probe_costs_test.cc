// Tests of the probes' costs kept between runs and the order they give the next run's work (Note [Slowest operators
// first]).
#include "probe/probe_costs.h"

#include <gtest/gtest.h>

#include "common/output_file.h"
#include "common/paths.h"
#include "test_support.h"

namespace mps_audit {
namespace {

using testing::TempDir;
using Probes = std::vector<std::pair<std::string, std::string>>;

ProbeResult record(const std::string& op, const std::string& dtype, double seconds) {
  ProbeResult r;
  r.op = op;
  r.dtype = dtype;
  r.seconds = seconds;
  return r;
}

// The operator of each group, in order.
std::vector<std::string> ops_of(const std::vector<std::vector<size_t>>& groups, const Probes& probes) {
  std::vector<std::string> ops;
  for (const auto& g : groups) ops.push_back(probes[g.front()].first);
  return ops;
}

TEST(ProbeCosts, WithoutFiguresTheLargestOperatorsGoFirstInPlanOrderAmongEquals) {
  const Probes probes = {{"a", "f32"}, {"b", "f32"}, {"b", "i64"}, {"c", "f32"}, {"d", "f32"}, {"d", "i64"}};
  std::vector<std::vector<size_t>> groups = {{0}, {1, 2}, {3}, {4, 5}};
  order_slowest_first(groups, expected_seconds(probes, ProbeCosts{}));
  EXPECT_EQ(ops_of(groups, probes), (std::vector<std::string>{"b", "d", "a", "c"}));
  EXPECT_EQ(groups[0], (std::vector<size_t>{1, 2}));  // each group's probes stay in plan order
}

TEST(ProbeCosts, TheSlowestOperatorGoesFirstWhateverItsSize) {
  const Probes probes = {{"big", "f32"}, {"big", "i64"}, {"big", "bool"}, {"slow", "f32"}, {"small", "f32"}};
  std::vector<std::vector<size_t>> groups = {{0, 1, 2}, {3}, {4}};
  ProbeCosts costs;
  costs.seconds = {{{"big", "f32"}, 0.1}, {{"big", "i64"}, 0.1}, {{"big", "bool"}, 0.1}, {{"slow", "f32"}, 9.0}};
  order_slowest_first(groups, expected_seconds(probes, costs));
  // "small" has no figure: it counts as the mean of the others (2.325 s), more than "big"'s 0.3 s.
  EXPECT_EQ(ops_of(groups, probes), (std::vector<std::string>{"slow", "small", "big"}));
}

TEST(ProbeCosts, WrittenAndReadBackWithTheNewRecordsInPlaceOfTheOldOnes) {
  TempDir dir;
  const std::string path = join_path(dir.path(), kProbeCostsFile);
  ProbeCosts before;
  before.target = "cuda";
  before.seconds = {{{"aten::sin", "float32"}, 1.5}, {{"aten::cos", "float32"}, 2.0}};
  write_file_atomically(
      path, render_probe_costs(before, {record("aten::sin", "float32", 0.25), record("aten::tan", "int64", 3.0)}));
  const ProbeCosts after = read_probe_costs(path, "cuda");
  EXPECT_EQ(after.target, "cuda");
  const std::map<std::pair<std::string, std::string>, double> expected = {
      {{"aten::cos", "float32"}, 2.0}, {{"aten::sin", "float32"}, 0.25}, {{"aten::tan", "int64"}, 3.0}};
  EXPECT_EQ(after.seconds, expected);
}

TEST(ProbeCosts, ABaselineFillsInWhatTheFolderHasNoFigureForWhenMeasuredOnTheSameTarget) {
  ProbeCosts costs;
  costs.target = "cuda";
  costs.seconds = {{{"aten::sin", "float32"}, 1.5}};
  Results baseline;
  baseline.environment.target = "cuda";
  baseline.records = {record("aten::sin", "float32", 9.0), record("aten::cos", "int64", 2.0)};
  Results elsewhere = baseline;
  elsewhere.environment.target = "mps";
  elsewhere.records = {record("aten::tan", "int64", 4.0)};
  add_missing_costs(costs, baseline);
  add_missing_costs(costs, elsewhere);
  const std::map<std::pair<std::string, std::string>, double> expected = {{{"aten::sin", "float32"}, 1.5},
                                                                          {{"aten::cos", "int64"}, 2.0}};
  EXPECT_EQ(costs.seconds, expected);  // the folder's own figure wins; another target's are left out
}

TEST(ProbeCosts, AnotherTargetsFiguresAMissingFileAndBadLinesAreLeftOut) {
  TempDir dir;
  const std::string path = join_path(dir.path(), kProbeCostsFile);
  EXPECT_TRUE(read_probe_costs(path, "cuda").seconds.empty());  // no file
  ProbeCosts cpu;
  cpu.target = "cpu";
  write_file_atomically(path, render_probe_costs(cpu, {record("aten::sin", "float32", 1.0)}));
  EXPECT_EQ(read_probe_costs(path, "cpu").seconds.size(), 1u);
  EXPECT_TRUE(read_probe_costs(path, "cuda").seconds.empty());  // measured on another target
  write_file_atomically(path,
                        "mps-audit probe costs 1 cpu\naten::sin\tfloat32\t1.5\nno tabs\naten::cos\tfloat32\tx\n"
                        "aten::tan\tfloat32\t-1\n\tfloat32\t2\naten::exp\tint64\t0.5\n");
  const std::map<std::pair<std::string, std::string>, double> expected = {{{"aten::sin", "float32"}, 1.5},
                                                                          {{"aten::exp", "int64"}, 0.5}};
  EXPECT_EQ(read_probe_costs(path, "cpu").seconds, expected);
  write_file_atomically(path, "{\"not\": \"a costs file\"}\n");
  EXPECT_TRUE(read_probe_costs(path, "cpu").seconds.empty());
}

}  // namespace
}  // namespace mps_audit
