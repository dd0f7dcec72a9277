// The lines a run and its workers exchange, the word they share, and a lost probe's record: see worker_protocol.h.
//
// Note [Worker protocol]
// The parent starts N workers (`mps-audit __worker --parent PID`), each with a pipe on its standard input and one
// on its standard output, and hands out probes: it writes "<i>\t<op>\t<dtype>\n" (i: the probe's index in the plan)
// to a worker's input, an overload's probes at a time and the next overload ahead (Note [Probes sent ahead]); a line
// that ends in "\t+" may join the turn of the line before it (Note [Probes in one turn] in probe/probe_op.cc). The
// worker runs them in the order they came, and answers each in that order. It writes on its output
//   env <json>            once, after it set up its target, its spec and recordings (RunEnvironment fields it
//                         knows); only then does it get work
//   result <i> <json>     after the probe (a ProbeResult)
//   again <i>             instead of a result, for a probe of a turn after which the device was unusable: the probe
//                         runs again, alone (Note [Turns that fail])
//   retire                before the results of a probe or turn that left the device unusable (see Note [Unusable
//                         device]): the worker exits after them, and others take the rest of its work
//   finish                before a result, when the worker caught a fault in the probe (Note [Caught faults]): it
//                         gets the rest of that operator and then no more work: its input is closed, and it exits
// Each reply is a type of its own (EnvReply, ResultReply, AgainReply, RetireReply, FinishReply in worker_protocol.h),
// written by encode() and read by parse_reply(), here only. The index of "result" and "again" names the probe for
// whoever reads the stream; the parent does not need it, since a worker answers its probes in the order they came. A
// line that parse_reply() cannot read is a MalformedReply that says why: a "result" is then its probe's record, an
// error; an "env" stops the run; anything else the parent ignores.
// Work is handed out by operator name: a worker gets every overload and dtype of one operator before the next (its
// caches stay warm: kernels compiled at first use, synthesis that worked), and idle workers take the next operator
// (the slowest first, as the last run in the output folder measured them, else the largest: Note [Slowest operators
// first] in probe/probe_costs.cc), so a slow operator holds up one worker only.
// A worker that dies while probe i is out gets i recorded as a crash; one whose probe outlives --timeout is killed,
// and i is recorded as a timeout. Either way the rest of its operator goes to other workers (Note [Probes that end
// their worker]), and a new worker starts (Note [Spare workers]). When that happens before the worker marked i as on
// the target, it was the CPU reference that crashed or hung: i is a skip (no reference), not the target's fault; in
// a turn's wait, or after a caught fault, i has no record and runs again (lost_probe_record(), the one rule for a
// crash and a timeout alike). The mark is a word of memory the parent shares with the worker (descriptor 4,
// `--state 4`, a file mapped by both): the worker stores the probe and its stage there (stage_word(): as it begins a
// probe, after each CPU reference, before the run on the target; in a turn also while it waits for the turn's
// outputs), and the parent reads it only when the worker died or timed out, or to see a turn go on
// (Note [Turns that fail]), so that telling them apart costs neither a system call nor a wake-up per sample.
// The timer of a probe starts when the worker begins it: when it is sent to an idle worker, or when the result of
// the probe before it arrives.
//
// Lifetime. A worker reads its work on the thread that runs its probes (no hand-over from another thread per probe),
// and exits when its standard input closes: the parent closes it when nothing is left to hand out, and on SIGINT or
// SIGTERM (then it also kills the worker). Whatever a worker is busy with, it exits as soon as its lifeline closes:
// descriptor 3 (`--lifeline 3`) is the read end of a pipe whose write end only the parent holds and never writes,
// and a thread of the worker's own waits on it; when the parent dies, however it dies, the kernel closes it. On
// Linux the worker also asks for SIGKILL when its parent dies (PR_SET_PDEATHSIG; the parent spawns from its main
// thread, the one whose exit triggers it), and checks getppid() against --parent after asking, in case the parent died
// before. The parent's ends of the pipes are close-on-exec, so no worker holds another's input open. Workers run in
// their own process groups: a Ctrl-C at the terminal reaches the parent only, which then stops them itself. Every
// worker is reaped.
//
// Workers load libtorch with PYTORCH_ENABLE_MPS_FALLBACK set as --fallback says, because MPS reads it once, when it
// loads; see also Note [Worker environment].
#include "run/worker_protocol.h"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <vector>

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "common/text.h"

