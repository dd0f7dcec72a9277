// Starts a Python program under the recorder: see record.h.
#include "commands/record.h"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "common/data_home.h"
#include "common/diagnostics.h"
#include "common/flags.h"
#include "common/paths.h"

extern char** environ;

namespace mps_audit {

constexpr const char* kRecorder = "python/mps_audit_record.py";

std::vector<std::string> recorder_command(const RecordOptions& o, const std::string& recorder) {
  if (o.command.empty()) {
    throw UserError("record: no program to run (mps-audit record -o calls.pt -- python3 train.py ARGS...)");
  }
  const std::string interpreter = folder_name(o.command[0]);
  if (interpreter.rfind("python", 0) != 0) {
    throw UserError(
        fmt::format("record runs a Python program, given as its interpreter first (mps-audit record -o "
                    "calls.pt -- python3 train.py); '{}' is not a Python interpreter",
                    o.command[0]));
  }
  std::vector<std::string> argv = {o.command[0]};
  size_t i = 1;
  // The interpreter's own options (-u, -O, -W arg, -X arg) stay the interpreter's; -m and -c name the program.
  for (; i < o.command.size() && o.command[i].size() > 1 && o.command[i][0] == '-' && o.command[i] != "-m" &&
         o.command[i] != "-c";
       ++i) {
    argv.push_back(o.command[i]);
    if ((o.command[i] == "-W" || o.command[i] == "-X") && i + 1 < o.command.size()) argv.push_back(o.command[++i]);
  }
  if (i == o.command.size()) throw UserError("record: no script, -m MODULE or -c CODE after the interpreter");
  argv.insert(argv.end(), {recorder, "-o", o.out, "--max-numel", std::to_string(o.max_numel)});
  if ((o.command[i] == "-m" || o.command[i] == "-c") && i + 1 < o.command.size()) {
    argv.insert(argv.end(), {o.command[i], o.command[i + 1]});
    i += 2;
  }
  argv.push_back("--");
  argv.insert(argv.end(), o.command.begin() + static_cast<std::ptrdiff_t>(i), o.command.end());
  return argv;
}

int run_record(const RecordOptions& o, std::ostream& out, std::ostream& err) {
  const std::string recorder = home_file(kRecorder, "reinstall mps-audit");
  if (o.module_path) {
    out << parent_path(recorder) << "\n";
    return kExitOk;
  }
  if (o.out.empty()) throw UserError("record: -o FILE is required (the calls file to write)");
  check_at_least("--max-numel", o.max_numel, 0);
  const std::vector<std::string> argv = recorder_command(o, recorder);
  // The native recorder is looked for beside this binary first (a build folder; python/mps_audit_record.py).
  if (const std::string self = executable_path(); !self.empty()) setenv("MPS_AUDIT_BINARY", self.c_str(), 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The program gets the terminal's interrupt (and saves what it recorded); this process waits for it.
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGQUIT);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], nullptr, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  int status = 0;
  if (spawned == 0) {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  if (spawned != 0) throw UserError(fmt::format("record: cannot run {}: {}", argv[0], std::strerror(spawned)));
  if (WIFSIGNALED(status)) {
    err << fmt::format("{} was killed by signal {}; the calls it made were not saved\n", argv[0], WTERMSIG(status));
    return 128 + WTERMSIG(status);
  }
  return WEXITSTATUS(status);
}

}  // namespace mps_audit
