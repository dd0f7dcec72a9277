// Note [Known bugs' own calls]
// Each entry of the ledger of known MPS bugs (emu/known_bugs.h) carries its thread's minimal call: an operator overload
// and its arguments in the spec's sample form (shapes, dtypes, values, a view's strides and offset, keywords, index
// values; docs/opspec.md). The prober runs it as a condition sample of that operator, named "repro:<id>", in each
// dtype the entry names that the run probes (every dtype, for an entry of all of them), on every target, beside the
// derived condition samples (Note [Condition samples] in condition_samples.cc):
// - on emulated MPS, whose kernels compute on the CPU, it shows that the call is well-formed (the CPU takes it) and
//   that a program making it meets the bug: its outcome takes the bug's verdict where the release is the bug's (Note
//   [Conditional failures] in emu/known_bugs.cc);
// - on a real Mac it is a real test: where it still fails, the bug is confirmed; where it passes, the entry is an
//   xpass, "looks fixed: confirm and close", and the ledger goes stale loudly.
// A call the CPU refuses (`cpu: raises`: an index out of range, a shape the CPU checks, where the bug is that MPS
// takes it) has that refusal for its reference (SampleInputs::cpu_refuses): the target refusing it too is a pass,
// a result from it a mismatch; one whose CPU rule changed between releases (`cpu: varies`) is compared where the CPU
// takes it, and is such a refusal where it refuses it (on every target but a CUDA device, where a kernel given an index
// out of range may fail a device-side assertion and leave the process without its device). A view in a repro is the
// thread's own layout, not a view of a base sample's values, so its reference is the CPU's result on it alone. A repro
// runs whether or not the operator's own samples got a reference (synthesis finds no well-formed call of
// scaled_dot_product_attention; the thread's call is one). Each is made on the meta device first, which says whether
// the operator takes its shapes and how many elements its tensors and results hold. One whose hold more than
// kReproElementsLimit (the bugs past 2^31 elements or 4 GB, a matrix product of tens of thousands) is not run: it would
// cost the audit seconds to minutes of the CPU, and the same on the target. Its outcome says so, with the traits of its
// shapes, which meet the bug's condition as a run's would. Which repros run is a function of the ledger, the operator
// and the dtype, never of a clock. A repro of an operator the linked libtorch lacks is left out, as that release's
// operators are. A recorded program's replay runs none: its verdicts are over the program's own calls.
#include "probe/repros.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "common/ivalue_tensors.h"
#include "common/text.h"
#include "probe/dtypes.h"
#include "probe/inputs.h"
#include "probe/sample_traits.h"

