// The journal of a run: see journal.h.
//
// Note [Journal]
// journal.jsonl: the first line is the plan's identity, {"journal": 1, "plan": {...}} (plan_identity() in
// run/plan.cc: spec path and content hash, the recorded samples' hash, target, emulated release and macOS, dtypes, ops
// filter, fallback mode, the expectations' mode and hash, libtorch, shard, a hash of the plan itself and its size);
// then {"environment": {...}} once workers reported it (the probes' device, emulator and libtorch, and the host block,
// which a worker describes: see Note [Forked workers]), and one ProbeResult per line as results arrive, each line
// written with one write() and flushed. `run --resume` reads it back: a run whose identity differs is refused, the
// records fill their places in the plan (so reports list them in plan order whatever order they arrived in), a last
// line cut short is dropped (and cut from the file), and only the probes without a record run. The folder is locked
// (flock on .mps-audit.lock, close-on-exec) for the whole run, so two runs never write one journal.
#include "run/journal.h"

#include <cerrno>
#include <cstring>
#include <map>

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "common/diagnostics.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "common/torch_compat.h"

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

void RunJournal::add(size_t i, ProbeResult r) {
  writer->line(to_json(r));
  MPS_AUDIT_ASSERT(!done[i], "a second record of one probe");
  results[i] = std::make_unique<ProbeResult>(std::move(r));
  done[i] = true;
  ++finished;
}

void RunJournal::add_environment(const RunEnvironment& env) {
  if (environment_written) return;
  writer->line({{"environment", to_json(env)}});
  environment_written = true;
}

namespace {

// The records a resumed journal holds, in their plan places.
void take_records(RunJournal& journal, Journal& recorded, const RunPlan& plan, const std::string& path) {
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (size_t i = 0; i < plan.probes.size(); ++i) index[{plan.probes[i].op, plan.probes[i].dtype}] = i;
  for (auto& r : recorded.records) {
    const auto it = index.find({r.op, r.dtype});
    if (it == index.end()) {
      throw UserError(
          fmt::format("--resume: the journal has a record of {} {}, which is not in this run's plan", r.op, r.dtype),
          {path});
    }
    if (!journal.done[it->second]) ++journal.finished;
    journal.done[it->second] = true;
    journal.results[it->second] = std::make_unique<ProbeResult>(std::move(r));
  }
}

}  // namespace

RunJournal open_journal(const RunRequest& request, const RunPlan& plan, std::ostream& err) {
  const std::string path = join_path(request.out_dir, "journal.jsonl");
  RunJournal journal;
  journal.results.resize(plan.probes.size());
  journal.done.assign(plan.probes.size(), false);
  Journal recorded;
  if (request.resume && path_exists(path)) {
    recorded = parse_journal(read_file(path), path);
    journal.resuming = !recorded.identity.is_null();
  }
  if (journal.resuming) {
    const std::string difference = identity_difference(recorded.identity, plan.identity);
    if (!difference.empty()) {
      throw UserError(fmt::format("--resume: this folder's run was made with another {}; start it anew without "
                                  "--resume, or in another --out",
                                  difference),
                      {path});
    }
    take_records(journal, recorded, plan, path);
    journal.torn = recorded.torn;
    journal.environment = recorded.environment;
  }
  journal.writer = std::make_unique<JournalWriter>(path, journal.resuming, recorded.valid_bytes);
  if (!journal.resuming) journal.writer->line(plan_identity_line(plan.identity));
  size_t left_out = 0;
  for (size_t i = 0; i < plan.probes.size(); ++i) {
    const auto it = plan.not_probed.find(plan.probes[i].op);
    if (journal.done[i] || it == plan.not_probed.end()) continue;
    journal.add(i, not_probed_record(plan.probes[i], it->second, plan.statuses));
    if (skip_reason(*journal.results[i]) == "linked_libtorch") ++left_out;
  }
  if (left_out) {
    err << fmt::format(
        "{} op x dtype pairs not probed: the linked libtorch {} cannot show what PyTorch {} does "
        "there (skip reason linked_libtorch)\n",
        left_out, compat::kTorchVersion, plan.release_version);
  }
  return journal;
}

}  // namespace mps_audit
