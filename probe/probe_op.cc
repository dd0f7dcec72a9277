// One probe: inputs on the CPU, reference on the CPU, the same inputs copied to the target, a traced run there,
// comparison, verdict.
#include "probe/probe_op.h"

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/ivalue_tensors.h"
#include "common/torch_compat.h"
#include "probe/caught_faults.h"
#include "probe/compare.h"
#include "probe/dispatch_trace.h"
#include "probe/dtypes.h"
#include "probe/inputs.h"
#include "probe/recorded_samples.h"

namespace mps_audit {
namespace {

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

}  // namespace

std::optional<Tolerance> comparison_tolerance(const Tolerance* spec_tolerance, c10::ScalarType dtype,
                                              bool reference_in_float32) {
  if (!spec_tolerance && !reference_in_float32) return std::nullopt;
  Tolerance t = spec_tolerance ? *spec_tolerance : default_tolerance(dtype);
  // A reference computed in float32 is rounded once, where the target rounds every intermediate of a composite in the
  // low-precision dtype: PyTorch's MPS tests compare such results within atol = rtol = 1e-2, and so does the prober
  // unless the spec is looser.
  if (reference_in_float32) {
    t.atol = std::max(t.atol, 1e-2);
    t.rtol = std::max(t.rtol, 1e-2);
  }
  return t;
}

std::string error_text(const std::exception& e) {
  if (const auto* c = dynamic_cast<const c10::Error*>(&e)) return first_line(c->what_without_backtrace());
  return first_line(e.what());
}

namespace {

std::vector<c10::IValue> copy_args(const std::vector<c10::IValue>& args, const TensorFn& f) {
  std::vector<c10::IValue> out;
  for (const auto& a : args) out.push_back(map_tensors(a, f));
  return out;
}

// Runs the op; returns its returns followed by the arguments it writes (in-place and out= variants).
c10::IValue run(const c10::OperatorHandle& op, std::vector<c10::IValue> args) {
  std::vector<c10::IValue> written;
  const auto& schema = op.schema();
  torch::jit::Stack stack = args;
  op.callBoxed(&stack);
  std::vector<c10::IValue> outputs(stack.begin(), stack.end());
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const auto& alias = schema.arguments()[i].alias_info();
    if (alias && alias->isWrite()) outputs.push_back(args[i]);
  }
  return c10::ivalue::Tuple::create(std::move(outputs));
}

// Note [Copies to and from a CUDA device]
// A copy between pageable host memory and a CUDA device makes the host wait for the device, once per tensor. With a
// worker per core and one GPU, each wait is a wait for the GPU to come round to this process again: on 16 cores,
// copying the inputs took two thirds of the default audit's probe time on CUDA (1 worker: 23 us a copy; 16 workers:
// 7 ms). So on CUDA, inputs go through pinned memory without a wait (the operator runs after them on the same
// stream), and outputs come back into pinned memory with one wait for all of them. Tensors with dimension names,
// lazy conjugation or negation, gaps or overlaps, gradients, other layouts or no memory behind them are copied as
// before; so is everything on every other device.
//
// The GPU serves the processes that share it in turn: 16 processes that each run a kernel, copy its result back and
// wait get about 7,200 such round trips a second from an H100 between them (8 processes the same; one process alone,
// 37,000), and a round trip that copies inputs first costs no more. In a warm audit on 16 workers the GPU was busy 98%
// of the time (2% with one) and the median probe took 2 ms (0.2 ms with one). Plain tensors, which a CUDA device
// always holds, are therefore copied once the CPU has taken the inputs, right before the operator: the copies, the
// operator and the copies back are one round trip, and the three in five inputs tried that the CPU rejects cost the
// GPU nothing. Every other input is copied first, as on every other device, so that a copy the target refuses still
// decides the verdict.
bool async_copyable(const at::Tensor& t) {
  return t.layout() == c10::kStrided && !t.is_quantized() && !t.has_names() && !t.is_conj() && !t.is_neg() &&
         !t.requires_grad() && !t._is_zerotensor() && t.is_non_overlapping_and_dense();
}

// The inputs on the target: those that must be copied first (Note [Copies to and from a CUDA device]), with plain
// tensors left on the CPU for a CUDA target, or all of them (`plain`) once the CPU has taken them.
std::vector<c10::IValue> inputs_on(const std::vector<c10::IValue>& args, const c10::Device& device, bool plain) {
  return copy_args(args, [&](const at::Tensor& t) {
    if (!t.defined()) return t;
    if (device.is_cuda() && t.device().is_cpu() && async_copyable(t)) {
      return plain ? t.pin_memory().to(device, /*non_blocking=*/true) : t;
    }
    return plain ? t : t.to(device);
  });
}

// The outputs on the CPU; the copies from a CUDA device go into pinned memory without a wait, and are done once
// each device added to `wait_for` is waited for (wait_for_copies()).
c10::IValue outputs_on_cpu(const c10::IValue& outputs, std::vector<c10::Device>& wait_for) {
  return map_tensors(outputs, [&](const at::Tensor& t) {
    if (!t.defined()) return t;
    if (t.device().is_cuda() && async_copyable(t)) {
      if (std::find(wait_for.begin(), wait_for.end(), t.device()) == wait_for.end()) wait_for.push_back(t.device());
      return t.to(c10::kCPU, /*non_blocking=*/true);  // into pinned memory
    }
    return t.to(c10::kCPU);
  });
}

void wait_for_copies(const std::vector<c10::Device>& devices) {
  for (const c10::Device& d : devices) c10::impl::getDeviceGuardImpl(c10::kCUDA)->getStream(d).synchronize();
}

bool low_precision(c10::ScalarType t) {
  return t == c10::ScalarType::Half || t == c10::ScalarType::BFloat16;
}

bool is_unsupported(const std::exception& e) {
  return dynamic_cast<const c10::NotImplementedError*>(&e) || dynamic_cast<const c10::TypeError*>(&e);
}

struct SampleOutcome {
  std::vector<std::string> warnings;
  Verdict verdict = Verdict::kPass;
  std::string message;
  Comparison comparison;
  std::vector<std::string> fallback_ops;
};

// One sample's probe, in stages: the reference on the CPU, the run on the target, the outputs copied back, the
// comparison. probe_samples() runs each stage for all the samples it is given before the next: one sample at a time,
// or on CUDA all of a probe's (Note [Samples in one round trip]).
class SampleProbe {
 public:
  SampleProbe(const ProbeTarget& target, const c10::OperatorHandle& op, c10::ScalarType dtype,
              const SampleInputs& inputs)
      : target_(target), op_(op), dtype_(dtype), inputs_(inputs) {}