namespace mps_audit {
namespace {

// The elements `values`' tensors hold, with the whole buffer a view is made in (a slice of a large cache is made as
// a view of a buffer that large).
int64_t elements_of(const std::vector<c10::IValue>& values) {
  int64_t total = 0;
  for (const c10::IValue& v : values) {
    map_tensors(v, [&](const at::Tensor& t) {
      if (!t.defined()) return t;
      const bool buffer = t.has_storage() && t.layout() == c10::kStrided && t.itemsize() > 0;
      total += std::max<int64_t>(t.numel(), buffer ? static_cast<int64_t>(t.storage().nbytes() / t.itemsize()) : 0);
      return t;
    });
  }
  return total;
}

// Whether `e` says the operator has no kernel for the meta device (in this libtorch), rather than why it refused.
bool no_meta_kernel(const std::exception& e) {
  const std::string what = e.what();
  return what.find("with arguments from the 'Meta' backend") != std::string::npos;
}

}  // namespace

void add_repros(Spec& spec, const emu::KnownBugs& bugs, const std::vector<std::string>& known_ops) {
  const std::set<std::string> known(known_ops.begin(), known_ops.end());
  for (const emu::KnownBug& b : bugs.entries()) {
    if (!b.repro || !known.count(b.repro->op)) continue;
    ReproSample r;
    r.id = b.id;
    r.dtypes = b.dtypes;
    r.cpu_raises = b.repro->cpu_raises;
    r.cpu_varies = b.repro->cpu_varies;
    r.sample = parse_sample_args(b.repro->args, bugs.path(), "repro:" + b.id);
    r.sample.where = b.repro->where;
    spec.repros[b.repro->op].push_back(std::move(r));
  }
}

void add_shipped_repros(Spec& spec, const std::vector<std::string>& known_ops) {
  if (const auto bugs = emu::load_shipped_known_bugs()) add_repros(spec, *bugs, known_ops);
}

std::vector<ConditionSample> repro_samples(const c10::OperatorHandle& op, const std::string& op_name,
                                           c10::ScalarType dtype, const std::string& dtype_label, const Spec& spec,
                                           std::vector<ConditionOutcome>& large) {
  std::vector<ConditionSample> made;
  const auto it = spec.repros.find(op_name);
  if (it == spec.repros.end()) return made;
  for (const ReproSample& r : it->second) {
    if (!r.dtypes.empty() && std::find(r.dtypes.begin(), r.dtypes.end(), dtype_label) == r.dtypes.end()) continue;
    // First on the meta device: its shapes, and what it would cost (its tensors and results' elements).
    SampleSpec sample = r.sample;
    sample.on_meta = true;
    SampleInputs shapes;
    try {
      shapes = make_inputs(op.schema(), dtype, spec, &sample, op_name + "/" + dtype_label, nullptr);
    } catch (const std::exception&) {  // values the dtype cannot hold: no such sample
      continue;
    }
    if (!shapes.unsupported.empty()) continue;
    for (c10::IValue& v : shapes.args) {
      v = map_tensors(v, [](const at::Tensor& t) { return t.defined() && !t.is_meta() ? t.to(c10::kMeta) : t; });
    }
    // A factory operator (rand, randint) makes its result where its device argument says: there too.
    const auto& schema_args = op.schema().arguments();
    for (size_t i = 0; i < schema_args.size() && i < shapes.args.size(); ++i) {
      const std::string type = schema_args[i].real_type()->str();
      if (type == "Device" || type == "Device?") shapes.args[i] = c10::Device(c10::kMeta);
    }
    int64_t elements = elements_of(shapes.args);
    std::string unchecked;  // why the meta device could not check its shapes
    torch::jit::Stack stack(shapes.args.begin(), shapes.args.end());
    try {
      op.callBoxed(&stack);
      elements += elements_of(stack);
    } catch (const std::exception& e) {
      // No meta kernel in this libtorch, or one stricter than the CPU's: the CPU judges a call small enough to run,
      // its integer arguments standing for its results' sizes (multinomial's num_samples, a size).
      unchecked = no_meta_kernel(e) ? "the operator has no meta kernel in this libtorch" : first_line(e.what());
      for (const c10::IValue& v : shapes.args) {
        if (v.isInt()) elements += std::max<int64_t>(v.toInt(), 0);
        if (v.isIntList()) {
          int64_t product = 1;
          for (const int64_t x : v.toIntVector()) product *= std::max<int64_t>(x, 1);
          elements += product;
        }
      }
    }
    if (elements <= kReproElementsLimit) {
      SampleInputs in;
      try {
        in = make_inputs(op.schema(), dtype, spec, &r.sample, op_name + "/" + dtype_label, nullptr);
      } catch (const std::exception&) {
        continue;
      }
      in.cpu_refuses = r.cpu_raises;
      in.cpu_may_refuse = r.cpu_varies;
      if (in.unsupported.empty()) made.push_back({Condition::kRepro, std::move(in)});
      continue;
    }
    // Too large to run here, or shapes the operator refuses: an outcome of its own, with the traits of its shapes.
    ConditionOutcome c;
    c.condition = std::string(condition_name(Condition::kRepro));
    c.sample = r.sample.name;
    c.verdict = Verdict::kSkip;
    c.traits = sample_traits(op.schema(), shapes.args);
    c.message = fmt::format("not run: its tensors{} hold {} elements, more than {} (Note [Known bugs' own calls]); {}",
                            unchecked.empty() ? " and results" : "", elements, kReproElementsLimit,
                            unchecked.empty() ? "the meta device takes its shapes"
                                              : "the meta device could not check its shapes: " + unchecked);
    large.push_back(std::move(c));
  }
  return made;
}

}  // namespace mps_audit
