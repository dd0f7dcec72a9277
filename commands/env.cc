// `mps-audit env`: see env.h.
//
// Note [The pytest plugin and the Python on PATH]
// `pytest --mps-audit` runs in the Python that runs a project's tests, not in this binary, so `env` asks the
// `python3` on PATH what it would find: whether it imports the plugin module (mps_audit, from PYTHONPATH or its
// site-packages), whether its pytest loads it by itself (a `pytest11` entry point: the install's
// share/mps-audit/python holds one for PYTHONPATH to reach), and whether it has pytest and torch at all. The question
// is asked with `importlib.util.find_spec` and the package metadata, without importing torch, so it takes a fraction
// of a second; a Python that cannot answer is said to be unusable.
#include "commands/env.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/data_home.h"
#include "common/diagnostics.h"
#include "common/flags.h"
#include "common/paths.h"
#include "results/results_file.h"
#include "targets/host.h"

extern char** environ;

namespace mps_audit {
namespace {

constexpr const char* kPluginCheck = R"(import importlib.util, json, os, sys
def version(name):
    try:
        import importlib.metadata as m
        return m.version(name)
    except Exception:
        return "yes" if importlib.util.find_spec(name) else None
spec = importlib.util.find_spec("mps_audit")
entry = False
try:
    import importlib.metadata as m
    eps = m.entry_points()
    eps = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
    entry = any(e.name == "mps_audit" for e in eps)
except Exception:
    pass
print(json.dumps({"executable": sys.executable, "version": sys.version.split()[0],
                  "plugin": os.path.realpath(spec.origin) if spec and spec.origin else None,
                  "entry_point": entry, "pytest": version("pytest"), "torch": version("torch")}))
)";

// What `python3 -c kPluginCheck` prints, or null when there is no python3 on PATH or it fails.
nlohmann::json ask_python() {
  int out[2];
  if (::pipe(out) != 0) return nullptr;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<char*> argv = {const_cast<char*>("python3"), const_cast<char*>("-c"), const_cast<char*>(kPluginCheck),
                             nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "python3", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; spawned == 0 && ((n = ::read(out[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR));) {
    if (n > 0) text.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  if (spawned == 0) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (spawned != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return nullptr;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json();
}

// Note [The pytest plugin and the Python on PATH]: the module shipped with this binary, and what python3 makes of it.
nlohmann::json pytest_plugin() {
  nlohmann::json j = {{"module", nullptr}, {"python", ask_python()}};
  try {
    j["module"] = home_file("python/mps_audit.py", "reinstall mps-audit");
  } catch (const UserError&) {
  }
  return j;
}

std::string real_path(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  const std::string out = resolved ? resolved : path;
  std::free(resolved);
  return out;
}

std::string pytest_plugin_text(const nlohmann::json& j) {
  if (j["module"].is_null()) return "pytest plugin: not installed beside this binary (reinstall mps-audit)\n";
  const std::string module = j["module"], folder = parent_path(module);
  std::string s = fmt::format("pytest plugin: {} (pytest -p mps_audit --mps-audit)\n", module);
  const nlohmann::json& py = j["python"];
  if (py.is_null()) return s + "  python3 on PATH: none that runs (the plugin runs in the Python of the tests)\n";
  const auto have = [&](const char* name) {
    return py[name].is_string() ? fmt::format("{} {}", name, py[name].get<std::string>()) : fmt::format("no {}", name);
  };
  s += fmt::format("  python3 on PATH: {} {}, {}, {}: ", py.value("executable", "?"), py.value("version", "?"),
                   have("pytest"), have("torch"));
  const std::string found = py["plugin"].is_string() ? py["plugin"].get<std::string>() : "";
  if (!py["pytest"].is_string()) {
    s += "install pytest (Debian: python3-pytest) to run the plugin\n";
  } else if (found.empty()) {
    s += fmt::format("does not find the plugin: PYTHONPATH={} pytest -p mps_audit --mps-audit\n", folder);
  } else if (parent_path(found) != real_path(folder)) {
    s += fmt::format("finds another copy of the plugin, {}\n", found);
  } else {
    s += py.value("entry_point", false) ? "finds the plugin, and pytest loads it by itself (its entry point)\n"
                                        : "finds the plugin (pytest -p mps_audit)\n";
  }
  if (!py["torch"].is_string()) s += "  without torch in that Python the plugin records nothing (it says so)\n";
  return s;
}

}  // namespace

int run_env(const EnvOptions& options, std::ostream& out) {
  check_choice("--format", options.format, {"text", "json"});
  RunEnvironment env;
  describe_host(env);
  const nlohmann::json plugin = pytest_plugin();
  if (options.format == "json") {
    // The run's own fields mean nothing here: only the host's.
    nlohmann::json j = to_json(env);
    for (const char* key : {"target", "requested_target", "device", "fallback_mode", "emulated", "emulator", "spec"}) {
      j.erase(key);
    }
    j["pytest_plugin"] = plugin;
    out << j.dump(1) << "\n";
  } else {
    out << render_environment_text(env) << pytest_plugin_text(plugin);
  }
  return kExitOk;
}

}  // namespace mps_audit
