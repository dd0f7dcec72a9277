// Tests of what a run and its workers say to each other (run/worker_protocol.h): each reply written and read back,
// replies that cannot be read, and the record of a probe whose worker was lost.
#include "run/worker_protocol.h"

#include <csignal>
#include <cstring>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

namespace mps_audit {
namespace {

// The line of `text` (one reply, with its newline) read back.
Reply read_back(const std::string& text) {
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "one line: " << text;
  return parse_reply(text.substr(0, text.size() - 1));
}

ProbeResult some_result() {
  ProbeResult r;
  r.op = "aten::add.Tensor";
  r.dtype = "float16";
  r.verdict = Verdict::kMismatch;
  r.message = "values differ\nat [0, 1]";
  r.sample = "sample 2";
  r.samples = 3;
  r.max_abs_error = 0.25;
  r.mismatches = 4;
  r.first_mismatch = "[0, 1]";
  r.seconds = 0.125;
  r.warnings = {"a warning"};
  return r;
}

TEST(WorkerProtocol, EnvRoundTrips) {
  EnvReply sent;
  sent.env.target = "mps-emu";
  sent.env.device = "mps:0 (emulated MPS)";
  sent.env.torch_version = "2.11.0";
  sent.env.emulator = "emulated MPS";
  sent.env.samples_calls = 12;
  const std::string text = encode(sent);
  EXPECT_EQ(text.rfind("env {", 0), 0u) << text;
  const Reply got = read_back(text);
  ASSERT_TRUE(std::holds_alternative<EnvReply>(got)) << text;
  EXPECT_EQ(to_json(std::get<EnvReply>(got).env), to_json(sent.env));
}

TEST(WorkerProtocol, ResultRoundTrips) {
  const ResultReply sent{1234, some_result()};
  const std::string text = encode(sent);
  EXPECT_EQ(text.rfind("result 1234 {", 0), 0u) << text;
  const Reply got = read_back(text);
  ASSERT_TRUE(std::holds_alternative<ResultReply>(got)) << text;
  EXPECT_EQ(std::get<ResultReply>(got).index, 1234);
  EXPECT_EQ(to_json(std::get<ResultReply>(got).result), to_json(sent.result));
}

TEST(WorkerProtocol, AgainRetireAndFinishRoundTrip) {
  EXPECT_EQ(encode(AgainReply{7}), "again 7\n");
  EXPECT_EQ(encode(RetireReply{}), "retire\n");
  EXPECT_EQ(encode(FinishReply{}), "finish\n");
  const Reply again = read_back(encode(AgainReply{7}));
  ASSERT_TRUE(std::holds_alternative<AgainReply>(again));
  EXPECT_EQ(std::get<AgainReply>(again).index, 7);
  EXPECT_TRUE(std::holds_alternative<RetireReply>(read_back(encode(RetireReply{}))));
  EXPECT_TRUE(std::holds_alternative<FinishReply>(read_back(encode(FinishReply{}))));
}

// The reply a line cannot be read as: what it meant, and why (the whole message).
MalformedReply malformed(const std::string& line) {
  const Reply got = parse_reply(line);
  EXPECT_TRUE(std::holds_alternative<MalformedReply>(got)) << line;
  return std::holds_alternative<MalformedReply>(got) ? std::get<MalformedReply>(got) : MalformedReply{};
}

TEST(WorkerProtocol, TruncatedReplies) {
  const std::string whole = encode(ResultReply{5, some_result()});
  const MalformedReply cut = malformed(whole.substr(0, whole.size() / 2));
  EXPECT_EQ(cut.meant, MalformedReply::Meant::kResult);
  EXPECT_EQ(cut.error.rfind("unreadable result from the worker: [json.exception.parse_error", 0), 0u) << cut.error;

  const MalformedReply no_record = malformed("result 5");
  EXPECT_EQ(no_record.meant, MalformedReply::Meant::kResult);
  EXPECT_EQ(no_record.error, "unreadable result from the worker: nothing after probe index 5");

  const MalformedReply no_index = malformed("result");
  EXPECT_EQ(no_index.meant, MalformedReply::Meant::kResult);
  EXPECT_EQ(no_index.error, "unreadable result from the worker: no probe index in ''");

  const MalformedReply env = malformed("env");
  EXPECT_EQ(env.meant, MalformedReply::Meant::kEnv);
  EXPECT_EQ(env.error.rfind("unreadable environment from the worker: ", 0), 0u) << env.error;

  EXPECT_EQ(malformed("again").meant, MalformedReply::Meant::kAgain);
  EXPECT_EQ(malformed("").meant, MalformedReply::Meant::kUnknown);
}

TEST(WorkerProtocol, UnknownKinds) {
  for (const std::string line : {"hello", "retire now", "finish 3", "Result 1 {}", "warning: something"}) {
    const MalformedReply bad = malformed(line);
    EXPECT_EQ(bad.meant, MalformedReply::Meant::kUnknown) << line;
    EXPECT_EQ(bad.error, "unknown reply from the worker: '" + line + "'");
  }
}

TEST(WorkerProtocol, BadNumbers) {
  const std::string record = to_json(some_result()).dump();
  for (const std::string index : {"x", "-1", "1x", "1.5", "99999999999999999999999"}) {
    const MalformedReply result = malformed("result " + index + " " + record);
    EXPECT_EQ(result.meant, MalformedReply::Meant::kResult) << index;
    EXPECT_EQ(result.error, "unreadable result from the worker: no probe index in '" + index + "'");
    const MalformedReply again = malformed("again " + index);
    EXPECT_EQ(again.meant, MalformedReply::Meant::kAgain) << index;
    EXPECT_EQ(again.error, "unreadable 'again' from the worker: no probe index in '" + index + "'");
  }
}

TEST(WorkerProtocol, BadJson) {
  const MalformedReply result = malformed("result 3 {\"verdict\": ");
  EXPECT_EQ(result.meant, MalformedReply::Meant::kResult);
  EXPECT_EQ(result.error.rfind("unreadable result from the worker: [json.exception.parse_error", 0), 0u)
      << result.error;
  // JSON, but no record: a verdict the results file does not know.
  const MalformedReply verdict = malformed(R"(result 3 {"op": "aten::add", "verdict": "splendid"})");
  EXPECT_EQ(verdict.meant, MalformedReply::Meant::kResult);
  EXPECT_EQ(verdict.error.rfind("unreadable result from the worker: ", 0), 0u) << verdict.error;
  const MalformedReply env = malformed("env [1, 2");
  EXPECT_EQ(env.meant, MalformedReply::Meant::kEnv);
  EXPECT_EQ(env.error.rfind("unreadable environment from the worker: [json.exception.parse_error", 0), 0u) << env.error;
}

// The wait status of a process that exited with `code`, or was killed by `signal`.
ChildEnd exited(int code) {
  return ChildEnd::from_wait_status(W_EXITCODE(code, 0));
}
ChildEnd killed_by(int signal) {
  return ChildEnd::from_wait_status(W_EXITCODE(0, signal));
}

TEST(LostProbe, CrashInTheReferenceIsNoReference) {
  const std::optional<ProbeResult> r =
      lost_probe_record(ProbeLoss::ended(killed_by(SIGSEGV)), ProbeStage::kReference, /*finishing=*/false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->verdict, Verdict::kSkip);
  EXPECT_EQ(r->message, fmt::format("no reference: the CPU run killed the worker (it died of signal {} ({}))", SIGSEGV,
                                    strsignal(SIGSEGV)));
  EXPECT_EQ(skip_reason(*r), "cpu_crash");
  const std::optional<ProbeResult> exit =
      lost_probe_record(ProbeLoss::ended(exited(3)), ProbeStage::kReference, /*finishing=*/false);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->message, "no reference: the CPU run killed the worker (it exited with status 3)");
}

TEST(LostProbe, CrashOnTheTargetIsACrash) {
  const std::optional<ProbeResult> r =
      lost_probe_record(ProbeLoss::ended(killed_by(SIGABRT)), ProbeStage::kTarget, /*finishing=*/false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->verdict, Verdict::kCrash);
  EXPECT_EQ(r->message, fmt::format("the worker died of signal {} ({})", SIGABRT, strsignal(SIGABRT)));
  EXPECT_EQ(r->seconds, 0);
  const std::optional<ProbeResult> exit =
      lost_probe_record(ProbeLoss::ended(exited(1)), ProbeStage::kTarget, /*finishing=*/false);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->verdict, Verdict::kCrash);
  EXPECT_EQ(exit->message, "the worker exited with status 1");
}

