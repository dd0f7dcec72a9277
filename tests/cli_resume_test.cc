// End-to-end tests of what happens around a run: killed and resumed, interrupted, locked, sharded and merged, and
// bad input to those. They run the real binary on emulated MPS with a handful of operators; aten::tan hangs (the
// emulator's fault injection), which holds a run at a known point for as long as a test needs.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/paths.h"
#include "test_support.h"

extern char** environ;

namespace mps_audit {
namespace {

using testing::run_mps_audit;
using testing::slurp;
using testing::source_path;
using testing::TempDir;

const char* const kOps = "^aten::(abs|cos|relu|tan|tanh)$";  // tan sorts between the others: it hangs mid-plan
const char* const kHang = "MPS_AUDIT_EMU_FAULTS=aten::tan=hang";

std::vector<std::string> run_args(const std::string& out, std::vector<std::string> more = {}) {
  std::vector<std::string> args =
      testing::emulated_run_args(out, {"--ops", kOps, "--dtypes", "float32,float16", "-j", "2", "--format", "json,md"});
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// The binary started in the background, its output going to files.
class Background {
 public:
  Background(const std::vector<std::string>& args, const std::vector<std::string>& extra_env) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, (dir_.path() + "/out").c_str(), O_WRONLY | O_CREAT, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, (dir_.path() + "/err").c_str(), O_WRONLY | O_CREAT, 0644);
    std::vector<std::string> words = {testing::binary_path()};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    std::vector<std::string> env = extra_env;
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start the binary");
  }
  ~Background() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      wait();
    }
  }
  pid_t pid() const { return pid_; }
  // Its exit code, 128 + N for a signal N.
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::string err() const { return slurp(dir_.path() + "/err"); }
  std::string out() const { return slurp(dir_.path() + "/out"); }

 private:
  TempDir dir_;
  pid_t pid_ = -1;
};

// Whether a process exists and is not a zombie.
bool running(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
#ifdef __linux__
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z') return false;
#endif
  return true;
}

// The processes whose parent is `parent` (Linux: from /proc).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
#ifdef __linux__
  for (const auto& name : list_directory("/proc")) {
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = slurp("/proc/" + name + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    // After ") S ": the parent's pid.
    if (std::atol(stat.c_str() + paren + 4) == parent) children.push_back(std::atol(name.c_str()));
  }
#endif
  return children;
}

bool eventually(const std::function<bool()>& condition, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return condition();
}

size_t journal_records(const std::string& dir) {
  size_t n = 0;
  std::ifstream in(dir + "/journal.jsonl");
  std::string line;
  while (std::getline(in, line)) n += line.find("\"verdict\":") != std::string::npos ? 1 : 0;  // a record
  return n;
}

// A run's records without their timings, which differ from run to run.
nlohmann::json records(const std::string& results_json) {
  nlohmann::json doc = nlohmann::json::parse(slurp(results_json));
  nlohmann::json out = nlohmann::json::array();
  for (auto r : doc["results"]) {
    r.erase("seconds");
    out.push_back(r);
  }
  return out;
}

// Starts the hanging run and waits until every probe but tan's two has a record.
std::unique_ptr<Background> start_hanging_run(const std::string& out) {
  auto run = std::make_unique<Background>(run_args(out, {"--timeout", "120"}), std::vector<std::string>{kHang});
  const bool reached = eventually([&] { return journal_records(out) == 8; }, 90);
  EXPECT_TRUE(reached) << run->err();
  return run;
}

