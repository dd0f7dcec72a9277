// One sample's probe, stage by stage, for probe_op.cc: the inputs copied to the target (Note [Copies to and from a CUDA
// device], Note [Views on the target]), the CPU reference, the traced run on the target, the outputs copied back, the
// comparison and its verdict; the stages of several samples run together (Note [Samples in one round trip]); and the
// record's verdict from its samples' (Note [A record rests on its own samples]).
#include "probe/sample_probe.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/ivalue_tensors.h"
#include "common/limit_errors.h"
#include "common/torch_compat.h"
#include "probe/caught_faults.h"
#include "probe/dispatch_trace.h"
#include "probe/inputs.h"
#include "probe/sample_traits.h"

namespace mps_audit::detail {
namespace {

std::vector<c10::IValue> copy_args(const std::vector<c10::IValue>& args, const TensorFn& f) {
  std::vector<c10::IValue> out;
  for (const auto& a : args) out.push_back(map_tensors(a, f));
  return out;
}

// Note [Views on the target]
// A plain copy (Tensor::to, clone) of a view with gaps between its elements is contiguous, and any copy starts at
// storage offset 0: a condition sample's views (Note [Condition samples] in condition_samples.cc) would reach the
// target, and the CPU reference, as the plain tensors every other sample has. So the views of a sample that keeps them
// (SampleInputs::keep_views) are copied with the stretch of storage they reach, from its start, and made again on the
// copy with the same sizes, strides and storage offset: on the target, and for the reference, so that an operator the
// CPU does not let take such a view (view() of a non-contiguous tensor) is not asked to on the target. The CPU target
// gets the sample's own tensors, as always. Tensors that overlap themselves (expanded ones) are copied as before.
bool kept_view(const at::Tensor& t) {
  if (t.layout() != c10::kStrided || t.is_quantized() || compat::has_names(t) || t.is_conj() || t.is_neg() ||
      t.requires_grad() || t.numel() == 0) {
    return false;
  }
  if (t.storage_offset() == 0 && t.is_non_overlapping_and_dense()) return false;  // a plain copy keeps it
  std::vector<std::pair<int64_t, int64_t>> dims;                                  // stride, size
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == 1) continue;
    if (t.stride(d) <= 0) return false;
    dims.emplace_back(t.stride(d), t.size(d));
  }
  std::sort(dims.begin(), dims.end());
  int64_t reach = 1;  // elements past the first that the smaller strides reach, plus one
  for (const auto& [stride, size] : dims) {
    if (stride < reach) return false;
    reach += stride * (size - 1);
  }
  return true;
}

at::Tensor copy_view(const at::Tensor& t, const at::TensorOptions& to) {
  int64_t span = t.storage_offset() + 1;
  for (int64_t d = 0; d < t.dim(); ++d) span += (t.size(d) - 1) * t.stride(d);
  at::Tensor copy = at::empty({span}, to);
  copy.copy_(t.as_strided({span}, {1}, 0));
  return copy.as_strided(t.sizes(), t.strides(), t.storage_offset());
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
  return t.layout() == c10::kStrided && !t.is_quantized() && !compat::has_names(t) && !t.is_conj() && !t.is_neg() &&
         !t.requires_grad() && !t._is_zerotensor() && t.is_non_overlapping_and_dense();
}

// The inputs on the target: those that must be copied first (Note [Copies to and from a CUDA device]), with plain
// tensors left on the CPU for a CUDA target, or all of them (`plain`) once the CPU has taken them. `args` are the
// arguments of `sample`, in its order; those it keeps on the CPU stay there, and its views stay views (Note [Views on
// the target]).
std::vector<c10::IValue> inputs_on(const std::vector<c10::IValue>& args, const SampleInputs& sample,
                                   const c10::Device& device, bool plain) {
  std::vector<c10::IValue> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (std::find(sample.on_cpu.begin(), sample.on_cpu.end(), i) != sample.on_cpu.end()) {
      out.push_back(args[i]);
      continue;
    }
    if (std::find(sample.target_device.begin(), sample.target_device.end(), i) != sample.target_device.end()) {
      out.push_back(device);
      continue;
    }
    out.push_back(map_tensors(args[i], [&](const at::Tensor& t) {
      // Note [Wrapped numbers]
      // A Python number given where an operator takes a tensor (x * 0.5) is a 0-d CPU tensor marked as a wrapped
      // number, on a Mac as here: it stays on the CPU, where TensorIterator operators take it as a scalar.
      if (!t.defined() || t.unsafeGetTensorImpl()->is_wrapped_number()) return t;
      if (sample.keep_views && !device.is_cpu() && t.device().is_cpu() && kept_view(t)) {
        return copy_view(t, t.options().device(device));
      }
      if (device.is_cuda() && t.device().is_cpu() && async_copyable(t)) {
        return plain ? t.pin_memory().to(device, /*non_blocking=*/true) : t;
      }
      return plain ? t : t.to(device);
    }));
  }
  return out;
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

}  // namespace

