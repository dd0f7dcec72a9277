// Tests of reading recorded samples, dropping the calls that do not fit the linked libtorch, and replaying them.
#include "probe/recorded_samples.h"

#include <cstdio>

#include <ATen/core/Tensor.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/ones.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "common/diagnostics.h"
#include "probe/probe_op.h"
#include "test_support.h"

namespace mps_audit {
namespace {

using testing::TempDir;

c10::IValue call(const std::string& op, const std::string& dtype,
                 const std::vector<std::pair<std::string, c10::IValue>>& args) {
  c10::impl::GenericDict a(c10::StringType::get(), c10::AnyType::get());
  for (const auto& [k, v] : args) a.insert(k, v);
  c10::impl::GenericDict c(c10::StringType::get(), c10::AnyType::get());
  c.insert("op", op);
  c.insert("dtype", dtype);
  c.insert("source", std::string("test"));
  c.insert("args", a);
  return c;
}

c10::IValue tag(const std::string& key, const std::string& value) {
  c10::impl::GenericDict d(c10::StringType::get(), c10::AnyType::get());
  d.insert(key, value);
  return d;
}

// A file as tools/record_samples.py writes it, written with the C++ counterpart of torch.save.
// `format`: a program's calls file (kCallsFormat) holds its calls in the same form.
std::string write_recording(const TempDir& dir, const std::vector<c10::IValue>& calls,
                            const std::string& format = "mps-audit-samples/1") {
  c10::impl::GenericList list(c10::AnyType::get());
  for (const auto& c : calls) list.push_back(c);
  c10::impl::GenericDict root(c10::StringType::get(), c10::AnyType::get());
  root.insert("format", format);
  root.insert("torch", std::string("test"));
  root.insert("calls", list);
  const std::vector<char> bytes = torch::jit::pickle_save(root);
  return dir.write("samples.pt", std::string(bytes.begin(), bytes.end()));
}

std::vector<c10::IValue> test_calls() {
  const at::Tensor x = at::arange(6, at::kFloat).reshape({2, 3}), y = at::ones({2, 3});
  return {
      call("aten::add.Tensor", "float32", {{"self", x}, {"other", y}, {"alpha", int64_t{2}}}),
      call("aten::sum", "float32", {{"self", x}, {"dtype", tag("dtype", "float32")}}),
      call("aten::no_such_operator", "float32", {{"self", x}}),
      call("aten::mul.Tensor", "float32", {{"self", x}, {"other", y}, {"bogus", int64_t{1}}}),
      call("aten::mul.Tensor", "float32", {{"self", x}}),
      call("aten::mul.Tensor", "float32", {{"self", x}, {"other", std::string("not a tensor")}}),
  };
}

TEST(Recordings, DropsAndCountsTheCallsThatDoNotFitTheLinkedLibtorch) {
  TempDir dir;
  const Recordings r = Recordings::load(write_recording(dir, test_calls()));
  EXPECT_EQ(r.summary().calls, 6u);
  EXPECT_EQ(r.summary().kept, 2u);
  EXPECT_EQ(r.summary().dropped, (std::map<std::string, size_t>{{"argument of the wrong type", 1},
                                                                {"missing required argument", 1},
                                                                {"operator not in this libtorch", 1},
                                                                {"unknown argument name", 1}}));
  EXPECT_EQ(r.summary().hash.rfind("fnv1a64:", 0), 0u);
  EXPECT_TRUE(r.samples("aten::mul.Tensor", "float32").empty());

  // Schema order, the tagged dtype as the int a ScalarType argument is, defaults for what the call left out.
  const auto sum = r.samples("aten::sum", "float32");
  ASSERT_EQ(sum.size(), 1u);
  EXPECT_EQ(sum[0].name, "recorded:0");
  ASSERT_EQ(sum[0].args.size(), 2u);
  EXPECT_EQ(sum[0].args[1].toInt(), static_cast<int64_t>(c10::ScalarType::Float));

  // Another dtype's recording, its tensors converted; each sample its own copy.
  const auto add = r.samples("aten::add.Tensor", "int32");
  ASSERT_EQ(add.size(), 1u);
  EXPECT_EQ(add[0].name, "recorded:0:from-float32");
  EXPECT_EQ(add[0].args[0].toTensor().scalar_type(), c10::ScalarType::Int);
  EXPECT_EQ(add[0].args[2].toInt(), 2);
  const auto sum_int = r.samples("aten::sum", "int64");  // the dtype argument follows the probed dtype
  ASSERT_EQ(sum_int.size(), 1u);
  EXPECT_EQ(sum_int[0].args[1].toInt(), static_cast<int64_t>(c10::ScalarType::Long));
  add[0].args[0].toTensor().fill_(7);
  EXPECT_EQ(r.samples("aten::add.Tensor", "float32")[0].args[0].toTensor()[0][0].item<float>(), 0.0f);
}

// A tensor above the recorder's size cap, as python/mps_audit_record.py describes it.
c10::IValue described(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, const std::string& dtype,
                      double low, double high) {
  c10::impl::GenericDict d(c10::StringType::get(), c10::AnyType::get());
  d.insert("shape", c10::IValue(shape));
  d.insert("strides", c10::IValue(strides));
  d.insert("dtype", dtype);
  d.insert("low", low);
  d.insert("high", high);
  c10::impl::GenericDict t(c10::StringType::get(), c10::AnyType::get());
  t.insert("tensor", d);
  return t;
}

TEST(Recordings, AProgramsDescribedTensorIsMadeInItsRangeWithItsShapeAndStrides) {
  TempDir dir;
  const Recordings r = Recordings::load(write_recording(
      dir,
      {call("aten::index_select", "float32",
            {{"self", at::ones({6, 4})}, {"dim", int64_t{0}}, {"index", described({300}, {1}, "int64", 0, 5)}}),
       call("aten::add.Tensor", "float32",
            {{"self", described({40, 30}, {1, 40}, "float32", -2.5, 3.5)}, {"other", at::ones({40, 30})}})},
      kCallsFormat));
  EXPECT_TRUE(r.program());
  EXPECT_EQ(r.summary().kept, 2u);
  const auto index = r.samples("aten::index_select", "float32");
  ASSERT_EQ(index.size(), 1u);
  EXPECT_EQ(index[0].name, "call:0");  // named by its place in the file
  const at::Tensor i = index[0].args[2].toTensor();
  EXPECT_FALSE(i.is_meta());
  EXPECT_EQ(i.scalar_type(), c10::kLong);
  EXPECT_EQ(i.sizes(), (std::vector<int64_t>{300}));
  EXPECT_EQ(i.min().item<int64_t>(), 0);  // every index in bounds, both ends reached
  EXPECT_EQ(i.max().item<int64_t>(), 5);
  const auto add = r.samples("aten::add.Tensor", "float32");
  ASSERT_EQ(add.size(), 1u);
  EXPECT_EQ(add[0].name, "call:1");
  const at::Tensor x = add[0].args[0].toTensor();
  EXPECT_EQ(x.sizes(), (std::vector<int64_t>{40, 30}));
  EXPECT_EQ(x.strides(), (std::vector<int64_t>{1, 40}));
  EXPECT_GE(x.min().item<float>(), -2.5f);
  EXPECT_LE(x.max().item<float>(), 3.5f);
  EXPECT_GT(x.max().item<float>() - x.min().item<float>(), 5.0f);
  // The same values every time: a probe's CPU and target runs, and a rerun, see the same inputs.
  EXPECT_TRUE(r.samples("aten::add.Tensor", "float32")[0].args[0].toTensor().equal(x));
}

// OpInfo's samples give a probe three; a program's calls give it every distinct call (up to 64).
TEST(Recordings, AProbeReplaysEveryDistinctCallOfAProgram) {
  TempDir dir;
  std::vector<c10::IValue> calls;
  for (int64_t n = 1; n <= 5; ++n) calls.push_back(call("aten::sin", "float32", {{"self", at::ones({n})}}));
  EXPECT_EQ(Recordings::load(write_recording(dir, calls)).samples("aten::sin", "float32").size(), 3u);
  EXPECT_EQ(Recordings::load(write_recording(dir, calls, kCallsFormat)).samples("aten::sin", "float32").size(), 5u);
}

TEST(Recordings, AFileOfAnotherFormatIsAUserError) {
  TempDir dir;
  EXPECT_THROW(Recordings::load(dir.write("samples.pt", "not a zip")), UserError);
  const std::vector<char> bytes = torch::jit::pickle_save(c10::IValue(int64_t{3}));
  EXPECT_THROW(Recordings::load(dir.write("int.pt", std::string(bytes.begin(), bytes.end()))), UserError);
}

TEST(Recordings, ProbeOpReplaysThemBeforeSynthesis) {
  TempDir dir;
  set_recordings_choice(write_recording(dir, test_calls()));
  const Spec spec = parse_spec("ops:\n  aten::sum: {compare: values}\n", "s.yaml", {"aten::sum"});
  ProbeTarget cpu;
  cpu.name = "cpu";
  const ProbeResult own = probe_op(cpu, spec, "aten::add.Tensor", "float32");
  const ProbeResult reused = probe_op(cpu, spec, "aten::add.Tensor", "int64");
  set_recordings_choice("none");
  const ProbeResult synthesized = probe_op(cpu, spec, "aten::add.Tensor", "float32");
  set_recordings_choice("");
  EXPECT_EQ(own.verdict, Verdict::kPass) << own.message;
  EXPECT_EQ(own.sample, "recorded:0");
  // The one recording, and the five samples derived from it (Note [Condition samples] in probe/condition_samples.cc).
  EXPECT_EQ(own.samples, 6);
  EXPECT_EQ(reused.verdict, Verdict::kPass) << reused.message;
  EXPECT_EQ(reused.sample, "recorded:0:from-float32");
  EXPECT_EQ(synthesized.verdict, Verdict::kPass) << synthesized.message;
  EXPECT_EQ(synthesized.sample.rfind("recorded", 0), std::string::npos);
}

// Choosing the recordings already chosen keeps what was loaded, as a worker forked from the run does with the run's
// (Note [Forked workers] in run/worker_process.cc); another choice loads anew.
TEST(Recordings, TheChoiceMadeAlreadyKeepsWhatItLoaded) {
  TempDir dir;
  const std::string path = write_recording(dir, test_calls());
  set_recordings_choice(path);
  const Recordings* loaded = process_recordings();
  ASSERT_NE(loaded, nullptr);
  ASSERT_EQ(std::remove(path.c_str()), 0);
  set_recordings_choice(path);
  EXPECT_EQ(process_recordings(), loaded);  // not read again: the file is gone
  set_recordings_choice("none");
  EXPECT_EQ(process_recordings(), nullptr);
  set_recordings_choice(path);
  EXPECT_THROW(process_recordings(), UserError);  // read again
  set_recordings_choice("");
}

// add.out has no recordings of its own: it replays add.Tensor's, with an out tensor shaped like add's result.
TEST(Recordings, AnOutVariantReplaysItsFunctionalTwinsRecordings) {
  TempDir dir;
  set_recordings_choice(write_recording(dir, test_calls()));
  const Spec spec = parse_spec("", "s.yaml", {});
  ProbeTarget cpu;
  cpu.name = "cpu";
  const ProbeResult out = probe_op(cpu, spec, "aten::add.out", "float32");
  const ProbeResult mul_out = probe_op(cpu, spec, "aten::mul.out", "float32");  // mul.Tensor's calls were dropped
  set_recordings_choice("");
  EXPECT_EQ(out.verdict, Verdict::kPass) << out.message;
  EXPECT_EQ(out.sample, "recorded:0:twin");
  EXPECT_EQ(out.samples, 1);
  EXPECT_EQ(mul_out.verdict, Verdict::kPass) << mul_out.message;
  EXPECT_EQ(mul_out.sample.rfind("recorded", 0), std::string::npos) << mul_out.sample;
}

// Everything a record says but its seconds is the same in `a` and `b`.
void expect_same_record(const ProbeResult& a, const ProbeResult& b) {
  EXPECT_EQ(to_string(a.verdict), to_string(b.verdict));
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(a.sample, b.sample);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.warnings, b.warnings);
  EXPECT_EQ(a.fallback_ops, b.fallback_ops);
  EXPECT_EQ(a.mismatches, b.mismatches);
  EXPECT_TRUE(a.traits == b.traits) << a.op << " " << a.dtype;
  EXPECT_EQ(a.sample_notes, b.sample_notes);
}

// A probe whose samples run each stage together (every operator before any output is copied back, as on CUDA: Note
// [Samples in one round trip] in probe/sample_probe.cc) records what it records one sample after another.
TEST(Recordings, SamplesRunTogetherGiveTheRecordsOfSamplesRunOneByOne) {
  const std::string path = default_recordings_path();
  if (path.empty()) GTEST_SKIP() << "no recorded samples shipped for this libtorch";
  set_recordings_choice(path);
  const Spec spec = parse_spec("", "s.yaml", {});
  ProbeTarget alone;
  alone.name = "cpu";
  ProbeTarget together = alone;
  together.in_turns = true;
  size_t with_several = 0;
  for (const char* op : {"aten::add.Tensor", "aten::mm", "aten::max.dim", "aten::sort", "aten::cumsum", "aten::abs_",
                         "aten::topk", "aten::linalg_inv", "aten::addmm.out"}) {
    for (const char* dtype : {"float32", "int64", "bool", "float16"}) {
      const ProbeResult a = probe_op(alone, spec, op, dtype);
      const ProbeResult b = probe_op(together, spec, op, dtype);
      SCOPED_TRACE(std::string(op) + " " + dtype);
      expect_same_record(a, b);
      with_several += a.samples > 1 && a.verdict != Verdict::kSkip ? 1 : 0;
    }
  }
  set_recordings_choice("");
  EXPECT_GT(with_several, 5u);  // the stages did run together
}

// An overload's dtypes probed in one turn (every probe's operators run before any comparison, as on CUDA: Note
// [Probes in one turn] in probe/probe_op.cc) get the records they get one probe after another: with recorded samples,
// and synthesized, where each dtype starts from the shape that worked in the one before and a dtype the CPU rejects
// says which dtype it took (Note [Rejected in one dtype]).
TEST(Recordings, ProbesInOneTurnGiveTheRecordsOfProbesOneByOne) {
  const std::string path = default_recordings_path();
  if (path.empty()) GTEST_SKIP() << "no recorded samples shipped for this libtorch";
  const Spec spec = parse_spec("", "s.yaml", {});
  ProbeTarget alone;
  alone.name = "cpu";
  ProbeTarget turns = alone;
  turns.in_turns = true;
  const std::vector<std::string> dtypes = {"float32", "int64", "bool", "float16", "complex64"};
  size_t compared = 0, remembered = 0;
  for (const std::string& samples : {path, std::string("none")}) {
    set_recordings_choice(samples);
    for (const char* op :
         {"aten::add.Tensor", "aten::mm", "aten::max.dim", "aten::sort", "aten::cumsum", "aten::linalg_cholesky",
          "aten::linalg_inv", "aten::addmm.out", "aten::conv2d", "aten::nonzero"}) {
      // Each way begins with what a new worker knows of the operator: nothing.
      forget_operators();
      std::vector<ProbeResult> one_by_one;
      for (const auto& dtype : dtypes) one_by_one.push_back(probe_op(alone, spec, op, dtype));
      forget_operators();
      std::vector<ProbeRequest> requests;
      for (const auto& dtype : dtypes) requests.push_back({op, dtype});
      std::vector<std::pair<size_t, ProbeStage>> marks;
      const std::vector<ProbeResult> together =
          probe_ops(turns, spec, process_recordings(), requests,
                    [&](size_t k, ProbeStage stage) { marks.emplace_back(k, stage); });
      ASSERT_EQ(together.size(), dtypes.size());
      // The turn's stages (Note [Probes in one turn]): every probe began before the turn's inputs went in, and
      // those that reached the target ran there after that and before the copies back and the wait.
      const auto turn_mark = std::make_pair(size_t{0}, ProbeStage::kTurn);
      const auto inputs = std::find(marks.begin(), marks.end(), turn_mark);
      ASSERT_NE(inputs, marks.end()) << op;
      const auto wait = std::find(std::next(inputs), marks.end(), turn_mark);
      ASSERT_NE(wait, marks.end()) << op;
      for (size_t k = 0; k < dtypes.size(); ++k) {
        EXPECT_NE(std::find(marks.begin(), inputs, std::make_pair(k, ProbeStage::kReference)), inputs)
            << op << " " << k;
        if (together[k].verdict == Verdict::kSkip) continue;
        EXPECT_NE(std::find(inputs, wait, std::make_pair(k, ProbeStage::kTarget)), wait) << op << " " << k;
      }
      for (size_t k = 0; k < dtypes.size(); ++k) {
        const ProbeResult& a = one_by_one[k];
        const ProbeResult& b = together[k];
        SCOPED_TRACE(std::string(op) + " " + dtypes[k] + " samples " + samples);
        expect_same_record(a, b);
        ++compared;
        remembered += a.message.find("the CPU takes this operator's inputs in") != std::string::npos;
      }
    }
  }
  set_recordings_choice("");
  EXPECT_EQ(compared, 100u);
  EXPECT_GT(remembered, 0u);
}

TEST(Recordings, TheShippedRecordingsOfTheLinkedReleaseLoad) {
  const std::string path = default_recordings_path();
  if (path.empty()) GTEST_SKIP() << "no recorded samples shipped for this libtorch";
  const Recordings r = Recordings::load(path);
  EXPECT_GT(r.summary().kept, 3000u);
  EXPECT_LT(r.summary().calls - r.summary().kept, r.summary().calls / 10) << "most calls fit their own release";
  EXPECT_FALSE(r.samples("aten::add.Tensor", "float32").empty());
  EXPECT_FALSE(r.samples("aten::convolution", "float32").empty());
}

}  // namespace
}  // namespace mps_audit
