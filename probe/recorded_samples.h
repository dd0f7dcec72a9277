// Inputs recorded from PyTorch's own OpInfo sample inputs (tools/record_samples.py), replayed as samples: each
// recorded ATen call becomes arguments in the linked libtorch's schema order. See docs/inputs.md.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/core/ivalue.h>
#include <c10/core/ScalarType.h>

namespace mps_audit {

struct RecordedSample {
  std::string name;               // "recorded:0", or "recorded:0:from-float32" when reused from another dtype
  std::vector<c10::IValue> args;  // in the linked libtorch's schema order, on the CPU, the caller's own copies
};

struct RecordingsSummary {
  std::string path;                       // the file read; empty: none
  std::string hash;                       // of its content, "fnv1a64:..."
  size_t calls = 0;                       // in the file
  size_t kept = 0;                        // that fit the linked libtorch
  std::map<std::string, size_t> dropped;  // by reason: calls that did not
};

class Recordings {
 public:
  // Reads a file written by tools/record_samples.py (torch.save, read with torch::jit::pickle_load). Calls to an
  // operator this libtorch lacks, or whose arguments do not fit its schema, are dropped and counted, never an
  // error; an unreadable file or one of another format is (UserError).
  static Recordings load(const std::string& path);
  // Up to `max` samples for one operator ("aten::add.Tensor") in one dtype ("float32"): its own recordings, else
  // another dtype's with the tensors of that dtype converted (OpInfo's sample functions give the same shapes for
  // every dtype).
  std::vector<RecordedSample> samples(const std::string& op, const std::string& dtype, size_t max = 3) const;
  const RecordingsSummary& summary() const { return summary_; }

 private:
  RecordingsSummary summary_;
  // op -> dtype label -> calls, each its arguments in schema order
  std::unordered_map<std::string, std::map<std::string, std::vector<std::vector<c10::IValue>>>> calls_;
  std::unordered_map<std::string, std::vector<size_t>> dtype_args_;  // op -> positions of its ScalarType arguments
};

// The linked libtorch's shipped recordings: data/pytorch-<version>/samples.pt under $MPS_AUDIT_DATA_DIR, else
// the source tree's data/, in the release folder emu::find_release_dir picks (the exact release, else one of the
// same minor release); empty when there are none.
std::string default_recordings_path();

// Which recordings this process replays: "" (the default: the linked release's), "none", or a file. The choice made
// already keeps what it loaded (a worker forked from the run has the run's).
void set_recordings_choice(const std::string& choice);
// The recordings chosen, loaded on first use after each choice; null when there are none. The pointer stays valid
// until the next set_recordings_choice().
const Recordings* process_recordings();

}  // namespace mps_audit
