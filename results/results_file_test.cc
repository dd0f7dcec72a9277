// Tests of reading results.json: round trips, old schemas, and one diagnostic for each kind of bad file.
#include "results/results_file.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/diagnostics.h"

namespace mps_audit {
namespace {

Results sample() {
  Results r;
  r.environment.target = "mps-emu";
  r.environment.emulator = "emulated MPS (PyTorch 1.13.1 registry, macOS 14 rules)";
  r.run = {3, 1, "SIGTERM", "2/3"};
  ProbeResult p;
  p.op = "aten::sin";
  p.dtype = "float16";
  p.verdict = Verdict::kMismatch;
  p.max_abs_error = 0.5;
  p.mismatches = 2;
  p.fallback_ops = {"aten::sin.out"};
  r.records.push_back(p);
  return r;
}

TEST(ResultsFile, RoundTrips) {
  Results a = sample();
  a.environment.samples = "data/pytorch-1.13.1/samples.pt";
  a.environment.samples_hash = "fnv1a64:0123456789abcdef";
  a.environment.samples_calls = 7600;
  a.environment.samples_dropped = 3;
  const Results b = parse_results(render_results_json(a), "x.json");
  EXPECT_EQ(b.environment.samples, a.environment.samples);
  EXPECT_EQ(b.environment.samples_hash, a.environment.samples_hash);
  EXPECT_EQ(b.environment.samples_calls, 7600u);
  EXPECT_EQ(b.environment.samples_dropped, 3u);
  EXPECT_EQ(render_results_json(b), render_results_json(a));
  EXPECT_EQ(b.run.shard, "2/3");
  EXPECT_EQ(b.run.interrupted, "SIGTERM");
  EXPECT_FALSE(b.run.complete());
  EXPECT_EQ(b.run.not_run(), 2u);
  EXPECT_EQ(b.records.at(0).fallback_ops, std::vector<std::string>{"aten::sin.out"});
}

// What the samples were like, the samples set aside and the known bugs a record met come back as they were written.
TEST(ResultsFile, TraitsSampleNotesAndKnownBugsRoundTrip) {
  Results a = sample();
  ProbeResult& p = a.records.at(0);
  p.traits.max_rank = 5;
  p.traits.max_numel = 70000;
  p.traits.storage_offset = true;
  p.traits.kwargs = {"dtype"};
  p.sample_notes = {"sample 3: unsupported: a complex64 operand"};
  p.known_bugs.push_back({"pytorch-154881", "crash", "rank_ge:5", "a rank-5 argument", "2.7.0", "unknown",
                          "https://github.com/pytorch/pytorch/issues/154881", "cumsum on 5-D"});
  p.known_bugs.back().maybe = true;
  p.known_bugs.back().fix_candidate = "https://github.com/pytorch/pytorch/pull/154900";
  const Results b = parse_results(render_results_json(a), "x.json");
  const ProbeResult& q = b.records.at(0);
  EXPECT_TRUE(q.traits == p.traits);
  EXPECT_FALSE(q.traits.non_contiguous);
  EXPECT_EQ(q.sample_notes, p.sample_notes);
  ASSERT_EQ(q.known_bugs.size(), 1u);
  EXPECT_EQ(q.known_bugs[0].met_by, "a rank-5 argument");
  EXPECT_EQ(q.known_bugs[0].source, "https://github.com/pytorch/pytorch/issues/154881");
  EXPECT_TRUE(q.known_bugs[0].maybe);
  EXPECT_EQ(q.known_bugs[0].fix_candidate, "https://github.com/pytorch/pytorch/pull/154900");
  EXPECT_EQ(render_results_json(b), render_results_json(a));
  // A record without any of them writes none of them.
  EXPECT_EQ(render_results_json(sample()).find("traits"), std::string::npos);
}

// A known bug's fix in every report's words: the release, or not known, with a pull request that says it fixes the
// thread where its merge does not show.
TEST(ResultsFile, AFixProposedButNotSeenMergedIsSaidSo) {
  KnownBugNote b;
  b.fixed_in = "2.5.0";
  EXPECT_EQ(fixed_words(b), "fixed in 2.5.0");
  b.fixed_in = "unknown";
  EXPECT_EQ(fixed_words(b), "not known fixed");
  b.fix_candidate = "https://github.com/pytorch/pytorch/pull/125318";
  EXPECT_EQ(fixed_words(b),
            "not known fixed (a fix proposed, its merge unseen: "
            "https://github.com/pytorch/pytorch/pull/125318)");
  EXPECT_EQ(fixed_words(b.fixed_in, b.fix_candidate, "2.11.0"),
            "not known fixed as of 2.11.0 (a fix proposed, its merge unseen: "
            "https://github.com/pytorch/pytorch/pull/125318)");
  EXPECT_EQ(fixed_words("unknown", "", "2.11.0"), "not known fixed as of 2.11.0");
  b.id = "pytorch-96614";
  b.kind = "wrong_result";
  b.when = "any";
  EXPECT_EQ(known_bug_brief(b, b.id),
            "pytorch-96614 (wrong results for every input; not known fixed (a fix proposed, "
            "its merge unseen: https://github.com/pytorch/pytorch/pull/125318))");
}

// Two samples' traits together: the larger of each number, any of each flag, the keywords of both once, sorted.
TEST(ResultsFile, TraitsOfSamplesMerge) {
  SampleTraits a, b;
  a.max_rank = 2;
  a.max_size = 100;
  a.kwargs = {"dtype"};
  b.max_rank = 5;
  b.non_contiguous = true;
  b.kwargs = {"dim", "dtype"};
  a.merge(b);
  EXPECT_EQ(a.max_rank, 5);
  EXPECT_EQ(a.max_size, 100);
  EXPECT_TRUE(a.non_contiguous);
  EXPECT_EQ(a.kwargs, (std::vector<std::string>{"dim", "dtype"}));
}

// The records are written on threads of their own and put into the rest of the document: the text must be the
// document written at once, byte for byte, for no records, one, and enough for several threads, with messages that
// hold what JSON escapes (line breaks, quotes, control characters) and what it does not (UTF-8, brackets).
TEST(ResultsFile, RecordsWrittenSideBySideAreTheDocumentWrittenAtOnce) {
  for (size_t n : {0, 1, 2, 4999, 20011}) {
    Results a = sample();
    a.records.clear();
    for (size_t i = 0; i < n; ++i) {
      ProbeResult p;
      p.op = i % 2 ? "aten::add.Tensor" : "aten::_foreach_mul_.List";
      p.dtype = i % 3 ? "float32" : "complex64";
      p.verdict = i % 5 ? Verdict::kPass : Verdict::kMismatch;
      p.message = i % 7 ? "" : "line one\nline \"two\"\t\x01 — [µ] {}";
      p.warnings = i % 11 ? std::vector<std::string>{} : std::vector<std::string>{"w1\n", "w2"};
      p.fallback_ops = i % 13 ? std::vector<std::string>{} : std::vector<std::string>{"aten::sin.out"};
      p.seconds = i % 17 ? 0.25 * static_cast<double>(i) : std::nan("");
      p.max_abs_error = p.verdict == Verdict::kMismatch ? 1e-3 : 0;
      a.records.push_back(p);
    }
    a.run = {n, n, "", ""};
    const std::string text = render_results_json(a);
    const std::string whole = results_document(a).dump(1) + "\n";
    const auto diff = std::mismatch(text.begin(), text.end(), whole.begin(), whole.end());
    EXPECT_TRUE(text == whole) << n << " records: they differ from byte " << (diff.first - text.begin()) << ": '"
                               << text.substr(diff.first - text.begin(), 40) << "' against '"
                               << whole.substr(diff.second - whole.begin(), 40) << "'";
    EXPECT_EQ(parse_results(text, "x.json").records.size(), n);
  }
}

TEST(ResultsFile, SchemaOneIsReadAsACompleteRun) {
  const Results r = parse_results(
      R"({"schema_version": 1, "environment": {"target": "cpu"}, "summary": {},
          "results": [{"op": "aten::sin", "dtype": "float32", "verdict": "pass"}]})",
      "old.json");
  EXPECT_TRUE(r.run.complete());
  EXPECT_EQ(r.run.planned, 1u);
  EXPECT_EQ(r.records.at(0).verdict, Verdict::kPass);
}

void expect_bad(const std::string& text, const std::string& where, const std::string& message) {
  try {
    parse_results(text, "r.json");
    FAIL() << "no error for " << text;
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().to_string(), where);
    EXPECT_NE(e.message().find(message), std::string::npos) << e.message();
  }
}

TEST(ResultsFile, BadFilesGiveOneDiagnostic) {
  expect_bad("{\n  \"results\": [1,\n", "r.json:3:1", "not JSON");
  expect_bad(R"({"ops": []})", "r.json", "not a results.json");
  expect_bad(R"({"schema_version": 9, "environment": {}, "results": []})", "r.json", "written by a newer mps-audit");
  expect_bad(R"({"schema_version": 2, "environment": {}, "results": [{"op": "aten::sin", "dtype": "float32",
              "verdict": "fine"}]})",
             "r.json", "unknown verdict 'fine'");
  expect_bad(R"({"schema_version": 2, "environment": {}, "results": [{"dtype": "float32"}]})", "r.json",
             "not a results.json");
}

}  // namespace
}  // namespace mps_audit