  SampleOutcome out;
  bool decided = false;  // `out` is the outcome; the stages after are not run

  // The inputs the target gets first, then the reference.
  void reference() {
    // The target gets its own copy of the inputs, made first: a target that cannot hold them (sparse or quantized
    // tensors on MPS) does not support the operator, whatever the CPU makes of them. Plain tensors for a CUDA device
    // follow once the CPU has taken them (Note [Copies to and from a CUDA device]).
    target_args_ = inputs_on(inputs_.args, target_.device, /*plain=*/false);
    try {
      expected_ = compute_reference();
    } catch (const std::exception& e) {
      decide(Verdict::kSkip, "no reference: the CPU raised: " + error_text(e));
    }
  }

  // The plain inputs for a CUDA device.
  void rest_of_inputs() { target_args_ = inputs_on(target_args_, target_.device, /*plain=*/true); }

  // The traced run on the target.
  void run_on_target(const std::function<void()>& before_target) {
    if (before_target) before_target();
    compat::CollectingWarningHandler warnings;
    compat::torch_warnings::WarningHandlerGuard guard(&warnings);
    compat::torch_warnings::set_warnAlways(true);
    DispatchTrace trace;
    // A fallback shows as aten::_to_cpu inside the operator that fell back; one at the top level is the probed
    // operator itself (probing aten::_to_cpu). Collected also when the target then fails, to say where.
    auto collect_fallbacks = [&] {
      for (const auto& parent : trace.parents_of("aten::_to_cpu")) {
        if (!parent.empty() &&
            std::find(out.fallback_ops.begin(), out.fallback_ops.end(), parent) == out.fallback_ops.end()) {
          out.fallback_ops.push_back(parent);
        }
      }
    };
    // A fault of code on the CPU that touched this probe's device memory is caught (Note [Caught faults]).
    const std::vector<DeviceMemory> device_memory = target_.device.is_cpu() || target_.device.is_meta()
                                                        ? std::vector<DeviceMemory>{}
                                                        : device_memory_of(op_.schema(), target_args_, target_.device);
    std::optional<CaughtFault> fault;
    try {
      fault = run_catching_device_faults(device_memory, target_.device, [&] { actual_ = run(op_, target_args_); });
      collect_fallbacks();
    } catch (const std::exception& e) {
      collect_fallbacks();
      compat::torch_warnings::set_warnAlways(false);
      out.warnings = warnings.messages;
      decide(is_unsupported(e) ? Verdict::kUnsupported : Verdict::kError, error_text(e));
      return;
    }
    compat::torch_warnings::set_warnAlways(false);
    out.warnings = warnings.messages;
    if (fault) decide(Verdict::kCrash, fault->description);
  }

