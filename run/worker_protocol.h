// What a run and its workers say to each other: the work lines the run writes, the word of memory it shares with
// each worker, and the descriptors a worker gets them on. See Note [Worker protocol] in run/worker_protocol.cc.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "probe/probe_op.h"  // ProbeStage

namespace mps_audit {

inline constexpr int kLifelineFd = 3;  // the worker's end of its lifeline (Note [Worker protocol])
inline constexpr int kStateFd = 4;     // the worker's shared word: where it is (Note [Worker protocol])

// The shared word: 3 * i + the stage of probe i that the worker is in (ProbeStage); -1 before its first probe.
int64_t stage_word(long probe, ProbeStage stage);
struct StageMark {
  long probe = -1;
  ProbeStage stage = ProbeStage::kReference;
};
StageMark read_mark(int64_t word);

// The 64-bit word at the start of the file `fd`, mapped shared; null when it cannot be.
std::atomic<int64_t>* map_shared_word(int fd);

// A line of a worker's work.
struct WorkLine {
  long index = -1;
  std::string op, dtype;
  bool joins = false;  // it may join the turn of the line before it
};
std::optional<WorkLine> parse_work_line(const std::string& line);
// "<i>\t<op>\t<dtype>[\t+]\n"
std::string work_line(size_t index, const std::string& op, const std::string& dtype, bool joins);

}  // namespace mps_audit