void SampleProbe::reference() {
  // The target gets its own copy of the inputs, made first: a target that cannot hold them (sparse or quantized
  // tensors on MPS) does not support the operator, whatever the CPU makes of them. Plain tensors for a CUDA device
  // follow once the CPU has taken them (Note [Copies to and from a CUDA device]).
  target_args_ = inputs_on(inputs_.args, inputs_, target_.device, /*plain=*/false);
  try {
    expected_ = compute_reference();
  } catch (const std::exception& e) {
    if (inputs_.cpu_refuses || inputs_.cpu_may_refuse) {  // the refusal is the reference: the target should refuse too
      // Not on a CUDA device: a kernel given what the CPU refuses (an index out of range) may fail a device-side
      // assertion, after which the process can use the device no more.
      if (target_.device.is_cuda()) {
        decide(Verdict::kSkip,
               "not run on a CUDA device: the CPU refuses this call, and a CUDA kernel given it may "
               "fail a device-side assertion: " +
                   error_text(e));
        return;
      }
      cpu_refusal_ = error_text(e);
      return;
    }
    decide(Verdict::kSkip, "no reference: the CPU raised: " + error_text(e));
  }
  if (inputs_.cpu_refuses && !decided) {
    decide(Verdict::kSkip, "no reference: the CPU took a call the known bug says it refuses");
  }
}

void SampleProbe::rest_of_inputs() {
  target_args_ = inputs_on(target_args_, inputs_, target_.device, /*plain=*/true);
}

void SampleProbe::run_on_target(const std::function<void()>& before_target) {
  if (before_target) before_target();
  compat::CollectingWarningHandler warnings;
  compat::torch_warnings::WarningHandlerGuard guard(&warnings);
  compat::torch_warnings::set_warnAlways(true);
  DispatchTrace trace;
  // The operators that fell back (Note [Operators that fell back] in dispatch_trace.cc), collected also when the
  // target then fails, to say where.
  auto collect_fallbacks = [&] {
    for (const auto& op : fallback_ops(trace.events())) {
      if (std::find(out.fallback_ops.begin(), out.fallback_ops.end(), op) == out.fallback_ops.end()) {
        out.fallback_ops.push_back(op);
      }
    }
  };
  // A fault of code on the CPU that touched this probe's device memory is caught (Note [Caught faults]).
  const std::vector<DeviceMemory> device_memory = target_.device.is_cpu() || target_.device.is_meta()
                                                      ? std::vector<DeviceMemory>{}
                                                      : device_memory_of(op_.schema(), target_args_, target_.device);
  out.traits = sample_traits(op_.schema(), target_args_, &inputs_.args);
  std::optional<CaughtFault> fault;
  try {
    fault = run_catching_device_faults(device_memory, target_.device, [&] { actual_ = run(op_, target_args_); });
    collect_fallbacks();
  } catch (const DeviceAbort& e) {
    collect_fallbacks();
    compat::torch_warnings::set_warnAlways(false);
    out.warnings = warnings.messages;
    decide(Verdict::kCrash, e.what());
    out.survived = true;
    out.by_limit = true;
    return;
  } catch (const NotJudged& e) {
    collect_fallbacks();
    compat::torch_warnings::set_warnAlways(false);
    out.warnings = warnings.messages;
    decide(Verdict::kSkip, fmt::format("not judged: {}", e.what()));
    return;
  } catch (const std::exception& e) {
    collect_fallbacks();
    compat::torch_warnings::set_warnAlways(false);
    out.warnings = warnings.messages;
    if (!cpu_refusal_.empty() && !is_unsupported(e)) {  // not the operator's absence from the target
      decide(Verdict::kPass, fmt::format("refused, as the CPU refuses it: {}", error_text(e)));
      return;
    }
    decide(is_unsupported(e) ? Verdict::kUnsupported : Verdict::kError, error_text(e));
    out.by_limit = is_limit_error(e);
    return;
  }
  compat::torch_warnings::set_warnAlways(false);
  out.warnings = warnings.messages;
  if (fault) decide(Verdict::kCrash, fault->description);
}

void SampleProbe::copy_back(std::vector<c10::Device>& wait_for) {
  actual_cpu_ = target_.device.type() == c10::kMeta ? actual_ : outputs_on_cpu(actual_, wait_for);
}

void SampleProbe::fail(const std::exception& e) {
  out = SampleOutcome();
  decide(is_unsupported(e) ? Verdict::kUnsupported : Verdict::kError, error_text(e));
}