  bool crashed() const { return decided && out.verdict == Verdict::kCrash; }

  // Starts copying the outputs back; the copies from a CUDA device are done once each device in `wait_for` is waited
  // for (wait_for_copies()).
  void copy_back(std::vector<c10::Device>& wait_for) {
    actual_cpu_ = target_.device.type() == c10::kMeta ? actual_ : outputs_on_cpu(actual_, wait_for);
  }

  // What a stage raised (moving inputs to the target, say) decides the outcome.
  void fail(const std::exception& e) {
    out = SampleOutcome();
    decide(is_unsupported(e) ? Verdict::kUnsupported : Verdict::kError, error_text(e));
  }

  // What waiting for the copies back raised decides the outcome.
  void copies_failed(const std::exception& e) {
    // Releasing pinned memory that a failed copy used asks the device about it, and that error, raised where no
    // error may be, would abort the process: the copies' memory is left to the process's end (the worker retires
    // after such an error).
    new c10::IValue(std::move(actual_cpu_));
    actual_cpu_ = c10::IValue();
    fail(e);
  }

  // The comparison, and the verdict.
  void judge(const Spec& spec, const OpSpec* entry, const std::string& dtype_label) {
    const bool meta = target_.device.type() == c10::kMeta;
    const CompareMode mode =
        meta ? CompareMode::kShape : (entry && entry->compare ? *entry->compare : CompareMode::kValues);
    const IndexSource indices =
        mode == CompareMode::kIndicesByValues ? index_source(op_.schema(), inputs_.args) : IndexSource{};
    const std::optional<Tolerance> tolerance_used =
        comparison_tolerance(spec.tolerance_for(entry, dtype_label), dtype_, in_float32_);
    const Tolerance* tolerance = tolerance_used ? &*tolerance_used : nullptr;
    try {
      out.comparison = compare_outputs(expected_, actual_cpu_, mode, tolerance, &indices);
    } catch (const std::exception& e) {  // outputs without memory to read (functorch's batched tensors)
      decide(Verdict::kError, "the outputs could not be compared: " + error_text(e));
      return;
    }
    if (!out.comparison.equal) {
      // A reference that differs from itself (uninitialised memory read, inputs a kernel does not check) proves
      // nothing about the target.
      const Comparison again = compare_outputs(expected_, compute_reference(), mode, tolerance, &indices);
      if (!again.equal) {
        decide(Verdict::kSkip, "no reference: the CPU gives different results from run to run (" + again.message + ")");
        return;
      }
    }
    if (!out.comparison.equal) {
      decide(Verdict::kMismatch, out.comparison.message);
    } else if (!out.fallback_ops.empty()) {
      decide(Verdict::kFallback, fmt::format("ran on the CPU: {}", fmt::join(out.fallback_ops, ", ")));
    } else {
      decided = true;  // a pass
    }
  }

