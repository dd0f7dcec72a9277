// The result model of a run: its environment, how complete it is, and one record per op x dtype. results.json is
// its one serialisation (contract in docs/running.md); every report is rendered from it, so `mps-audit render`
// can redo any report from a results.json alone.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/result.h"

namespace mps_audit {

// The schema results.json is written in, and the oldest one still read. Version 1 had no "run" block: such a file
// is read as a complete run. Version 3 gave condition samples outcomes of their own (a record's "conditions"): in
// version 2 they were among the samples whose worst decided the verdict.
inline constexpr int kResultsSchemaVersion = 3;
inline constexpr int kOldestResultsSchemaVersion = 1;

// A --target value that works on this machine; for mps-emu, the releases it can emulate.
struct AvailableTarget {
  std::string name;
  std::vector<std::string> releases;      // "1.13.1"
  std::vector<std::string> release_dirs;  // their folders, as --emu-release takes them
};

struct RunEnvironment {
  std::string torch_version;
  std::string target;         // "mps-emu"
  std::string requested;      // what --target said ("auto")
  std::string device;         // "mps:0 (emulated MPS (PyTorch 2.11.0 registry, macOS 14 rules))"
  std::string os;             // "Linux 6.1.0"
  std::string fallback_mode;  // "on" / "off" (PYTORCH_ENABLE_MPS_FALLBACK)
  std::string emulator;       // the emulator's label, empty on a real device
  std::string spec;           // path of the op spec
  std::string spec_hash;      // of its content ("fnv1a64:..."); empty in files written before it was recorded
  // The recorded samples replayed (probe/recorded_samples.h): the file, its content hash, the calls kept and
  // dropped (they did not fit the linked libtorch). Empty and 0 without recordings, and in older files.
  std::string samples;
  std::string samples_hash;
  size_t samples_calls = 0, samples_dropped = 0;
  // The host, as `mps-audit env` shows it (describe_host() in targets/host.h). Files written before these
  // existed read as all false and empty.
  bool mps_built = false;      // the linked libtorch has the real MPS backend
  bool mps_available = false;  // and an MPS device is usable now
  std::string macos;           // "14.5"; empty off macOS
  std::string chip;            // the Mac's chip as macOS names it ("Apple M3 Max"); empty off macOS
  std::string mps_why_not;     // why MPS is not available, empty when it is
  bool cuda_built = false, cuda_available = false;
  std::vector<std::string> cuda_devices;         // "NVIDIA H100 80GB HBM3"
  std::optional<std::string> fallback_variable;  // PYTORCH_ENABLE_MPS_FALLBACK as this process saw it; none: unset
  std::vector<AvailableTarget> targets;
  // PyTorch's own MPS expectations the run applied (Note [Expected verdicts] in emu/expected_verdicts.cc): their
  // file, whose lists they are, how they were applied (predict, check) and for which macOS. Empty when none were.
  std::string expectations, expectations_release, expectations_mode, expectations_macos;
  // The Mac the evidence was judged for ("macOS 15.0, any chip"; Note [The emulated Mac] in emu/emulated_mac.cc) and
  // the ledger of known MPS bugs it applied (Note [Known bugs] in emu/known_bugs.cc); empty when none.
  std::string expectations_mac, known_bugs;
};

// What a value of PYTORCH_ENABLE_MPS_FALLBACK makes MPS do, as MPSFallback.mm reads it (once, when it loads).
std::string fallback_variable_meaning(const std::optional<std::string>& value);

// How much of the planned work the records cover. A run that was interrupted is written all the same, marked
// incomplete, with what finished.
struct RunProgress {
  size_t planned = 0;       // op x dtype probes in the plan (of this shard, for a shard)
  size_t finished = 0;      // probes with a record
  std::string interrupted;  // why the run stopped early ("SIGINT"), empty when it ran to the end
  std::string shard;        // "2/3" for a shard of a run, empty for a whole run
  bool complete() const { return interrupted.empty() && finished == planned; }
  size_t not_run() const { return planned > finished ? planned - finished : 0; }
};

// For MPS runs, which shipped release first had a native MPS kernel of each operator probed (emu/timeline.h).
struct ReleaseTimeline {
  std::vector<std::string> releases;                // the shipped releases it looked at, oldest first
  std::map<std::string, std::string> native_since;  // op -> release; absent: none of them
};

struct Results {
  int schema_version = kResultsSchemaVersion;
  RunEnvironment environment;
  RunProgress run;
  std::vector<ProbeResult> records;
  ReleaseTimeline timeline;  // empty for runs on other targets, and in older files
};

nlohmann::json to_json(const ExpectationNote& e);
nlohmann::json to_json(const SampleTraits& t);
SampleTraits sample_traits_from_json(const nlohmann::json& j);
nlohmann::json to_json(const KnownBugNote& b);
KnownBugNote known_bug_note_from_json(const nlohmann::json& j);
nlohmann::json to_json(const ConditionOutcome& c);
ConditionOutcome condition_outcome_from_json(const nlohmann::json& j);
nlohmann::json to_json(const ProbeResult& r);
ProbeResult probe_result_from_json(const nlohmann::json& j);
nlohmann::json to_json(const RunEnvironment& env);
RunEnvironment run_environment_from_json(const nlohmann::json& j);

// results.json as one JSON value; its "results" empty without `with_records`.
nlohmann::json results_document(const Results& results, bool with_records = true);
// results.json's text: results_document(results).dump(1) and a line break, written side by side (Note [Records
// rendered side by side] in results/results_file.cc).
std::string render_results_json(const Results& results);
// Reads a results.json; throws UserError naming the file (and line:col of a syntax error) when it is missing, not
// JSON, not a results file, or of a schema version this build does not read.
Results load_results(const std::string& path);
Results parse_results(const std::string& text, const std::string& path);

// "mps-emu — emulated MPS (PyTorch 1.13.1 registry, macOS 14 rules)" or "cuda (cuda:0)": where a run ran, as every
// report names it.
std::string where_it_ran(const RunEnvironment& env);

}  // namespace mps_audit
