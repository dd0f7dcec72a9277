// Keeps the GitHub Actions workflows of docs/ci/ valid: they parse, shard the audit over a matrix whose size is the
// N of --shard K/N, merge in a job that waits for the shards, and call only subcommands and flags the binary has.
#include <map>
#include <regex>
#include <set>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "common/paths.h"
#include "test_support.h"

namespace mps_audit {
namespace {

using testing::run_mps_audit;
using testing::source_path;

// Every `build/mps-audit ...` command of a job's run steps, one string each (folded lines joined).
std::vector<std::string> mps_audit_commands(const YAML::Node& job) {
  std::vector<std::string> commands;
  for (const auto& step : job["steps"]) {
    if (!step["run"]) continue;
    std::string text = step["run"].as<std::string>();
    text = std::regex_replace(text, std::regex("\\\\\n"), " ");
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
      const size_t at = line.find("build/mps-audit ");
      if (at != std::string::npos) commands.push_back(line.substr(at));
    }
  }
  return commands;
}

std::vector<std::string> words(const std::string& command) {
  std::istringstream in(command);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

// The flags a subcommand's --help lists.
std::string help_of(const std::string& subcommand) {
  static std::map<std::string, std::string> cache;
  if (!cache.count(subcommand)) {
    const auto r = run_mps_audit({subcommand, "--help"});
    // CLI11 2.4 and later print the usage line without "Usage: ".
    if (r.exit_code == 0 && r.out.find("mps-audit " + subcommand + " [OPTIONS]") != std::string::npos) {
      cache[subcommand] = r.out;
    } else {
      ADD_FAILURE() << "mps-audit has no subcommand '" << subcommand << "': " << r.err;
    }
  }
  return cache[subcommand];
}

class Workflow : public ::testing::TestWithParam<std::string> {};

TEST_P(Workflow, ShardsMergesAndGatesWithRealFlags) {
  const std::string path = source_path("docs/ci/" + GetParam());
  const YAML::Node doc = YAML::LoadFile(path);
  ASSERT_TRUE(doc["name"]) << path;
  ASSERT_TRUE(doc["on"]) << path;
  ASSERT_TRUE(doc["jobs"] && doc["jobs"].IsMap()) << path;

  std::string shard_job, merge_job;
  size_t shards = 0;
  for (const auto& kv : doc["jobs"]) {
    const std::string name = kv.first.as<std::string>();
    const YAML::Node job = kv.second;
    ASSERT_TRUE(job["runs-on"]) << name;
    ASSERT_TRUE(job["steps"] && job["steps"].IsSequence()) << name;
    for (const auto& step : job["steps"]) EXPECT_TRUE(step["uses"] || step["run"]) << name;
    for (const auto& command : mps_audit_commands(job)) {
      const auto w = words(command);
      ASSERT_GE(w.size(), 2u) << command;
      const std::string help = help_of(w[1]);
      for (const auto& word : w) {
        if (word.rfind("--", 0) != 0 && word != "-o") continue;
        const std::string flag = word.substr(0, word.find('='));
        EXPECT_NE(help.find(flag), std::string::npos) << "mps-audit " << w[1] << " has no " << flag << ": " << path;
      }
      if (w[1] == "run" && command.find("--shard") != std::string::npos) {
        const YAML::Node matrix = job["strategy"]["matrix"]["shard"];
        ASSERT_TRUE(matrix && matrix.IsSequence()) << name << ": --shard without a shard matrix";
        shards = matrix.size();
        for (size_t k = 0; k < shards; ++k) EXPECT_EQ(matrix[k].as<size_t>(), k + 1) << name;
        EXPECT_NE(command.find("--shard ${{ matrix.shard }}/" + std::to_string(shards) + " "), std::string::npos)
            << command;
        EXPECT_EQ(job["strategy"]["fail-fast"].as<bool>(), false) << name;
        shard_job = name;
      }
      if (w[1] == "merge") merge_job = name;
    }
  }
  ASSERT_FALSE(shard_job.empty()) << path << ": no job runs a shard";
  EXPECT_GE(shards, 2u);
  ASSERT_FALSE(merge_job.empty()) << path << ": no job merges";
  const YAML::Node needs = doc["jobs"][merge_job]["needs"];
  ASSERT_TRUE(needs) << merge_job;
  std::set<std::string> needed;
  if (needs.IsScalar()) needed.insert(needs.as<std::string>());
  for (const auto& n : needs) needed.insert(n.as<std::string>());
  EXPECT_TRUE(needed.count(shard_job)) << merge_job << " does not wait for " << shard_job;
  // The merge job gates: it runs diff against a baseline, after the merge.
  const auto merge_commands = mps_audit_commands(doc["jobs"][merge_job]);
  ASSERT_EQ(merge_commands.size(), 2u);
  EXPECT_EQ(words(merge_commands[0])[1], "merge");
  EXPECT_EQ(words(merge_commands[1])[1], "diff");
  EXPECT_NE(merge_commands[1].find("out/results.json"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(DocsCi, Workflow, ::testing::Values("mps-audit-macos.yml", "mps-audit-linux.yml"),
                         [](const auto& info) {
                           std::string name = info.param.substr(0, info.param.find('.'));
                           for (char& c : name) c = (c == '-') ? '_' : c;
                           return name;
                         });

TEST(DocsCi, EveryWorkflowFileIsTested) {
  for (const auto& name : list_directory(source_path("docs/ci"))) {
    EXPECT_TRUE(name == "mps-audit-macos.yml" || name == "mps-audit-linux.yml") << name << " is not tested";
  }
}

}  // namespace
}  // namespace mps_audit
