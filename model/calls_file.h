// A program's recorded ATen calls (`mps-audit record`, python/mps_audit_record.py), as `model --calls` reports them:
// what each distinct call was, how often and where the program made it. Its arguments are read by the prober's
// Recordings (probe/recorded_samples.h), which replays them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "probe/recorded_samples.h"  // kCallsFormat

namespace mps_audit {

struct RecordedCall {
  size_t index = 0;                     // position in the file: the prober's sample "call:<index>"
  std::string op;                       // "aten::cumsum": what is replayed (Note [The recording device's own choices])
  std::string recorded_as;              // the recording's own operator, where that is another; else empty
  std::string dtype;                    // the dtype it is probed in: its first tensor's
  int64_t count = 0;                    // identical calls the program made
  double seconds = 0;                   // their time on the recording's device
  int64_t in_bytes = 0, out_bytes = 0;  // of one call's tensor arguments and results
  std::map<std::string, int64_t> phases;  // forward, loss, backward, optimizer -> calls
  // "train.py:42" -> phase -> calls made there (a line such as loss.backward() makes its calls in the backward phase)
  std::map<std::string, std::map<std::string, int64_t>> sites;
  // A test suite's recording (python/mps_audit.py, `pytest --mps-audit`): the tests that made it, "test_x.py::test_y"
  // -> the test's phase (setup, call, teardown) -> site -> calls. Empty for a program's recording.
  std::map<std::string, std::map<std::string, std::map<std::string, int64_t>>> tests;
  int64_t calls_at(const std::string& site) const;
};

struct CallsFile {
  std::string path;
  std::string torch;                           // the version that recorded it
  std::vector<std::string> program;            // "python3 train.py --epochs 1"
  bool complete = true;                        // false: the program failed under the recorder
  std::string error;                           // why it did
  double seconds = 0;                          // the program's time under the recorder
  int64_t total = 0;                           // ATen calls seen, kept or not
  std::map<std::string, int64_t> dropped;      // "aten::op: reason" -> calls that could not be kept
  std::map<std::string, std::string> sources;  // "train.py:42" -> that line of the program
  std::vector<RecordedCall> calls;

  // Throws UserError naming the file when it is unreadable or not a calls file, and when a call names an operator
  // the linked libtorch does not have (a recording of another release: replay it with that release's libtorch).
  static CallsFile load(const std::string& path);
};

}  // namespace mps_audit