 private:
  void decide(Verdict verdict, std::string message) {
    out.verdict = verdict;
    out.message = std::move(message);
    decided = true;
  }

  // As PyTorch's MPS tests do: without a CPU kernel for a low-precision dtype, compute the reference in float32.
  c10::IValue compute_reference() {
    if (!in_float32_) {
      try {
        return run(op_, copy_args(inputs_.args, [](const at::Tensor& t) { return t.defined() ? t.clone() : t; }));
      } catch (const std::exception&) {
        if (!low_precision(dtype_)) throw;
        in_float32_ = true;
      }
    }
    const c10::IValue r = run(op_, copy_args(inputs_.args, [&](const at::Tensor& t) {
                                if (!t.defined()) return t;
                                return t.scalar_type() == dtype_ ? t.to(c10::ScalarType::Float) : t.clone();
                              }));
    // Float32 results stand for the dtype, and complex64 ones for complex32 when the dtype is float16 (fft_fft of
    // a half tensor); bfloat16 has no complex type.
    return map_tensors(r, [&](const at::Tensor& t) {
      if (!t.defined()) return t;
      if (t.scalar_type() == c10::ScalarType::Float) return t.to(dtype_);
      if (t.scalar_type() == c10::ScalarType::ComplexFloat && dtype_ == c10::ScalarType::Half) {
        return t.to(c10::ScalarType::ComplexHalf);
      }
      return t;
    });
  }

  const ProbeTarget& target_;
  const c10::OperatorHandle& op_;
  c10::ScalarType dtype_;
  const SampleInputs& inputs_;
  std::vector<c10::IValue> target_args_;
  bool in_float32_ = false;
  c10::IValue expected_, actual_, actual_cpu_;
};

// Note [Samples in one round trip]
// A GPU shared by the workers serves each its turn, and a turn holds a worker's copies in, kernels and copies back
// as long as no kernel comes after a copy back (Note [Copies to and from a CUDA device]). So on CUDA
// (ProbeTarget::samples_together), a probe of several recorded samples computes every sample's reference, then
// copies their inputs in, runs the operator on each, and copies all the outputs back with one wait: one turn where
// it took one per sample. The warm audit on an H100 at -j16 took 7.7-8.4 s instead of 9.1-9.2 s, with the same
// records. Each sample's outcome is what it would be alone, but on a device that failed: copies back that fail give
// every sample whose outputs they held the error, and a crash caught in one sample ends the probe there, as always,
// with the samples before it judged after it.
// The outcomes of `samples`, each stage run for all of them before the next; none for the samples after one that
// crashed.
std::vector<SampleOutcome> probe_samples(const ProbeTarget& target, const Spec& spec, const OpSpec* entry,
                                         const c10::OperatorHandle& op, c10::ScalarType dtype,
                                         const std::string& dtype_label, const std::vector<SampleInputs>& samples,
                                         const std::function<void()>& before_target) {
  std::vector<SampleProbe> probes;
  probes.reserve(samples.size());
  for (const SampleInputs& inputs : samples) probes.emplace_back(target, op, dtype, inputs);
  // Runs `f` on each of the first `count` samples whose outcome is not decided yet; what it raises decides it.
  const auto stage = [&](size_t count, const std::function<void(SampleProbe&)>& f) {
    for (size_t k = 0; k < count; ++k) {
      if (probes[k].decided) continue;
      try {
        f(probes[k]);
      } catch (const std::exception& e) {
        probes[k].fail(e);
      }
    }
  };
  stage(probes.size(), [](SampleProbe& p) { p.reference(); });
  stage(probes.size(), [](SampleProbe& p) { p.rest_of_inputs(); });
  // A crash ends the probe: the samples after it do not run.
  size_t run = 0;
  while (run < probes.size()) {
    SampleProbe& p = probes[run++];
    if (p.decided) continue;
    try {
      p.run_on_target(before_target);
    } catch (const std::exception& e) {
      p.fail(e);
    }
    if (p.crashed()) break;
  }
  std::vector<c10::Device> wait_for;
  stage(run, [&](SampleProbe& p) { p.copy_back(wait_for); });
  try {
    wait_for_copies(wait_for);
  } catch (const std::exception& e) {
    stage(run, [&](SampleProbe& p) { p.copies_failed(e); });
  }
  stage(run, [&](SampleProbe& p) { p.judge(spec, entry, dtype_label); });
  std::vector<SampleOutcome> outcomes;
  for (size_t k = 0; k < run; ++k) outcomes.push_back(probes[k].out);
  return outcomes;
}

SampleOutcome probe_sample(const ProbeTarget& target, const Spec& spec, const OpSpec* entry,
                           const c10::OperatorHandle& op, c10::ScalarType dtype, const std::string& dtype_label,
                           const SampleInputs& inputs, const std::function<void()>& before_target) {
  return probe_samples(target, spec, entry, op, dtype, dtype_label, {inputs}, before_target).front();
}

}  // namespace