TEST(LostProbe, HangInTheReferenceIsNoReference) {
  const std::optional<ProbeResult> r =
      lost_probe_record(ProbeLoss::timeout(2.5), ProbeStage::kReference, /*finishing=*/false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->verdict, Verdict::kSkip);
  EXPECT_EQ(r->message, "no reference: the CPU run did not finish in 2.5 s");
  EXPECT_EQ(r->seconds, 2.5);
  EXPECT_EQ(skip_reason(*r), "cpu_crash");
}

TEST(LostProbe, HangOnTheTargetIsATimeout) {
  const std::optional<ProbeResult> r = lost_probe_record(ProbeLoss::timeout(60), ProbeStage::kTarget, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->verdict, Verdict::kTimeout);
  EXPECT_EQ(r->message, "no result after 60 s; the worker was killed");
  EXPECT_EQ(r->seconds, 60);
}

// Note [Turns that fail]: lost while the turn's outputs come back, the probe names no culprit and runs again.
TEST(LostProbe, LostInATurnRunsAgain) {
  EXPECT_FALSE(lost_probe_record(ProbeLoss::ended(killed_by(SIGSEGV)), ProbeStage::kTurn, false));
  EXPECT_FALSE(lost_probe_record(ProbeLoss::timeout(60), ProbeStage::kTurn, false));
}

// Note [Probes after a caught fault]: a worker that caught a fault may be in an unknown state; its probe runs again.
TEST(LostProbe, LostAfterACaughtFaultRunsAgain) {
  for (const ProbeStage stage : {ProbeStage::kReference, ProbeStage::kTarget, ProbeStage::kTurn}) {
    EXPECT_FALSE(lost_probe_record(ProbeLoss::ended(killed_by(SIGSEGV)), stage, /*finishing=*/true));
    EXPECT_FALSE(lost_probe_record(ProbeLoss::timeout(60), stage, /*finishing=*/true));
  }
}

}  // namespace
}  // namespace mps_audit
