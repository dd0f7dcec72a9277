// What a run and its workers say to each other: the work lines the run writes, the replies a worker writes back (a
// type each, written and read only here), the word of memory it shares with each worker, the descriptors a worker
// gets them on, and the record of a probe whose worker was lost. See Note [Worker protocol] in run/worker_protocol.cc.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "probe/probe_op.h"  // ProbeStage
#include "results/result.h"
#include "results/results_file.h"  // RunEnvironment
#include "run/child_process.h"

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

// A worker's replies, one line each (Note [Worker protocol]). encode() gives the line, with its newline.
struct EnvReply {  // "env <json>": set up, ready for work
  RunEnvironment env;
};
struct ResultReply {  // "result <i> <json>": probe i's record
  long index = -1;
  ProbeResult result;
};
struct AgainReply {  // "again <i>": probe i runs again, alone (Note [Turns that fail] in run/pool.cc)
  long index = -1;
};
struct RetireReply {};  // "retire": the device is unusable; the worker exits after the results that follow
struct FinishReply {};  // "finish": it caught a fault; the rest of its operator, then no more work
std::string encode(const EnvReply& reply);
std::string encode(const ResultReply& reply);
std::string encode(const AgainReply& reply);
std::string encode(const RetireReply& reply);
std::string encode(const FinishReply& reply);

// A line that is no reply: an unknown kind, or a known one that cannot be read. `meant`: the kind it names, if known;
// `error`: why it cannot be read, a whole message ("unreadable result from the worker: ...").
struct MalformedReply {
  enum class Meant { kUnknown, kEnv, kResult, kAgain };
  Meant meant = Meant::kUnknown;
  std::string error;
};
using Reply = std::variant<EnvReply, ResultReply, AgainReply, RetireReply, FinishReply, MalformedReply>;
// The reply on `line`, without its newline; never throws.
Reply parse_reply(const std::string& line);

// How a worker lost the probe it was in: it ended (how, as run/child_process.h says), or it outlived the time limit
// and was killed.
struct ProbeLoss {
  bool timed_out = false;
  ChildEnd end;          // it ended: how
  double timeout_s = 0;  // it timed out: the limit
  static ProbeLoss ended(const ChildEnd& end) { return {false, end, 0}; }
  static ProbeLoss timeout(double seconds) { return {true, {}, seconds}; }
};
// The record of the probe a worker lost in `stage` (the stage it marked last), or none when the probe runs again
// instead: the worker was `finishing` (Note [Probes after a caught fault] in run/pool.cc), or waited for its turn's
// outputs (Note [Turns that fail]). On the target it is a crash or a timeout; in the CPU reference a skip: no
// reference (Note [Worker protocol]).
std::optional<ProbeResult> lost_probe_record(const ProbeLoss& loss, ProbeStage stage, bool finishing);

}  // namespace mps_audit