IndexSource index_source(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args) {
  IndexSource source;
  const auto& returns = schema.returns();
  const bool all = schema.name().rfind("aten::arg", 0) == 0;
  for (size_t i = 0; i < returns.size(); ++i) {
    if (all || returns[i].name().find("indices") != std::string::npos) source.index_outputs.push_back(i);
  }
  size_t position = returns.size();
  for (size_t i = 0; i < schema.arguments().size() && i < args.size(); ++i) {
    const auto& a = schema.arguments()[i];
    if (!source.input.defined() && args[i].isTensor()) source.input = args[i].toTensor();
    if (a.name() == "dim" && args[i].isInt()) source.dim = args[i].toInt();
    if (a.name() == "dim" && args[i].isString() && source.input.defined() && source.input.has_names()) {
      const auto names = source.input.names();  // a Dimname overload: the dimension of that name
      for (size_t d = 0; d < names.size(); ++d) {
        if (names[d].symbol().toQualString() == args[i].toStringRef()) source.dim = static_cast<int64_t>(d);
      }
    }
    if (!a.alias_info() || !a.alias_info()->isWrite()) continue;
    bool index = all || a.name().find("indices") != std::string::npos;
    for (size_t r = 0; r < returns.size(); ++r) {
      if (returns[r].alias_info() && returns[r].alias_info()->beforeSets() == a.alias_info()->beforeSets()) {
        index = std::find(source.index_outputs.begin(), source.index_outputs.end(), r) != source.index_outputs.end();
      }
    }
    if (index) source.index_outputs.push_back(position);
    ++position;
  }
  return source;
}

