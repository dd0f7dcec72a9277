// The journal of a run: see journal.h.
//
// Note [Journal]
// journal.jsonl: the first line is the plan's identity, {"journal": 1, "plan": {...}} (spec path and content hash,
// target, emulated release and macOS rules, dtypes, ops filter, fallback mode, libtorch, shard, and a hash of the
// plan itself); then {"environment": {...}} once workers reported it (the probes' device, emulator and libtorch, and
// the host block, which a worker describes: see Note [Forked workers]), and one ProbeResult per line as results
// arrive, each line written with one write() and flushed. `run --resume` reads it back: a run whose identity differs
// is refused, the records fill their places in the plan (so reports list them in plan order whatever order they
// arrived in), a last line cut short is dropped (and cut from the file), and only the probes without a record run.
// The folder is locked (flock on .mps-audit.lock, close-on-exec) for the whole run, so two runs never write one
// journal.
#include "run/journal.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "common/diagnostics.h"

namespace mps_audit {
namespace {

constexpr int kJournalVersion = 1;

}  // namespace

JournalWriter::JournalWriter(const std::string& path, bool append, size_t keep_bytes) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? 0 : O_TRUNC), 0644);
  if (fd_ < 0) throw UserError(fmt::format("cannot write the journal: {}", std::strerror(errno)), {path});
  if (append && ::ftruncate(fd_, static_cast<off_t>(keep_bytes)) != 0) {
    throw UserError(fmt::format("cannot cut the journal's torn last line: {}", std::strerror(errno)), {path});
  }
  ::lseek(fd_, 0, SEEK_END);
}

JournalWriter::~JournalWriter() {
  ::close(fd_);
}

void JournalWriter::line(const nlohmann::json& j) {
  const std::string text = j.dump() + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw UserError(fmt::format("cannot write the journal: {}", std::strerror(errno)), {path_});
    done += static_cast<size_t>(n);
  }
}

std::string identity_difference(const nlohmann::json& recorded, const nlohmann::json& now) {
  // The spec's path may differ (another working folder); its content may not.
  static const std::vector<std::pair<const char*, const char*>> fields = {
      {"target", "target"},
      {"emu_release", "emulated release"},
      {"macos", "macOS (of the device, or of the emulated rules)"},
      {"spec_hash", "spec (its content)"},
      {"samples_hash", "recorded samples (their content)"},
      {"dtypes", "dtypes"},
      {"ops", "--ops filter"},
      {"fallback", "fallback mode"},
      {"torch", "libtorch"},
      {"shard", "shard"},
      {"plan_hash", "plan (the operators this libtorch and registry give)"},
  };
  auto show = [](const nlohmann::json& j) {
    if (j.is_string()) return j.get<std::string>().empty() ? std::string("none") : j.get<std::string>();
    if (j.is_array()) {
      std::vector<std::string> words;
      for (const auto& w : j) words.push_back(w.is_string() ? w.get<std::string>() : w.dump());
      return fmt::format("{}", fmt::join(words, ","));
    }
    return j.dump();
  };
  for (const auto& [key, what] : fields) {
    const nlohmann::json a = recorded.value(key, nlohmann::json()), b = now.value(key, nlohmann::json());
    if (a == b) continue;
    if (std::string(key) == "spec_hash") {
      return fmt::format("{} ({} there, {} now)", what, recorded.value("spec", "?"), now.value("spec", "?"));
    }
    return fmt::format("{} ({} there, {} now)", what, show(a), show(b));
  }
  return "";
}

nlohmann::json plan_identity_line(const nlohmann::json& identity) {
  return {{"journal", kJournalVersion}, {"plan", identity}};
}

Journal parse_journal(const std::string& text, const std::string& path) {
  Journal journal;
  size_t pos = 0;
  int line_number = 0;
  while (pos < text.size()) {
    ++line_number;
    const size_t nl = text.find('\n', pos);
    const bool last = nl == std::string::npos || text.find_first_not_of(" \t\r\n", nl + 1) == std::string::npos;
    const std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      // A kill while writing leaves the last line without its newline: that probe simply runs again.
      if (last) {
        journal.torn = true;
        break;
      }
      throw UserError("not a journal line (not JSON)", {path, line_number, 1});
    }
    if (nl == std::string::npos) {  // complete JSON, but its newline never made it: rewrite it
      journal.torn = true;
      break;
    }
    if (line_number == 1) {
      if (!j.is_object() || j.value("journal", 0) != kJournalVersion || !j.contains("plan") || !j["plan"].is_object()) {
        throw UserError("not the journal of a run of this mps-audit (its first line does not identify the run's plan)",
                        {path, 1, 1});
      }
      journal.identity = j["plan"];
    } else if (j.is_object() && j.contains("environment")) {
      journal.environment = run_environment_from_json(j["environment"]);
    } else {
      try {
        journal.records.push_back(probe_result_from_json(j));
      } catch (const std::exception& e) {
        throw UserError(fmt::format("not a journal line: {}", e.what()), {path, line_number, 1});
      }
    }
    pos = nl + 1;
    journal.valid_bytes = pos;
  }
  return journal;
}

}  // namespace mps_audit