namespace mps_audit {

int64_t stage_word(long probe, ProbeStage stage) {
  return 3 * static_cast<int64_t>(probe) + static_cast<int64_t>(stage);
}
StageMark read_mark(int64_t word) {
  if (word < 0) return {};
  return {static_cast<long>(word / 3), static_cast<ProbeStage>(word % 3)};
}

std::atomic<int64_t>* map_shared_word(int fd) {
  static_assert(std::atomic<int64_t>::is_always_lock_free, "a word shared between processes must be lock-free");
  void* p = ::mmap(nullptr, sizeof(int64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<std::atomic<int64_t>*>(p);
}

std::optional<WorkLine> parse_work_line(const std::string& line) {
  const std::vector<std::string> fields = split_list(line, '\t');
  if (fields.size() < 3) return std::nullopt;
  return WorkLine{std::atol(fields[0].c_str()), fields[1], fields[2], fields.size() > 3 && fields[3] == "+"};
}

std::string work_line(size_t index, const std::string& op, const std::string& dtype, bool joins) {
  return fmt::format("{}\t{}\t{}{}\n", index, op, dtype, joins ? "\t+" : "");
}

std::string encode(const EnvReply& reply) {
  return "env " + to_json(reply.env).dump() + "\n";
}
std::string encode(const ResultReply& reply) {
  return fmt::format("result {} {}\n", reply.index, to_json(reply.result).dump());
}
std::string encode(const AgainReply& reply) {
  return fmt::format("again {}\n", reply.index);
}
std::string encode(const RetireReply&) {
  return "retire\n";
}
std::string encode(const FinishReply&) {
  return "finish\n";
}

namespace {

// A probe's index: the whole of `text`, decimal digits.
std::optional<long> parse_index(const std::string& text) {
  long index = -1;
  const char* end = text.data() + text.size();
  const auto [at, ec] = std::from_chars(text.data(), end, index);
  if (text.empty() || ec != std::errc() || at != end || index < 0) return std::nullopt;
  return index;
}

using Meant = MalformedReply::Meant;

MalformedReply malformed(Meant meant, const std::string& why) {
  const char* what = meant == Meant::kEnv ? "environment" : meant == Meant::kResult ? "result" : "'again'";
  return {meant, fmt::format("unreadable {} from the worker: {}", what, why)};
}

Reply parse_result(const std::string& rest) {
  const size_t space = rest.find(' ');
  const std::string number = rest.substr(0, space);
  const std::optional<long> index = parse_index(number);
  if (!index) return malformed(Meant::kResult, fmt::format("no probe index in '{}'", number));
  if (space == std::string::npos) return malformed(Meant::kResult, fmt::format("nothing after probe index {}", *index));
  try {
    return ResultReply{*index, probe_result_from_json(nlohmann::json::parse(rest.substr(space + 1)))};
  } catch (const std::exception& e) {
    return malformed(Meant::kResult, e.what());
  }
}

}  // namespace

Reply parse_reply(const std::string& line) {
  const size_t space = line.find(' ');
  const std::string kind = line.substr(0, space);
  const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
  if (kind == "result") return parse_result(rest);
  if (kind == "env") {
    try {
      return EnvReply{run_environment_from_json(nlohmann::json::parse(rest))};
    } catch (const std::exception& e) {
      return malformed(Meant::kEnv, e.what());
    }
  }
  if (kind == "again") {
    if (const std::optional<long> index = parse_index(rest)) return AgainReply{*index};
    return malformed(Meant::kAgain, fmt::format("no probe index in '{}'", rest));
  }
  if (line == "retire") return RetireReply{};
  if (line == "finish") return FinishReply{};
  return MalformedReply{Meant::kUnknown, fmt::format("unknown reply from the worker: '{}'", line)};
}

std::optional<ProbeResult> lost_probe_record(const ProbeLoss& loss, ProbeStage stage, bool finishing) {
  if (finishing || stage == ProbeStage::kTurn) return std::nullopt;
  const bool on_target = stage == ProbeStage::kTarget;
  ProbeResult r;
  if (loss.timed_out) {
    r.verdict = on_target ? Verdict::kTimeout : Verdict::kSkip;
    r.message = on_target ? fmt::format("no result after {:g} s; the worker was killed", loss.timeout_s)
                          : fmt::format("no reference: the CPU run did not finish in {:g} s", loss.timeout_s);
    r.seconds = loss.timeout_s;
    return r;
  }
  const ChildEnd& end = loss.end;
  const std::string how = end.signal ? fmt::format("died of signal {} ({})", end.signal, strsignal(end.signal))
                                     : fmt::format("exited with status {}", end.exit_code);
  r.verdict = on_target ? Verdict::kCrash : Verdict::kSkip;
  r.message = on_target ? "the worker " + how : "no reference: the CPU run killed the worker (it " + how + ")";
  return r;
}

}  // namespace mps_audit
