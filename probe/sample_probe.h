// One sample's probe in stages (the CPU reference, the run on the target, the outputs copied back, the comparison),
// samples whose stages run together (Note [Samples in one round trip] in sample_probe.cc), and the record's verdict
// from its samples' (Note [A record rests on its own samples] in sample_probe.cc): what probe_op.cc makes an
// operator's probe of. Only probe_op.cc, sample_probe.cc and their tests include this header.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "probe/compare.h"
#include "probe/probe_target.h"
#include "probe/spec.h"
#include "results/result.h"

namespace c10 {
class OperatorHandle;
}  // namespace c10

namespace mps_audit {
struct SampleInputs;
}  // namespace mps_audit

namespace mps_audit::detail {

struct SampleOutcome {
  std::vector<std::string> warnings;
  Verdict verdict = Verdict::kPass;
  std::string message;
  Comparison comparison;
  std::vector<std::string> fallback_ops;
  SampleTraits traits;  // of the arguments the target got (Note [Traits of a sample] in sample_traits.cc)
  // The target refused the sample because of an operand of a dtype other than the record's (failed_for_other_dtype()
  // in sample_traits.h): the record rests on its other samples where it has any (Note [A record rests on its own
  // samples]).
  bool other_dtype = false;
  // A crash the process went on from: an emulated kernel met a limit of MPS where a Mac's process aborts (DeviceAbort,
  // Note [MPS limits] in emu/mps_limits.cc). The samples after it run; a condition sample's is its condition's.
  bool survived = false;
  // The outcome rests on a limit of MPS the emulator enforced (a crash it went on from, or a LimitError or
  // LimitRefusal of common/limit_errors.h), not on a kernel that ran.
  bool by_limit = false;
};

// One sample's probe, in stages: the reference on the CPU, the run on the target, the outputs copied back, the
// comparison. StagedSamples runs each stage for all the samples it is given before the next: one sample at a time,
// or on CUDA all of a probe's (Note [Samples in one round trip]).
class SampleProbe {
 public:
  SampleProbe(const ProbeTarget& target, const c10::OperatorHandle& op, c10::ScalarType dtype,
              const SampleInputs& inputs)
      : target_(target), op_(op), dtype_(dtype), inputs_(inputs) {}

  SampleOutcome out;
  bool decided = false;  // `out` is the outcome; the stages after are not run

  // The inputs the target gets first, then the reference.
  void reference();

  // The plain inputs for a CUDA device.
  void rest_of_inputs();

  // The traced run on the target.
  void run_on_target(const std::function<void()>& before_target);

  // A crash that ended the process's work (not one it went on from).
  bool crashed() const { return decided && out.verdict == Verdict::kCrash && !out.survived; }

  // Starts copying the outputs back; the copies from a CUDA device are done once each device in `wait_for` is waited
  // for (wait_for_copies()).
  void copy_back(std::vector<c10::Device>& wait_for);

  // What a stage raised (moving inputs to the target, say) decides the outcome.
  void fail(const std::exception& e);

  // What waiting for the copies back raised decides the outcome.
  void copies_failed(const std::exception& e);

  // The comparison, and the verdict.
  void judge(const Spec& spec, const OpSpec* entry, const std::string& dtype_label);

  // The CPU's result, once reference() computed it.
  const c10::IValue& reference_value() const { return expected_; }

  // A sample whose reference should equal `other` (another sample's, of the same values), to the bit where values are
  // compared, but does not is decided a skip: the CPU's result is no reference.
  void agree_with(const c10::IValue& other, const OpSpec* entry);

 private:
  // The comparison of `actual` with `expected`, as judge() makes it: in the spec's mode for the operator (shapes only
  // on the meta target), within its tolerance.
  Comparison compare_to_reference(const c10::IValue& expected, const c10::IValue& actual, const Spec& spec,
                                  const OpSpec* entry, const std::string& dtype_label);

  // What the CPU said refusing a sample that it should refuse (SampleInputs::cpu_refuses); empty when it took it.
  std::string cpu_refusal_;

  void decide(Verdict verdict, std::string message);

  // As PyTorch's MPS tests do: without a CPU kernel for a low-precision dtype, compute the reference in float32.
  c10::IValue compute_reference();

  const ProbeTarget& target_;
  const c10::OperatorHandle& op_;
  c10::ScalarType dtype_;
  const SampleInputs& inputs_;
  std::vector<c10::IValue> target_args_;
  bool in_float32_ = false;
  c10::IValue expected_, actual_, actual_cpu_;
};

// Waits for the copies to the CPU from `devices`; what that raised, or null.
std::exception_ptr wait_for_devices(const std::vector<c10::Device>& devices);

// Samples whose stages run together: references; then inputs, runs on the target up to one that crashed, copies back
// started; judged once the copies are done.
struct StagedSamples {
  std::vector<SampleProbe> probes;
  size_t run = 0;  // the samples that got as far as the target (none after one that crashed)

  // The references of `samples`.
  void stage_reference(const ProbeTarget& target, const c10::OperatorHandle& op, c10::ScalarType dtype,
                       const std::vector<const SampleInputs*>& samples);

  // Whether a sample goes on to the target.
  bool for_target() const;

  // The rest of the stages, each for all the samples before the next, with a wait of their own: the outcomes of the
  // samples that ran.
  std::vector<SampleOutcome> finish_alone(const std::function<void()>& before_target, const Spec& spec,
                                          const OpSpec* entry, const std::string& dtype_label);

  // The stages of finish_alone() up to the wait, one by one, for a turn of several probes (Note [Probes in one
  // turn] in probe_op.cc): the inputs; the runs on the target up to one that crashed; the copies back, which are done
  // once the devices added to `wait_for` are waited for.
  void stage_inputs();
  void stage_runs(const std::function<void()>& before_target);
  void stage_copy_back(std::vector<c10::Device>& wait_for);

  // The outcomes of the samples that ran, once their copies are done (or failed: `copies_error`, what waiting for
  // them raised).
  std::vector<SampleOutcome> judge(const Spec& spec, const OpSpec* entry, const std::string& dtype_label,
                                   const std::exception_ptr& copies_error);

 private:
  // Runs `f` on each of the first `count` samples whose outcome is not decided yet; what it raises decides it.
  void each(size_t count, const std::function<void(SampleProbe&)>& f);
};

// A sample that ran, as its record keeps it: `index`, its place among the record's samples (skipped ones too).
struct TakenSample {
  SampleOutcome outcome;
  std::string name;
  size_t index = 0;
};

// The record's verdict from the samples that ran on the target, in order: the worst of its own (Note [A record rests
// on its own samples]) decides (on a tie, the first); the others go to r.sample_notes. Sets r's verdict, message,
// sample, fallback_ops and comparison figures, and its basis where that sample's outcome is a limit's; leaves r as it
// is when `taken` is empty.
void decide_record(const std::vector<TakenSample>& taken, ProbeResult& r);

}  // namespace mps_audit::detail