void SampleProbe::copies_failed(const std::exception& e) {
  // Releasing pinned memory that a failed copy used asks the device about it, and that error, raised where no
  // error may be, would abort the process: the copies' memory is left to the process's end (the worker retires
  // after such an error).
  new c10::IValue(std::move(actual_cpu_));
  actual_cpu_ = c10::IValue();
  fail(e);
}

Comparison SampleProbe::compare_to_reference(const c10::IValue& expected, const c10::IValue& actual, const Spec& spec,
                                             const OpSpec* entry, const std::string& dtype_label) {
  const bool meta = target_.device.type() == c10::kMeta;
  const CompareMode mode =
      meta ? CompareMode::kShape : (entry && entry->compare ? *entry->compare : CompareMode::kValues);
  const IndexSource indices =
      mode == CompareMode::kIndicesByValues ? index_source(op_.schema(), inputs_.args) : IndexSource{};
  const std::optional<Tolerance> tolerance_used =
      comparison_tolerance(spec.tolerance_for(entry, dtype_label), dtype_, in_float32_);
  return compare_outputs(expected, actual, mode, tolerance_used ? &*tolerance_used : nullptr, &indices);
}

void SampleProbe::agree_with(const c10::IValue& other, const OpSpec* entry) {
  if (decided) return;
  // To the bit, where values are compared: a kernel that takes another path for a view rounds otherwise (a complex
  // matrix product on strided operands), and the comparison on the target would measure the rounding.
  bool agree = false;
  const CompareMode mode = entry && entry->compare ? *entry->compare : CompareMode::kValues;
  const Tolerance exact{0, 0};
  try {
    const IndexSource indices =
        mode == CompareMode::kIndicesByValues ? index_source(op_.schema(), inputs_.args) : IndexSource{};
    agree = compare_outputs(other, expected_, mode, mode == CompareMode::kValues ? &exact : nullptr, &indices).equal;
  } catch (const std::exception&) {
  }
  if (!agree) {
    decide(Verdict::kSkip, "no reference: the CPU's result on these views differs from its result on the same values");
  }
}