TEST(CliResume, KillNineThenResumeEqualsAnUninterruptedRun) {
  TempDir whole, resumed;
  auto reference = run_mps_audit(run_args(whole.path()));
  ASSERT_EQ(reference.exit_code, 0) << reference.err;

  auto run = start_hanging_run(resumed.path());
  const std::vector<pid_t> workers = children_of(run->pid());
#ifdef __linux__
  EXPECT_FALSE(workers.empty());
#endif
  ::kill(run->pid(), SIGKILL);
  EXPECT_EQ(run->wait(), 128 + SIGKILL);
  // No worker outlives its parent (the one on tan would otherwise hang forever).
  for (pid_t w : workers) EXPECT_TRUE(eventually([&] { return !running(w); }, 10)) << "worker " << w << " survived";
  EXPECT_FALSE(path_exists(resumed.path() + "/results.json"));

  // A record cut short by the kill: ignored, and its probe runs again.
  std::ofstream(resumed.path() + "/journal.jsonl", std::ios::app) << R"({"dtype":"float32","fallback_ops":[],"me)";
  auto again = run_mps_audit(run_args(resumed.path(), {"--resume"}));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("8 of 10 probes recorded (the journal's last line was cut short"), std::string::npos)
      << again.err;
  EXPECT_NE(again.err.find("probing 2 op x dtype pairs"), std::string::npos) << again.err;
  EXPECT_EQ(records(resumed.path() + "/results.json"), records(whole.path() + "/results.json"));
  EXPECT_NE(again.out.find("probes: 10 planned, 10 finished, 0 not run, 0 lost"), std::string::npos) << again.out;
  const auto doc = nlohmann::json::parse(slurp(resumed.path() + "/results.json"));
  EXPECT_EQ(doc["run"]["planned"], 10);
  EXPECT_EQ(doc["run"]["finished"], 10);
  EXPECT_EQ(doc["run"]["complete"], true);
  EXPECT_EQ(journal_records(resumed.path()), 10u);  // one record per probe, the torn one gone

  // Resuming again runs nothing and gives the same reports.
  auto third = run_mps_audit(run_args(resumed.path(), {"--resume"}));
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_NE(third.err.find("probing 0 op x dtype pairs"), std::string::npos) << third.err;
  EXPECT_EQ(records(resumed.path() + "/results.json"), records(whole.path() + "/results.json"));

  // A run made with other flags is never continued: one line, exit 2, nothing touched.
  const std::string before = slurp(resumed.path() + "/results.json");
  const std::string journal = slurp(resumed.path() + "/journal.jsonl");
  auto other = run_args(resumed.path(), {"--resume"});
  other[other.size() - 6] = "float32,bfloat16";  // --dtypes
  auto refused = run_mps_audit(other);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(refused.err, "error: " + resumed.path() +
                             "/journal.jsonl: --resume: this folder's run was made with another dtypes "
                             "(float32,float16 there, float32,bfloat16 now); start it anew without --resume, or in "
                             "another --out\n");
  EXPECT_EQ(slurp(resumed.path() + "/results.json"), before);
  EXPECT_EQ(slurp(resumed.path() + "/journal.jsonl"), journal);
}