ProbeResult probe_op(const ProbeTarget& target, const Spec& spec, const std::string& op_name,
                     const std::string& dtype_label, const std::function<void()>& before_target) {
  const auto start = std::chrono::steady_clock::now();
  ProbeResult r;
  r.op = op_name;
  r.dtype = dtype_label;
  const size_t colons = op_name.find("::"), dot = op_name.find('.', colons);
  auto op = c10::Dispatcher::singleton().findOp(
      {op_name.substr(0, dot), dot == std::string::npos ? "" : op_name.substr(dot + 1)});
  const OpSpec* entry = spec.find(op_name);
  const auto dtype = parse_dtype(dtype_label);
  if (!op || !op->hasSchema() || !dtype) {
    r.message = !op ? "no such operator in this libtorch" : "unknown dtype";
    return r;
  }
  if (entry && !entry->skip.empty()) {
    r.message = "spec: " + entry->skip;
    return r;
  }
  if (entry) {
    for (const auto& k : entry->skip_when) {
      if (k.applies(target.name, dtype_label, target.macos_major, target.torch_version)) {
        r.message = "spec: " + k.reason;
        return r;
      }
    }
  }
  std::vector<const SampleSpec*> samples;
  if (entry) {
    for (const auto& s : entry->samples) samples.push_back(&s);
  }
  // Without samples in the spec: the calls recorded from PyTorch's OpInfo samples (probe/recorded_samples.h), at
  // most three; synthesis only when there are none or the CPU rejects every one.
  // An out= variant without recordings of its own replays its functional twin's, with out tensors made to match.
  std::vector<RecordedSample> recorded;
  if (samples.empty()) {
    if (const Recordings* recordings = process_recordings()) {
      recorded = recordings->samples(op_name, dtype_label, 3);
      const auto twin = recorded.empty() ? functional_twin(op->schema()) : std::nullopt;
      if (twin) {
        for (auto& rec : recordings->samples(c10::toString(twin->schema().operator_name()), dtype_label, 3)) {
          SampleInputs twin_inputs;
          twin_inputs.name = rec.name;
          twin_inputs.args = std::move(rec.args);
          try {
            SampleInputs out = out_variant_inputs(op->schema(), *twin, twin_inputs, *dtype);
            if (out.unsupported.empty()) recorded.push_back({rec.name + ":twin", std::move(out.args)});
          } catch (const std::exception&) {  // out tensors the CPU cannot make (a block-sparse result): not this one
          }
        }
      }
    }
  }
  bool any_run = false;
  r.verdict = Verdict::kSkip;
  std::string skip_reason;
  // The worst sample decides. A crash ends the probe, as it would have ended the process had it not been caught.
  bool crashed = false;
  const auto take = [&](const SampleOutcome& o, const std::string& name) {
    ++r.samples;
    crashed = crashed || o.verdict == Verdict::kCrash;
    for (auto w : o.warnings) {
      w = first_line(w);
      if (r.warnings.size() < 8 && std::find(r.warnings.begin(), r.warnings.end(), w) == r.warnings.end()) {
        r.warnings.push_back(w);
      }
    }
    if (o.verdict == Verdict::kSkip) {
      skip_reason = o.message;
      return;
    }
    const bool first = !any_run;
    any_run = true;
    if (first || (worse(r.verdict, o.verdict) == o.verdict && o.verdict != r.verdict)) {
      r.verdict = o.verdict;
      r.message = o.message;
      r.sample = name;
      r.fallback_ops = o.fallback_ops;
      r.max_abs_error = o.comparison.max_abs_error;
      r.max_rel_error = o.comparison.max_rel_error;
      r.mismatches = o.comparison.mismatches;
      r.first_mismatch = o.comparison.first_mismatch;
    }
  };
  std::vector<SampleInputs> recorded_inputs;
  for (auto& rec : recorded) {
    recorded_inputs.emplace_back();
    recorded_inputs.back().name = rec.name;
    recorded_inputs.back().args = std::move(rec.args);
  }
  if (target.samples_together && recorded_inputs.size() > 1) {  // Note [Samples in one round trip]
    const std::vector<SampleOutcome> outcomes =
        probe_samples(target, spec, entry, *op, *dtype, dtype_label, recorded_inputs, before_target);
    for (size_t k = 0; k < outcomes.size(); ++k) take(outcomes[k], recorded_inputs[k].name);
  } else {
    for (const SampleInputs& inputs : recorded_inputs) {
      if (crashed) break;
      take(probe_sample(target, spec, entry, *op, *dtype, dtype_label, inputs, before_target), inputs.name);
    }
  }
  if (any_run) samples.clear();  // recordings the CPU took: no synthesis
  const bool synthesized = samples.empty() && !any_run;
  if (synthesized) samples.push_back(nullptr);

  const std::vector<Synthesis> variants = synthesized ? synthesis_variants(op->schema()) : std::vector<Synthesis>{};
  for (const SampleSpec* sample : samples) {
    if (crashed) break;
    // Without a sample in the spec, synthesis tries other shapes until the CPU takes the inputs, starting with the
    // one that worked for this operator in another dtype. An operator no variant suits, twice, gets only the
    // default afterwards: every failed try costs a C++ exception.
    static std::unordered_map<std::string, std::pair<size_t, int>> memory;  // op -> (variant that worked, misses)
    std::vector<size_t> order;
    if (synthesized) {
      auto& [worked, misses] = memory[op_name];
      order.push_back(worked);
      for (size_t v = 0; v < variants.size() && misses < 2; ++v) {
        if (v != worked) order.push_back(v);
      }
    } else {
      order.push_back(0);
    }
    SampleInputs inputs;
    SampleOutcome o;
    for (size_t v : order) {
      try {
        inputs = make_inputs(op->schema(), *dtype, spec, sample, op_name + "/" + dtype_label,
                             synthesized ? &variants[v] : nullptr);
      } catch (const std::exception& e) {  // making them ran the CPU: an out= variant's twin, a backward's forward
        inputs = SampleInputs();
        o = SampleOutcome();
        o.verdict = Verdict::kSkip;
        o.message = "no reference: the CPU raised: " + error_text(e);
        continue;
      }
      if (!inputs.unsupported.empty()) break;
      o = probe_sample(target, spec, entry, *op, *dtype, dtype_label, inputs, before_target);
      if (o.verdict != Verdict::kSkip) {
        if (synthesized) memory[op_name].first = v;
        break;
      }
    }
    if (synthesized && o.verdict == Verdict::kSkip) ++memory[op_name].second;
    if (!inputs.unsupported.empty()) {
      skip_reason = inputs.unsupported;
      continue;
    }
    take(o, inputs.name);
  }
  if (!any_run) r.message = skip_reason;

  // Note [Rejected in one dtype]
  // A worker probes every dtype of an operator in plan order. When the CPU took the operator's inputs in an earlier
  // dtype (synthesis tries the shapes that worked there first) and rejects them in this one, it is the dtype the CPU
  // does not take, whatever the error says ("A must be batches of square matrices" for int64 linalg_cholesky).
  static std::unordered_map<std::string, std::string> accepted_in;  // operator -> the first dtype the CPU took
  if (r.verdict != Verdict::kSkip) {
    accepted_in.emplace(op_name, dtype_label);
  } else if (const auto it = accepted_in.find(op_name); it != accepted_in.end() && it->second != dtype_label &&
                                                        mps_audit::skip_reason(r) == "cpu_rejects_inputs") {
    const std::string raised = "no reference: the CPU raised: ";
    const std::string why = r.message.rfind(raised, 0) == 0 ? r.message.substr(raised.size()) : r.message;
    r.message = fmt::format("no reference: the CPU takes this operator's inputs in {} but not in {}: {}", it->second,
                            dtype_label, why);
  }

  if (entry && r.verdict != Verdict::kSkip) {
    for (const auto& k : entry->xfail) {
      if (!k.applies(target.name, dtype_label, target.macos_major, target.torch_version)) continue;
      const bool failed = r.verdict != Verdict::kPass && r.verdict != Verdict::kFallback;
      r.message = failed ? fmt::format("expected failure ({}): {}", k.reason, r.message)
                         : fmt::format("passed, though the spec expects a failure: {}", k.reason);
      r.verdict = failed ? Verdict::kXfail : Verdict::kXpass;
      break;
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace mps_audit
