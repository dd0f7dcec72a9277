// journal.jsonl: a run's plan identity, environment and records, written as they arrive and read back by --resume.
// See Note [Journal] in run/journal.cc.
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/results_file.h"
#include "run/plan.h"

namespace mps_audit {

// What a run's journal records as its plan's identity: the first line of journal.jsonl. Two runs with equal
// identities make the same plan, so a journal's records can complete the run that `--resume` asks for.
nlohmann::json plan_identity_line(const nlohmann::json& identity);

// The first difference between a journal's identity and this run's, as "what (there, now)"; empty when equal.
std::string identity_difference(const nlohmann::json& recorded, const nlohmann::json& now);

// journal.jsonl, read back: its identity, the last environment a worker reported, and its records. A last line that
// is cut short (the run was killed while writing it) is left out, and `valid_bytes` says where the complete lines
// end. Throws UserError naming the file and line for anything else that is not a journal line.
struct Journal {
  nlohmann::json identity;
  std::optional<RunEnvironment> environment;
  std::vector<ProbeResult> records;
  size_t valid_bytes = 0;
  bool torn = false;  // the last line was cut short
};
Journal parse_journal(const std::string& text, const std::string& path);

// Appends whole lines, each with one write(), so that a kill leaves at most the last line cut short.
class JournalWriter {
 public:
  // `append`: keep the first `keep_bytes` of the file (its complete lines) and write after them.
  JournalWriter(const std::string& path, bool append, size_t keep_bytes);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;
  void line(const nlohmann::json& j);

 private:
  std::string path_;
  int fd_ = -1;
};

// A run's records so far, journalled as they arrive: those a resumed journal holds, those of the probes the plan
// records without running, and each worker's as it comes (add()).
struct RunJournal {
  // By plan index, null until its record comes: a run holds only the records it has (28,000 default ones cost the
  // run a page fault each few).
  std::vector<std::unique_ptr<ProbeResult>> results;
  std::vector<bool> done;  // by plan index
  size_t finished = 0;
  bool resuming = false;
  bool torn = false;                          // the resumed journal's last line was cut short
  std::optional<RunEnvironment> environment;  // the resumed journal's
  std::unique_ptr<JournalWriter> writer;
  bool environment_written = false;

  // Journals a record of probe `i`, which has none yet.
  void add(size_t i, ProbeResult r);
  // Journals the run's environment, once.
  void add_environment(const RunEnvironment& env);
};

// Opens out_dir's journal.jsonl: with --resume, continues the run it records (UserError when its plan was another
// one), else starts it with the plan's identity. Then journals the records of the planned probes not run (those the
// linked libtorch cannot show, and the caller's), saying how many the linked libtorch left out.
RunJournal open_journal(const RunRequest& request, const RunPlan& plan, std::ostream& err);

}  // namespace mps_audit
