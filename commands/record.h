// `mps-audit record -o calls.pt -- python3 train.py ARGS...`: runs a Python program unchanged under the recorder
// (python/mps_audit_record.py), which writes every ATen call it makes to a calls file for `model --calls`.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace mps_audit {

struct RecordOptions {
  std::string out;                   // the calls file to write
  int64_t max_numel = 4096;          // bigger tensors are kept as shape, dtype, strides and value range
  std::vector<std::string> command;  // the interpreter, its options, then a script (or -m MODULE, -c CODE) and args
  bool module_path = false;          // print the folder holding the recorder module and stop
};

// The recorder's command line for `command`: the interpreter and its own options, the recorder script with -o and
// --max-numel, then the program. Throws UserError when `command` does not start with a Python interpreter.
std::vector<std::string> recorder_command(const RecordOptions& options, const std::string& recorder);

// Runs the program under the recorder; returns its exit status (128 + the signal when one ended it), or exit 2 with
// one line when the interpreter cannot be started or the recorder is not installed.
int run_record(const RecordOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mps_audit
