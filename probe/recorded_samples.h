// Inputs recorded from PyTorch's own OpInfo sample inputs (tools/record_samples.py), or from a user's program
// (python/mps_audit_record.py, `mps-audit record`), replayed as samples: each recorded ATen call becomes arguments in
// the linked libtorch's schema order. See docs/inputs.md and docs/model.md.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/core/ivalue.h>
#include <c10/core/ScalarType.h>

namespace mps_audit {

// The format of a program's calls file (`mps-audit record`, python/mps_audit_record.py).
inline constexpr const char* kCallsFormat = "mps-audit-calls/1";

struct RecordedSample {
  // "recorded:0", or "recorded:0:from-float32" when reused from another dtype; from a program's calls file, "call:17"
  // (the call's position in the file)
  std::string name;
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
  // Reads a file written by tools/record_samples.py (format mps-audit-samples/1) or by `mps-audit record`
  // (mps-audit-calls/1): torch.save, read with torch::jit::pickle_load. Calls to an operator this libtorch lacks, or
  // whose arguments do not fit its schema, are dropped and counted, never an error; an unreadable file or one of
  // another format is (UserError). A tensor a calls file describes instead of keeping (above the recorder's size
  // cap: shape, strides, dtype, value range) is made when a sample is: uniform in its recorded range, so that index
  // and class arguments stay in bounds.
  static Recordings load(const std::string& path);
  // Up to `max` samples for one operator ("aten::add.Tensor") in one dtype ("float32"): its own recordings, else
  // another dtype's with the tensors of that dtype converted (OpInfo's sample functions give the same shapes for
  // every dtype). `max` 0: samples_per_probe().
  std::vector<RecordedSample> samples(const std::string& op, const std::string& dtype, size_t max = 0) const;
  // How many recordings a probe replays: three of OpInfo's samples; every distinct call of a program, up to 64 (each
  // is the program's own, and the worst decides the op x dtype).
  size_t samples_per_probe() const { return program_ ? 64 : 3; }
  // A program's calls (`mps-audit record`), not OpInfo's samples.
  bool program() const { return program_; }
  const RecordingsSummary& summary() const { return summary_; }

  // A tensor a calls file describes rather than keeps, standing in as a meta tensor until a sample is made.
  struct Described {
    const c10::TensorImpl* stand_in = nullptr;
    double low = 0, high = 0;
  };

 private:
  struct Call {
    std::vector<c10::IValue> args;     // in schema order
    size_t index = 0;                  // the call's position in the file
    std::vector<Described> described;  // its tensors that are made when a sample is
  };
  RecordingsSummary summary_;
  bool program_ = false;
  // op -> dtype label -> calls
  std::unordered_map<std::string, std::map<std::string, std::vector<Call>>> calls_;
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
