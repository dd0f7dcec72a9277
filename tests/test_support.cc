// Test helpers: spawning the binary with posix_spawn and reading its output from temporary files.
#include "test_support.h"

#include "common/diagnostics.h"
#include "common/paths.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace mps_audit::testing {

std::string source_path(const std::string& relative) {
  return std::string(MPS_AUDIT_SOURCE_DIR) + "/" + relative;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = source_path("tests/data/golden/" + name);
  if (std::getenv("MPS_AUDIT_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  EXPECT_EQ(actual, slurp(path)) << "differs from " << path;
}

std::vector<std::string> emulated_run_args(const std::string& out, const std::vector<std::string>& more) {
  std::vector<std::string> args = {"run",
                                   "--target",
                                   "mps-emu",
                                   "--emu-release",
                                   source_path("data/pytorch-1.13.1"),
                                   "--spec",
                                   source_path("opspec.yaml"),
                                   "--out",
                                   out,
                                   "--no-progress"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

CommandResult run_mps_audit(const std::vector<std::string>& args, const std::vector<std::string>& extra_env) {
  TempDir dir;
  const std::string out_path = dir.path() + "/out", err_path = dir.path() + "/err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> words = {MPS_AUDIT_BINARY};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  std::vector<std::string> env_strings = extra_env;
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);  // earlier entries win in getenv
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + words[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  return result;
}

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/mps-audit-test.XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  // See Note [No std::filesystem].
  nftw(
      path_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 16,
      FTW_DEPTH | FTW_PHYS);
}

std::string TempDir::write(const std::string& name, const std::string& content) const {
  const std::string path = path_ + "/" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

void expect_diagnostic(const BadInput& c, const std::string& file,
                       const std::function<void(const std::string& text)>& parse) {
  try {
    parse(c.text);
    ADD_FAILURE() << c.name << ": expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().file, file) << c.name;
    EXPECT_EQ(e.where().line, c.line) << c.name << ": " << e.message();
    EXPECT_EQ(e.where().column, c.column) << c.name << ": " << e.message();
    EXPECT_NE(e.message().find(c.message), std::string::npos) << c.name << ": " << e.message();
  }
}

std::string bad_input_name(const ::testing::TestParamInfo<BadInput>& info) {
  return info.param.name;
}

std::string release_with_expectations(const TempDir& dir, const std::string& rows) {
  const std::string release = dir.path() + "/pytorch-1.13.1";
  make_directories(release);
  for (const char* file : {"native_functions.yaml", "mps_extra_registrations.tsv"}) {
    dir.write(std::string("pytorch-1.13.1/") + file, slurp(source_path(std::string("data/pytorch-1.13.1/") + file)));
  }
  dir.write("pytorch-1.13.1/mps_expectations.tsv",
            "# mps-audit-expectations/1\n# release: 1.13.1\n"
            "# operator\tdtypes\tkind\tscope\tmacos\tlist\topinfo\tmapping\tsource\treason\n" +
                rows);
  return release;
}

const char* binary_path() {
  return MPS_AUDIT_BINARY;
}

std::vector<std::string> source_tree_releases() {
  std::vector<std::array<int, 3>> versions;
  for (const auto& name : list_directory(source_path("data"))) {
    std::array<int, 3> v{};
    if (std::sscanf(name.c_str(), "pytorch-%d.%d.%d", &v[0], &v[1], &v[2]) == 3) versions.push_back(v);
  }
  std::sort(versions.begin(), versions.end());
  std::vector<std::string> out;
  for (const auto& v : versions)
    out.push_back(std::to_string(v[0]) + "." + std::to_string(v[1]) + "." + std::to_string(v[2]));
  return out;
}

}  // namespace mps_audit::testing