void SampleProbe::judge(const Spec& spec, const OpSpec* entry, const std::string& dtype_label) {
  if (!cpu_refusal_.empty()) {  // the target took what the CPU refuses
    if (target_.device.is_meta()) {
      decide(Verdict::kSkip,
             "not judged: the CPU refuses this call for its values, which the meta device does not read");
    } else {
      decide(Verdict::kMismatch,
             fmt::format("the target returned a result where the CPU refuses the call: {}", cpu_refusal_));
    }
    return;
  }
  try {
    out.comparison = compare_to_reference(expected_, actual_cpu_, spec, entry, dtype_label);
  } catch (const std::exception& e) {  // outputs without memory to read (functorch's batched tensors)
    decide(Verdict::kSkip, "not judged: the outputs could not be compared: " + error_text(e));
    return;
  }
  if (!out.comparison.equal) {
    // A reference that differs from itself (uninitialised memory read, inputs a kernel does not check) proves
    // nothing about the target.
    const Comparison again = compare_to_reference(expected_, compute_reference(), spec, entry, dtype_label);
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

void SampleProbe::decide(Verdict verdict, std::string message) {
  out.verdict = verdict;
  out.message = std::move(message);
  out.other_dtype = failed_for_other_dtype(op_.schema(), inputs_.args, dtype_, verdict, out.message);
  decided = true;
}

c10::IValue SampleProbe::compute_reference() {
  if (!in_float32_) {
    try {
      // A Python number is the same number (Note [Wrapped numbers]): a copy would no longer be one.
      return run(op_, copy_args(inputs_.args, [&](const at::Tensor& t) {
                   if (!t.defined() || t.unsafeGetTensorImpl()->is_wrapped_number()) return t;
                   return inputs_.keep_views && kept_view(t) ? copy_view(t, t.options()) : t.clone();
                 }));
    } catch (const std::exception&) {
      if (!low_precision(dtype_)) throw;
      in_float32_ = true;
    }
  }
  const c10::IValue r = run(op_, copy_args(inputs_.args, [&](const at::Tensor& t) {
                              if (!t.defined() || t.unsafeGetTensorImpl()->is_wrapped_number()) return t;
                              const bool view = inputs_.keep_views && kept_view(t);
                              if (t.scalar_type() == dtype_) {
                                const auto f32 = t.options().dtype(c10::ScalarType::Float);
                                return view ? copy_view(t, f32) : t.to(c10::ScalarType::Float);
                              }
                              return view ? copy_view(t, t.options()) : t.clone();
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

// Note [Samples in one round trip]
// A GPU shared by the workers serves each its turn, and a turn holds a worker's copies in, kernels and copies back
// as long as no kernel comes after a copy back (Note [Copies to and from a CUDA device]). So on CUDA
// (ProbeTarget::in_turns), a probe of several recorded samples computes every sample's reference, then copies their
// inputs in, runs the operator on each, and copies all the outputs back with one wait: one turn where it took one per
// sample. The warm audit on an H100 at -j16 took 7.7-8.4 s instead of 9.1-9.2 s, with the same records. Each sample's
// outcome is what it would be alone, but on a device that failed: copies back that fail give every sample whose
// outputs they held the error, and a crash caught in one sample ends the probe there, as always, with the samples
// before it judged after it.

// Waits for the copies to the CPU from `devices`; what that raised, or null.
std::exception_ptr wait_for_devices(const std::vector<c10::Device>& devices) {
  try {
    wait_for_copies(devices);
  } catch (const std::exception&) {
    return std::current_exception();
  }
  return nullptr;
}

void StagedSamples::stage_reference(const ProbeTarget& target, const c10::OperatorHandle& op, c10::ScalarType dtype,
                                    const std::vector<const SampleInputs*>& samples) {
  probes.reserve(samples.size());
  for (const SampleInputs* inputs : samples) probes.emplace_back(target, op, dtype, *inputs);
  each(probes.size(), [](SampleProbe& p) { p.reference(); });
}

bool StagedSamples::for_target() const {
  return std::any_of(probes.begin(), probes.end(), [](const SampleProbe& p) { return !p.decided; });
}

std::vector<SampleOutcome> StagedSamples::finish_alone(const std::function<void()>& before_target, const Spec& spec,
                                                       const OpSpec* entry, const std::string& dtype_label) {
  std::vector<c10::Device> devices;
  stage_inputs();
  stage_runs(before_target);
  stage_copy_back(devices);
  return judge(spec, entry, dtype_label, wait_for_devices(devices));
}

void StagedSamples::stage_inputs() {
  each(probes.size(), [](SampleProbe& p) { p.rest_of_inputs(); });
}

void StagedSamples::stage_runs(const std::function<void()>& before_target) {
  // A crash ends the probe: the samples after it do not run.
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
}

void StagedSamples::stage_copy_back(std::vector<c10::Device>& wait_for) {
  each(run, [&](SampleProbe& p) { p.copy_back(wait_for); });
}

std::vector<SampleOutcome> StagedSamples::judge(const Spec& spec, const OpSpec* entry, const std::string& dtype_label,
                                                const std::exception_ptr& copies_error) {
  if (copies_error) {
    try {
      std::rethrow_exception(copies_error);
    } catch (const std::exception& e) {
      each(run, [&](SampleProbe& p) { p.copies_failed(e); });
    }
  }
  each(run, [&](SampleProbe& p) { p.judge(spec, entry, dtype_label); });
  std::vector<SampleOutcome> outcomes;
  for (size_t k = 0; k < run; ++k) outcomes.push_back(probes[k].out);
  return outcomes;
}

void StagedSamples::each(size_t count, const std::function<void(SampleProbe&)>& f) {
  for (size_t k = 0; k < count; ++k) {
    if (probes[k].decided) continue;
    try {
      f(probes[k]);
    } catch (const std::exception& e) {
      probes[k].fail(e);
    }
  }
}

// Note [A record rests on its own samples]
// The worst sample decides a record's verdict, of the samples that are the record's own: a sample the target refused
// because of an operand of another dtype (a recorded float32 sample of mul with a complex operand, which MPS before
// macOS 14 refuses; failed_for_other_dtype() in sample_traits.h) says nothing of the record's dtype, so where another
// sample ran it is set aside in the record's sample_notes ("sample 1: unsupported: ..."), and the verdict rests on the
// rest. A record whose every sample failed that way keeps the worst of them: there is nothing else to rest on.
void decide_record(const std::vector<TakenSample>& taken, ProbeResult& r) {
  const bool own_ran =
      std::any_of(taken.begin(), taken.end(), [](const TakenSample& t) { return !t.outcome.other_dtype; });
  bool first = true, by_limit = false;
  for (const TakenSample& t : taken) {
    const SampleOutcome& o = t.outcome;
    if (o.other_dtype && own_ran) {
      r.sample_notes.push_back(fmt::format("sample {}: {}: {}", t.index, to_string(o.verdict), o.message));
      continue;
    }
    if (first || (worse(r.verdict, o.verdict) == o.verdict && o.verdict != r.verdict)) {
      r.verdict = o.verdict;
      r.message = o.message;
      r.sample = t.name;
      r.fallback_ops = o.fallback_ops;
      r.max_abs_error = o.comparison.max_abs_error;
      r.max_rel_error = o.comparison.max_rel_error;
      r.mismatches = o.comparison.mismatches;
      r.first_mismatch = o.comparison.first_mismatch;
      by_limit = o.by_limit;
    }
    first = false;
  }
  if (by_limit) r.basis = kBasisLimits;  // the deciding sample's outcome is a limit's (SampleOutcome::by_limit)
}

}  // namespace mps_audit::detail