// A worker ends as soon as its lifeline closes (Note [Worker protocol]), even in a probe that never returns and with
// its input still open, and its parent alive: the parent dying is what closes the lifeline in a run.
TEST(CliResume, ABusyWorkerEndsWhenItsLifelineCloses) {
  int in[2], out[2], life[2];
  ASSERT_EQ(::pipe(in), 0);
  ASSERT_EQ(::pipe(out), 0);
  ASSERT_EQ(::pipe(life), 0);
  for (int fd : {in[0], in[1], out[0], out[1], life[0], life[1]}) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, life[0], 3);
  std::vector<std::string> words = {testing::binary_path(),
                                    "__worker",
                                    "--target",
                                    "mps-emu",
                                    "--emu-release",
                                    source_path("data/pytorch-1.13.1"),
                                    "--spec",
                                    source_path("opspec.yaml"),
                                    "--samples",
                                    "none",
                                    "--lifeline",
                                    "3"};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = {kHang};
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  for (int fd : {in[0], out[1], life[0]}) ::close(fd);

  std::string said;  // up to its "env" line: it is ready
  char c;
  while (said.find('\n') == std::string::npos && ::read(out[0], &c, 1) == 1) said += c;
  ASSERT_EQ(said.rfind("env ", 0), 0u) << said;
  const std::string probe = "0\taten::tan\tfloat32\n";
  ASSERT_EQ(::write(in[1], probe.data(), probe.size()), static_cast<ssize_t>(probe.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_TRUE(running(pid)) << "the hanging probe ended";
  ::close(life[1]);
  const bool ended = eventually([&] { return ::waitpid(pid, nullptr, WNOHANG) == pid; }, 10);
  EXPECT_TRUE(ended) << "the worker outlived its lifeline";
  if (!ended) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  ::close(in[1]);
  ::close(out[0]);
}

TEST(CliResume, SignalsGiveIncompleteReportsAndNoWorkersAndTheFolderIsLocked) {
  for (int signal : {SIGINT, SIGTERM}) {
    TempDir dir;
    auto run = start_hanging_run(dir.path());
    // The worker that ran out of work has exited and was reaped: no defunct process is left while the run goes on.
    EXPECT_TRUE(eventually(
        [&] {
          const auto children = children_of(run->pid());
          return std::all_of(children.begin(), children.end(), running);
        },
        10));
    const std::vector<pid_t> workers = children_of(run->pid());
    if (signal == SIGINT) {
      // A second run on the same folder meanwhile is refused, and leaves the journal alone.
      const std::string journal = slurp(dir.path() + "/journal.jsonl");
      auto second = run_mps_audit(run_args(dir.path()));
      EXPECT_EQ(second.exit_code, 2);
      EXPECT_EQ(second.err.rfind(
                    "error: " + dir.path() + " is in use by another run (pid " + std::to_string(run->pid()) + ")", 0),
                0u)
          << second.err;
      EXPECT_EQ(slurp(dir.path() + "/journal.jsonl"), journal);
    }
    ::kill(run->pid(), signal);
    EXPECT_EQ(run->wait(), 128 + signal) << run->err();
    for (pid_t w : workers) EXPECT_FALSE(running(w)) << "worker " << w << " outlived the run";
    const std::string name = signal == SIGINT ? "SIGINT" : "SIGTERM";
    EXPECT_NE(run->err().find("stopped by " + name + ": 8 of 10 probes finished, 2 not run"), std::string::npos)
        << run->err();
    const auto doc = nlohmann::json::parse(slurp(dir.path() + "/results.json"));
    EXPECT_EQ(doc["run"]["interrupted"], name);
    EXPECT_EQ(doc["run"]["planned"], 10);
    EXPECT_EQ(doc["run"]["finished"], 8);
    EXPECT_EQ(doc["run"]["not_run"], 2);
    EXPECT_EQ(doc["run"]["lost"], 0);
    EXPECT_EQ(doc["run"]["complete"], false);
    EXPECT_EQ(doc["results"].size(), 8u);
    for (const auto& r : doc["results"]) EXPECT_NE(r["op"], "aten::tan");
    EXPECT_NE(slurp(dir.path() + "/results.md").find("Incomplete run"), std::string::npos);
    EXPECT_NE(run->out().find("probes: 10 planned, 8 finished, 2 not run, 0 lost"), std::string::npos) << run->out();
  }
}

// Runs shard k of 3 (or the whole plan for k 0) into dir/<k>.
testing::CommandResult run_shard(const TempDir& dir, int k) {
  const std::string out = dir.path() + "/" + std::to_string(k);
  return run_mps_audit(k ? run_args(out, {"--shard", std::to_string(k) + "/3"}) : run_args(out));
}

TEST(CliResume, ThreeShardsMergeToTheWholeRun) {
  TempDir dir;
  size_t planned = 0;
  for (int k = 0; k <= 3; ++k) {
    auto r = run_shard(dir, k);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(slurp(dir.path() + "/" + std::to_string(k) + "/results.json"));
    EXPECT_EQ(doc["run"]["shard"], k ? std::to_string(k) + "/3" : "");
    if (k) {
      planned += doc["run"]["planned"].get<size_t>();
      // Five operators of two dtypes: every operator whole in one shard, and 4, 4, 2 probes.
      EXPECT_EQ(doc["run"]["planned"], k < 3 ? 4 : 2) << k;
      EXPECT_EQ(doc["results"].size() % 2, 0u);
    }
  }
  EXPECT_EQ(planned, 10u);
  const auto shard = [&](int k) { return dir.path() + "/" + std::to_string(k) + "/results.json"; };
  const std::string merged = dir.path() + "/merged/all.json";
  auto m = run_mps_audit({"merge", shard(3), shard(1), shard(2), "-o", merged, "--format", "json,md"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_EQ(records(merged), records(shard(0)));
  const auto doc = nlohmann::json::parse(slurp(merged));
  EXPECT_EQ(doc["run"]["planned"], 10);
  EXPECT_EQ(doc["run"]["complete"], true);
  EXPECT_EQ(doc["summary"], nlohmann::json::parse(slurp(shard(0)))["summary"]);
  EXPECT_TRUE(path_exists(dir.path() + "/merged/results.md"));

  // What is refused: one line, exit 2, nothing written.
  auto edited = [&](int k, const std::function<void(nlohmann::json&)>& edit) {
    auto doc = nlohmann::json::parse(slurp(shard(k)));
    edit(doc);
    return dir.write("edited-" + std::to_string(k) + ".json", doc.dump());
  };
  const std::string out = dir.path() + "/refused/out.json";
  auto refuse = [&](std::vector<std::string> inputs, const std::string& message) {
    std::vector<std::string> args = {"merge"};
    args.insert(args.end(), inputs.begin(), inputs.end());
    args.insert(args.end(), {"-o", out, "--format", "json,md"});
    auto r = run_mps_audit(args);
    EXPECT_EQ(r.exit_code, 2) << message;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_FALSE(path_exists(dir.path() + "/refused")) << message;
  };
  const std::string other_fallback = edited(2, [](auto& d) { d["environment"]["fallback_mode"] = "off"; });
  refuse({shard(1), other_fallback, shard(3)}, "not from the same environment as " + shard(1) + ": fallback mode");
  const std::string other_torch = edited(3, [](auto& d) { d["environment"]["torch_version"] = "0.0.0+other"; });
  refuse({shard(1), shard(2), other_torch}, "libtorch '0.0.0+other'");
  const std::string overlapping = edited(1, [](auto& d) { d["run"]["shard"] = "2/3"; });
  refuse({shard(1), overlapping, shard(3)}, "is also in " + shard(1) + ": the parts overlap");
  refuse({shard(1), shard(1), shard(2)}, "given twice");
  refuse({shard(1), shard(2)}, "shard 3/3 of this split is missing");
  refuse({shard(1), shard(2), shard(3), shard(0)}, "a whole run");
  refuse({shard(1), dir.path() + "/1/journal.jsonl"}, "journal.jsonl:2:1: not JSON");
  refuse({shard(1), dir.write("other.json", R"({"ops": []})")}, "not a results.json of mps-audit run");
}

TEST(CliResume, BadInputGivesOneLineAndWritesNothing) {
  TempDir dir;
  const std::string out = dir.path() + "/out";
  auto expect_error = [&](std::vector<std::string> more, const std::string& message) {
    std::vector<std::string> args = {"run", "--target", "cpu", "--ops", "^aten::sin$", "--out", out, "--no-progress"};
    if (std::find(more.begin(), more.end(), "--spec") == more.end()) {
      more.insert(more.end(), {"--spec", source_path("opspec.yaml")});
    }
    args.insert(args.end(), more.begin(), more.end());
    auto r = run_mps_audit(args);
    EXPECT_EQ(r.exit_code, 2) << message;
    EXPECT_EQ(r.err, "error: " + message + "\n");
    EXPECT_FALSE(path_exists(out)) << message;
  };
  expect_error({"--shard", "0/3"}, "--shard 0/3: K must be between 1 and N, and N at least 1");
  expect_error({"--shard", "4/3"}, "--shard 4/3: K must be between 1 and N, and N at least 1");
  expect_error({"--shard", "x"}, "--shard 'x' is not K/N (the K-th of N slices of the plan, e.g. 2/3)");
  expect_error({"--jobs", "0"}, "--jobs 0: expected 1 or more");
  expect_error({"-j", "-3"}, "--jobs -3: expected 1 or more");
  for (const char* t : {"0", "nan", "-1"}) {
    expect_error({"--timeout", t}, std::string("--timeout ") + t +
                                       ": expected a positive number of seconds (for no practical limit, give a "
                                       "large one such as 86400)");
  }
  const std::string empty = dir.write("empty.yaml", "# nothing yet\n\n");
  for (const std::string& spec : {std::string("/dev/null"), empty}) {
    expect_error({"--spec", spec}, spec +
                                       ": the spec is empty; for one without entries (every operator gets "
                                       "synthesized inputs in the default dtypes) write 'version: 1'");
  }
  // A journal that is not one.
  make_directories(out);
  const std::string junk = dir.write("out/journal.jsonl", "{\"op\": \"aten::sin\"}\n");
  auto r = run_mps_audit({"run", "--target", "cpu", "--spec", source_path("opspec.yaml"), "--ops", "^aten::sin$",
                          "--out", out, "--no-progress", "--resume"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + junk +
                       ":1:1: not the journal of a run of this mps-audit (its first line does not identify the run's "
                       "plan)\n");
  EXPECT_FALSE(path_exists(out + "/results.json"));
  EXPECT_EQ(slurp(junk), "{\"op\": \"aten::sin\"}\n");

  // --resume where nothing was recorded is not an error: it starts the run (a CI retry may always pass it).
  const std::string fresh = dir.path() + "/fresh";
  r = run_mps_audit({"run", "--target", "cpu", "--spec", source_path("opspec.yaml"), "--ops", "^aten::sin$", "--dtypes",
                     "float32", "--out", fresh, "--no-progress", "--resume"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--resume: nothing recorded in " + fresh + " yet: a new run"), std::string::npos) << r.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(fresh + "/results.json"))["run"]["finished"], 1);
}

// The recorded samples replayed are part of a run's identity: a run resumed with other recordings (or none) is
// refused, and results.json says which were replayed.
TEST(CliResume, OtherRecordedSamplesAreAnotherRun) {
  TempDir dir;
  const std::string out = dir.path() + "/out";
  const std::vector<std::string> args = {"run",   "--target",     "cpu",      "--spec",  source_path("opspec.yaml"),
                                         "--ops", "^aten::sin$",  "--dtypes", "float32", "--out",
                                         out,     "--no-progress"};
  auto r = run_mps_audit(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto samples = nlohmann::json::parse(slurp(out + "/results.json"))["environment"]["samples"];
  std::vector<std::string> none = args;
  none.insert(none.end(), {"--resume", "--samples", "none"});
  r = run_mps_audit(none);
  if (samples["path"].get<std::string>().empty()) {
    EXPECT_EQ(r.exit_code, 0) << "no recordings shipped for this libtorch: none is the default";
  } else {
    EXPECT_GT(samples["calls"].get<int>(), 0);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("another recorded samples (their content)"), std::string::npos) << r.err;
  }
  std::vector<std::string> missing = args;
  missing.insert(missing.end(), {"--samples", dir.path() + "/missing.pt"});
  r = run_mps_audit(missing);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + dir.path() + "/missing.pt: --samples: no such file\n");
}

}  // namespace
}  // namespace mps_audit
