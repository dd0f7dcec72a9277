// One probe of an operator in a dtype: the samples it tries (the spec's, recorded calls, or synthesized inputs, with
// what earlier dtypes taught synthesis, then the condition samples derived from one of them: Note [Condition samples]
// in condition_samples.cc), each probed in stages by sample_probe.cc (inputs on the CPU, reference on the CPU, the
// same inputs copied to the target, a traced run there, comparison), the verdict of the worst of its own, and the
// probes of an overload in one turn of the GPU.
#include "probe/probe_op.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <exception>
#include <memory>
#include <unordered_map>

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <fmt/format.h>

#include "common/ivalue_tensors.h"
#include "common/text.h"
#include "common/torch_compat.h"
#include "probe/caught_faults.h"
#include "probe/compare.h"
#include "probe/condition_samples.h"
#include "probe/dtypes.h"
#include "probe/inputs.h"
#include "probe/recorded_samples.h"
#include "probe/repros.h"
#include "probe/sample_probe.h"
#include "probe/sample_traits.h"

namespace mps_audit {

using detail::decide_record;
using detail::SampleOutcome;
using detail::StagedSamples;
using detail::wait_for_devices;

namespace {

// What a worker remembers of an operator (an overload) from its earlier dtypes: the synthesis variant that worked and
// how often none did, and the first dtype whose inputs the CPU took (Note [Rejected in one dtype]).
std::unordered_map<std::string, std::pair<size_t, int>>& synthesis_memory() {
  static std::unordered_map<std::string, std::pair<size_t, int>> memory;  // op -> (variant that worked, misses)
  return memory;
}
std::unordered_map<std::string, std::string>& accepted_in() {
  static std::unordered_map<std::string, std::string> accepted;  // operator -> the first dtype the CPU took
  return accepted;
}
// What the condition samples (Note [Condition samples] in condition_samples.cc) of an operator's earlier dtypes taught.
std::unordered_map<std::string, ConditionMemory>& condition_memory() {
  static std::unordered_map<std::string, ConditionMemory> memory;
  return memory;
}

// Note [Probes in one turn]
// A worker holds every dtype of an operator's overload (Note [Worker protocol] in run/worker_protocol.cc), and on CUDA
// (ProbeTarget::in_turns) it probes those it was handed together, in one turn of the GPU (Note [Copies to and from a
// CUDA device] in sample_probe.cc), stage by stage: every probe's CPU references, which decide the samples that go to
// the target; then every probe's inputs copied in; every probe's runs; every probe's copies back; one wait; then each
// probe's samples judged and its record made, in order. What ends a turn is a kernel queued after a copy back, not time
// spent on the CPU between kernels: sixteen processes on one H100, each queueing ten kernels 50 us apart and then their
// ten copies back before a wait, got 6,300 such batches a second between them, nearly as many as of one kernel and its
// copy back (7,200), and ten kernels each followed by its copy back got 740. So with each probe's copies back queued
// before the next probe's runs, a turn of the overload was no faster than a probe at a time (the warm default audit,
// one H100: 7.9-8.3 s against 8.1-8.3 s), and with every copy back after every run it took 7.1-7.4 s
// (docs/benchmarks.md).
// A probe that needs a sample judged before it can go on (the recordings the CPU took, or a synthesized shape,
// turning out to prove nothing when the CPU gives different results from run to run) goes on after the wait, as it
// would alone; the probes after it in the turn began with the shape it tried first, not the one it settled on. A
// fault caught on the target ends the turn with that probe (Note [Caught faults]): the probes after it go back to the
// worker as not begun, and what they taught synthesis is forgotten. What the turn cannot tell apart, its runner
// does: a device that fails takes the outputs of every probe in the turn with it, so those probes run again one at a
// time (Note [Turns that fail] in run/pool.cc).

// One probe, in two parts around the turn its last samples wait for: start() runs it up to their copies back and
// finish() judges them and makes the record. Without `defer`, start() waits for and judges each sample as it goes.
class OpProbe {
 public:
  OpProbe(const ProbeTarget& target, const Spec& spec, const Recordings* recordings, std::string op_name,
          std::string dtype_label, const std::function<void()>& before_target)
      : target_(target),
        spec_(spec),
        recordings_(recordings),
        op_name_(std::move(op_name)),
        dtype_label_(std::move(dtype_label)),
        before_target_([this, before_target] {
          reached_target_ = true;
          if (before_target) before_target();
        }) {}
  OpProbe(const OpProbe&) = delete;
  OpProbe& operator=(const OpProbe&) = delete;

  bool reached_target() const { return reached_target_; }

  // Without `defer`, the whole probe but its record. With it, the probe up to the CPU references of the samples
  // that go to the target: those wait for the turn's stages (inputs_on_target(), run_on_target(), copy_back()).
  void start(bool defer) {
    timed([&] {
      r_.op = op_name_;
      r_.dtype = dtype_label_;
      if (!look_up()) return;
      gather_recordings();
      r_.verdict = Verdict::kSkip;
      run_recordings(defer);
      if (!recorded_staged_ && !any_run_) run_samples(defer);
      stage_conditions(defer);
    });
  }

  // The deferred samples on the target, in the stages of a turn (Note [Probes in one turn]): their inputs; their runs;
  // their copies back, which are done once each device added to `turn` is waited for.
  void inputs_on_target() {
    timed([&] {
      if (recorded_staged_) recorded_staged_->stage_inputs();
      for (Slot& slot : slots_) {
        if (slot.staged) slot.staged->stage_inputs();
      }
      if (conditions_staged_) conditions_staged_->stage_inputs();
    });
  }
  void run_on_target() {
    timed([&] {
      if (recorded_staged_) recorded_staged_->stage_runs(before_target_);
      for (Slot& slot : slots_) {
        ++slots_run_;
        if (!slot.staged) continue;
        slot.staged->stage_runs(before_target_);
        // A crash ends the probe: the samples after it do not run (finish() takes none after it).
        if (slot.staged->probes.front().crashed()) break;
      }
      if (conditions_staged_ && !crashed_in_turn()) conditions_staged_->stage_runs(before_target_);
    });
  }
  void copy_back(std::vector<c10::Device>& turn) {
    timed([&] {
      if (recorded_staged_) recorded_staged_->stage_copy_back(turn);
      for (size_t k = 0; k < slots_run_; ++k) {
        if (slots_[k].staged) slots_[k].staged->stage_copy_back(turn);
      }
      if (conditions_staged_) conditions_staged_->stage_copy_back(turn);
    });
  }

  // The record, once the turn was waited for (`turn_error`: what that raised); `turn_seconds`, this probe's share of
  // the wait.
  ProbeResult finish(const std::exception_ptr& turn_error, double turn_seconds) {
    if (!looked_up_) return r_;
    const auto begun = std::chrono::steady_clock::now();
    if (recorded_staged_) {
      const std::vector<SampleOutcome> outcomes = recorded_staged_->judge(spec_, entry_, dtype_label_, turn_error);
      recorded_staged_.reset();
      for (size_t k = 0; k < outcomes.size(); ++k) take(outcomes[k], recorded_inputs_[k].name);
      if (!any_run_) run_samples(/*defer=*/false);  // no recording the CPU took: synthesis, as alone
    }
    for (Slot& slot : slots_) {
      if (slot.staged) settle(slot, turn_error);
      if (!slot.unsupported.empty()) {
        skip_reason_ = slot.unsupported;
        continue;
      }
      take(*slot.outcome, slot.name);
      // A sample that went on after the turn and crashed: the samples after it would not have run.
      if (slot.outcome->verdict == Verdict::kCrash) break;
    }
    if (conditions_staged_) {
      condition_outcomes_ = conditions_staged_->judge(spec_, entry_, dtype_label_, turn_error);
      conditions_staged_.reset();
    }
    take_conditions(condition_outcomes_);
    conclude();
    spent_ += std::chrono::steady_clock::now() - begun;
    r_.seconds = std::chrono::duration<double>(spent_).count() + turn_seconds;
    return r_;
  }

 private:
  // A sample of the spec's, or synthesized: decided (an outcome, or no inputs to be made), or waiting for the turn.
  struct Slot {
    const SampleSpec* sample = nullptr;
    std::vector<size_t> order;              // the synthesis variants to try, in order
    size_t position = 0;                    // the one tried last
    size_t worked_before = 0;               // what synthesis remembered before trying it
    std::unique_ptr<SampleInputs> inputs;   // the last inputs made
    std::unique_ptr<StagedSamples> staged;  // waiting for the turn
    std::optional<SampleOutcome> outcome;
    std::string name, unsupported;
  };

  // The operator, the spec's entry and the dtype; false, with the record made, when the probe ends here.
  bool look_up() {
    const size_t colons = op_name_.find("::"), dot = op_name_.find('.', colons);
    op_ = c10::Dispatcher::singleton().findOp(
        {op_name_.substr(0, dot), dot == std::string::npos ? "" : op_name_.substr(dot + 1)});
    entry_ = spec_.find(op_name_);
    dtype_ = parse_dtype(dtype_label_);
    if (!op_ || !op_->hasSchema() || !dtype_) {
      r_.message = !op_ ? "no such operator in this libtorch" : "unknown dtype";
      return false;
    }
    if (entry_ && !entry_->skip.empty()) {
      r_.message = "spec: " + entry_->skip;
      return false;
    }
    if (entry_) {
      for (const auto& k : entry_->skip_when) {
        if (k.applies(target_.name, dtype_label_, target_.macos_major, target_.torch_version)) {
          r_.message = "spec: " + k.reason;
          return false;
        }
      }
    }
    looked_up_ = true;
    return true;
  }

  // Without samples in the spec: the calls recorded from PyTorch's OpInfo samples (probe/recorded_samples.h), at
  // most three; synthesis only when there are none or the CPU rejects every one. A program's calls (each distinct
  // one, Recordings::samples_per_probe) are replayed whatever the spec's samples: they are what the replay is of.
  // An out= variant without recordings of its own replays its functional twin's, with out tensors made to match.
  void gather_recordings() {
    const Recordings* recordings = recordings_;
    if (!recordings) return;
    if (entry_ && !entry_->samples.empty() && !recordings->program()) return;
    std::vector<RecordedSample> recorded = recordings->samples(op_name_, dtype_label_);
    const auto twin = recorded.empty() ? functional_twin(op_->schema()) : std::nullopt;
    if (twin) {
      for (auto& rec : recordings->samples(c10::toString(twin->schema().operator_name()), dtype_label_)) {
        SampleInputs twin_inputs;
        twin_inputs.name = rec.name;
        twin_inputs.args = std::move(rec.args);
        try {
          SampleInputs out = out_variant_inputs(op_->schema(), *twin, twin_inputs, *dtype_);
          if (out.unsupported.empty()) recorded.push_back({rec.name + ":twin", std::move(out.args)});
        } catch (const std::exception&) {  // out tensors the CPU cannot make (a block-sparse result): not this one
        }
      }
    }
    for (auto& rec : recorded) {
      recorded_inputs_.emplace_back();
      recorded_inputs_.back().name = rec.name;
      recorded_inputs_.back().args = std::move(rec.args);
    }
  }

  void run_recordings(bool defer) {
    if (recorded_inputs_.empty()) return;
    if (!target_.in_turns) {
      for (const SampleInputs& inputs : recorded_inputs_) {
        if (crashed_) break;
        StagedSamples staged;
        staged.stage_reference(target_, *op_, *dtype_, {&inputs});
        if (!staged.probes.front().decided) consider_base(inputs, staged.probes.front());
        take(staged.finish_alone(before_target_, spec_, entry_, dtype_label_).front(), inputs.name);
      }
      return;
    }
    // Note [Samples in one round trip] in sample_probe.cc
    std::vector<const SampleInputs*> samples;
    for (const SampleInputs& inputs : recorded_inputs_) samples.push_back(&inputs);
    auto staged = std::make_unique<StagedSamples>();
    staged->stage_reference(target_, *op_, *dtype_, samples);
    for (size_t k = 0; k < staged->probes.size(); ++k) {
      if (!staged->probes[k].decided) consider_base(recorded_inputs_[k], staged->probes[k]);
    }
    if (defer && staged->for_target()) {
      recorded_staged_ = std::move(staged);
      return;
    }
    const std::vector<SampleOutcome> outcomes = staged->finish_alone(before_target_, spec_, entry_, dtype_label_);
    for (size_t k = 0; k < outcomes.size(); ++k) take(outcomes[k], recorded_inputs_[k].name);
  }

  // The spec's samples, or a synthesized one.
  void run_samples(bool defer) {
    std::vector<const SampleSpec*> samples;
    if (entry_) {
      for (const auto& s : entry_->samples) samples.push_back(&s);
    }
    synthesized_ = samples.empty();
    if (synthesized_) {
      samples.push_back(nullptr);
      variants_ = synthesis_variants(op_->schema());
    }
    for (const SampleSpec* sample : samples) {
      if (crashed_) break;
      // Without a sample in the spec, synthesis tries other shapes until the CPU takes the inputs, starting with the
      // one that worked for this operator in another dtype. An operator no variant suits, twice, gets only the
      // default afterwards: every failed try costs a C++ exception.
      std::vector<size_t> order;
      if (synthesized_) {
        auto& [worked, misses] = synthesis_memory()[op_name_];
        order.push_back(worked);
        for (size_t v = 0; v < variants_.size() && misses < 2; ++v) {
          if (v != worked) order.push_back(v);
        }
      } else {
        order.push_back(0);
      }
      Slot slot = try_variants(sample, std::move(order), 0, SampleOutcome(), defer);
      crashed_ = crashed_ || (slot.outcome && slot.outcome->verdict == Verdict::kCrash);
      slots_.push_back(std::move(slot));
    }
  }

  // Tries the slot's variants from `from` on until the CPU takes the inputs; `o`, the outcome before. With `defer`,
  // inputs the CPU takes wait for the turn's stages.
  Slot try_variants(const SampleSpec* sample, std::vector<size_t> order, size_t from, SampleOutcome o, bool defer) {
    Slot slot;
    slot.sample = sample;
    slot.order = std::move(order);
    for (size_t p = from; p < slot.order.size(); ++p) {
      const size_t v = slot.order[p];
      slot.inputs = std::make_unique<SampleInputs>();
      try {
        *slot.inputs = make_inputs(op_->schema(), *dtype_, spec_, sample, op_name_ + "/" + dtype_label_,
                                   synthesized_ ? &variants_[v] : nullptr);
      } catch (const std::exception& e) {  // making them ran the CPU: an out= variant's twin, a backward's forward
        *slot.inputs = SampleInputs();
        o = SampleOutcome();
        o.verdict = Verdict::kSkip;
        o.message = "no reference: the CPU raised: " + error_text(e);
        continue;
      }
      if (!slot.inputs->unsupported.empty()) break;
      auto staged = std::make_unique<StagedSamples>();
      staged->stage_reference(target_, *op_, *dtype_, {slot.inputs.get()});
      if (!staged->probes.front().decided) consider_base(*slot.inputs, staged->probes.front());
      if (defer && staged->for_target()) {
        slot.staged = std::move(staged);
        slot.position = p;
        if (synthesized_) {
          auto& worked = synthesis_memory()[op_name_].first;
          slot.worked_before = worked;
          worked = v;
        }
        return slot;
      }
      o = staged->finish_alone(before_target_, spec_, entry_, dtype_label_).front();
      if (o.verdict != Verdict::kSkip) {
        if (synthesized_) synthesis_memory()[op_name_].first = v;
        break;
      }
    }
    if (synthesized_ && o.verdict == Verdict::kSkip) ++synthesis_memory()[op_name_].second;
    if (slot.inputs && !slot.inputs->unsupported.empty()) {
      slot.unsupported = slot.inputs->unsupported;
    } else {
      slot.name = slot.inputs ? slot.inputs->name : "";
      slot.outcome = o;
    }
    return slot;
  }

  // Judges a slot that waited for the turn; a synthesized sample that proves nothing tries the next shape, as alone.
  void settle(Slot& slot, const std::exception_ptr& turn_error) {
    const SampleOutcome o = slot.staged->judge(spec_, entry_, dtype_label_, turn_error).front();
    slot.staged.reset();
    if (synthesized_ && o.verdict == Verdict::kSkip) {
      synthesis_memory()[op_name_].first = slot.worked_before;
      slot = try_variants(slot.sample, std::move(slot.order), slot.position + 1, o, /*defer=*/false);
      return;
    }
    slot.name = slot.inputs->name;
    slot.outcome = o;
  }

  // A sample the CPU took, before it runs on the target: the base of the probe's condition samples (Note [Condition
  // samples] in condition_samples.cc) if it is the first, or the first that is better: without an operand of another
  // dtype (a complex or float64 one, which a target may refuse whatever the condition), then with a tensor of two
  // elements or more (a recording of 0-d tensors meets few conditions).
  void consider_base(const SampleInputs& inputs, const detail::SampleProbe& probe) {
    if (conditions_closed_ || base_score_ == 3) return;
    bool rich = false;
    for (const c10::IValue& v : inputs.args) {
      map_tensors(v, [&](const at::Tensor& t) {
        rich = rich || (t.defined() && t.numel() >= 2);
        return t;
      });
    }
    const int score = (wide_operand(op_->schema(), inputs.args, *dtype_) ? 0 : 2) + (rich ? 1 : 0);
    if (score <= base_score_) return;
    base_score_ = score;
    base_reference_ = probe.reference_value();
    base_.name = inputs.name;
    base_.args = inputs.args;
    // The CPU target runs a sample on its own tensors, in place for an in-place operator: the base is kept as it was.
    if (target_.device.is_cpu()) {
      for (c10::IValue& v : base_.args) {
        v = map_tensors(v, [](const at::Tensor& t) {
          return t.defined() && !t.unsafeGetTensorImpl()->is_wrapped_number() ? t.clone() : t;
        });
      }
    }
  }

  // The condition samples, once the probe's own samples are made: their references now; the rest with the turn when
  // `defer`, else now. Those whose reference the CPU refused are dropped, and the operator's later dtypes do not try
  // their conditions.
  void stage_conditions(bool defer) {
    conditions_closed_ = true;
    // A program's calls (`mps-audit model --calls`) are replayed for what they do, over the program's own inputs.
    const Recordings* recordings = recordings_;
    if (crashed_ || (recordings && recordings->program())) return;
    ConditionMemory& memory = condition_memory()[op_name_];
    if (base_score_ >= 0) {
      for (auto& c : condition_samples(*op_, *dtype_, base_, memory)) conditions_.push_back(std::move(c));
    }
    // And the known bugs' own calls of the operator (Note [Known bugs' own calls] in repros.cc), whether or not a
    // sample of the probe's own gave a base: a thread's call is well-formed where synthesis found none (attention's
    // shapes). Those too large to run have their outcomes already.
    for (auto& c : repro_samples(*op_, op_name_, *dtype_, dtype_label_, spec_, meta_repros_)) {
      conditions_.push_back(std::move(c));
    }
    if (conditions_.empty()) return;
    std::vector<const SampleInputs*> samples;
    for (const ConditionSample& c : conditions_) samples.push_back(&c.inputs);
    auto staged = std::make_unique<StagedSamples>();
    staged->stage_reference(target_, *op_, *dtype_, samples);
    for (size_t k = 0; k < staged->probes.size(); ++k) {
      detail::SampleProbe& p = staged->probes[k];
      // A view of the base's values must give the CPU the base's result (Note [Views on the target] in
      // sample_probe.cc): where it does not, the CPU's kernel mishandles the view, and the reference is not one. A
      // known bug's own call is no view of the base: its values are its own.
      if (conditions_[k].inputs.keep_views && conditions_[k].condition != Condition::kRepro) {
        p.agree_with(base_reference_, entry_);
      }
      if (p.decided && p.out.verdict == Verdict::kSkip) memory.refused |= condition_bit(conditions_[k].condition);
    }
    if (!staged->for_target()) return;
    if (defer) {
      conditions_staged_ = std::move(staged);
      return;
    }
    condition_outcomes_ = staged->finish_alone(before_target_, spec_, entry_, dtype_label_);
  }

  // The condition samples' outcomes, after those of the probe's own samples, each its own (ProbeResult::conditions):
  // the record's verdict is its ordinary samples'. Those whose reference the CPU refused are not the record's. A crash
  // is the record's: it ends the worker on a device, whatever the sample (Note [Condition samples]); but one the
  // emulator went on from (a limit of MPS, SampleOutcome::survived) is its condition's. A sample refused
  // for an operand of another dtype is a note, as among the ordinary samples.
  void take_conditions(const std::vector<SampleOutcome>& outcomes) {
    if (!crashed_) {
      for (auto& c : meta_repros_) r_.conditions.push_back(std::move(c));
    }
    for (size_t k = 0; k < outcomes.size() && !crashed_; ++k) {
      const SampleOutcome& o = outcomes[k];
      const std::string& name = conditions_[k].inputs.name;
      if (o.verdict == Verdict::kSkip) continue;
      if (o.verdict == Verdict::kCrash && !o.survived) {
        take(o, name);
        continue;
      }
      const int index = r_.samples++;
      for (const auto& w : o.warnings) add_warning(w);
      if (o.other_dtype) {
        r_.sample_notes.push_back(fmt::format("sample {}: {}: {}", index, to_string(o.verdict), o.message));
        continue;
      }
      ConditionOutcome c;
      c.condition = std::string(condition_name(conditions_[k].condition));
      c.sample = name;
      c.verdict = o.verdict;
      c.message = o.message;
      if (o.by_limit) c.basis = kBasisLimits;
      c.fallback_ops = o.fallback_ops;
      c.traits = o.traits;
      r_.conditions.push_back(std::move(c));
    }
  }

  void add_warning(std::string w) {
    w = first_line(w);
    if (r_.warnings.size() < 8 && std::find(r_.warnings.begin(), r_.warnings.end(), w) == r_.warnings.end()) {
      r_.warnings.push_back(w);
    }
  }

  // Whether a sample crashed in this probe's part of the turn so far.
  bool crashed_in_turn() const {
    if (crashed_) return true;
    if (recorded_staged_) {
      for (size_t k = 0; k < recorded_staged_->run; ++k) {
        if (recorded_staged_->probes[k].crashed()) return true;
      }
    }
    for (size_t k = 0; k < slots_run_; ++k) {
      if (slots_[k].staged && slots_[k].staged->probes.front().crashed()) return true;
    }
    return false;
  }

  // Each sample that ran is kept for the verdict (decide_record()). A crash ends the probe, as it would have ended
  // the process had it not been caught.
  void take(const SampleOutcome& o, const std::string& name) {
    const size_t index = r_.samples++;
    crashed_ = crashed_ || o.verdict == Verdict::kCrash;
    for (const auto& w : o.warnings) add_warning(w);
    if (o.verdict == Verdict::kSkip) {
      // A sample the target ran but the tool could not judge says more than a later one the CPU rejected.
      if (skip_reason_.rfind("not judged: ", 0) != 0) skip_reason_ = o.message;
      return;
    }
    any_run_ = true;
    r_.traits.merge(o.traits);
    // A program's call keeps its own traits: a known bug meets the calls whose arguments meet its condition.
    if (recordings_ && recordings_->program() && name.rfind("call:", 0) == 0) r_.call_traits[name] = o.traits;
    taken_.push_back({o, name, index});
  }

  void conclude() {
    decide_record(taken_, r_);
    if (!any_run_) r_.message = skip_reason_;

    // Note [Rejected in one dtype]
    // A worker probes every dtype of an operator in plan order. When the CPU took the operator's inputs in an earlier
    // dtype (synthesis tries the shapes that worked there first) and rejects them in this one, it is the dtype the
    // CPU does not take, whatever the error says ("A must be batches of square matrices" for int64 linalg_cholesky).
    if (r_.verdict != Verdict::kSkip) {
      accepted_in().emplace(op_name_, dtype_label_);
    } else if (const auto it = accepted_in().find(op_name_); it != accepted_in().end() && it->second != dtype_label_ &&
                                                             mps_audit::skip_reason(r_) == "cpu_rejects_inputs") {
      const std::string raised = "no reference: the CPU raised: ";
      const std::string why = r_.message.rfind(raised, 0) == 0 ? r_.message.substr(raised.size()) : r_.message;
      r_.message = fmt::format("no reference: the CPU takes this operator's inputs in {} but not in {}: {}", it->second,
                               dtype_label_, why);
    }

    if (entry_ && r_.verdict != Verdict::kSkip) {
      for (const auto& k : entry_->xfail) {
        if (!k.applies(target_.name, dtype_label_, target_.macos_major, target_.torch_version)) continue;
        const bool failed = r_.verdict != Verdict::kPass && r_.verdict != Verdict::kFallback;
        r_.message = failed ? fmt::format("expected failure ({}): {}", k.reason, r_.message)
                            : fmt::format("passed, though the spec expects a failure: {}", k.reason);
        r_.verdict = failed ? Verdict::kXfail : Verdict::kXpass;
        break;
      }
    }
  }

  const ProbeTarget& target_;
  const Spec& spec_;
  const Recordings* recordings_;  // the recorded samples replayed, or none
  const std::string op_name_, dtype_label_;
  const std::function<void()> before_target_;
  c10::optional<c10::OperatorHandle> op_;  // what findOp() gives, in either libtorch
  const OpSpec* entry_ = nullptr;
  std::optional<c10::ScalarType> dtype_;
  bool looked_up_ = false, reached_target_ = false;
  ProbeResult r_;
  bool any_run_ = false, crashed_ = false, synthesized_ = false;
  std::string skip_reason_;
  std::deque<SampleInputs> recorded_inputs_;
  std::unique_ptr<StagedSamples> recorded_staged_;  // the recordings' samples, waiting for the turn
  std::vector<Synthesis> variants_;
  std::vector<Slot> slots_;
  std::chrono::steady_clock::duration spent_{};
  size_t slots_run_ = 0;                    // the slots whose samples got as far as the target in a turn
  std::vector<detail::TakenSample> taken_;  // the samples that ran, in order
  // The condition samples, derived from the base (consider_base()) when stage_conditions() closes the choice.
  std::deque<ConditionSample> conditions_;
  std::unique_ptr<StagedSamples> conditions_staged_;  // waiting for the turn
  std::vector<SampleOutcome> condition_outcomes_;     // once run
  std::vector<ConditionOutcome> meta_repros_;         // the known bugs' own calls too large to run: shapes only
  SampleInputs base_;                                 // the sample the condition samples are derived from
  c10::IValue base_reference_;                        // its result on the CPU
  bool conditions_closed_ = false;
  int base_score_ = -1;  // of the base chosen so far (consider_base())

  // Runs `f`, counting its time as this probe's.
  void timed(const std::function<void()>& f) {
    const auto begun = std::chrono::steady_clock::now();
    f();
    spent_ += std::chrono::steady_clock::now() - begun;
  }
};

}  // namespace

std::vector<ProbeResult> probe_ops(const ProbeTarget& target, const Spec& spec, const Recordings* recordings,
                                   const std::vector<ProbeRequest>& requests, const ProbeMark& mark) {
  std::deque<OpProbe> probes;
  std::vector<std::optional<std::pair<size_t, int>>> remembered;  // synthesis's memory before each probe
  const size_t caught_before = faults_caught();
  for (size_t k = 0; k < requests.size(); ++k) {
    if (mark) mark(k, ProbeStage::kReference);
    const auto& memory = synthesis_memory();
    const auto it = memory.find(requests[k].op);
    remembered.push_back(it == memory.end() ? std::nullopt : std::make_optional(it->second));
    probes.emplace_back(target, spec, recordings, requests[k].op, requests[k].dtype, [&mark, k] {
      if (mark) mark(k, ProbeStage::kTarget);
    });
    probes.back().start(target.in_turns);
    if (faults_caught() != caught_before) break;
  }
  std::vector<c10::Device> turn;
  // A process that dies while it copies the turn's inputs in or its outputs back names no probe.
  if (mark && probes.size() > 1) mark(0, ProbeStage::kTurn);
  if (target.in_turns) {
    for (auto& p : probes) p.inputs_on_target();
    for (size_t k = 0; k < probes.size(); ++k) {
      if (mark) mark(k, ProbeStage::kReference);
      probes[k].run_on_target();
      if (faults_caught() == caught_before || k + 1 == probes.size()) continue;
      // A fault caught ends the turn here (Note [Probes in one turn]): the probes after it go as if not begun.
      auto& memory = synthesis_memory();
      if (remembered[k + 1]) {
        memory[requests[k + 1].op] = *remembered[k + 1];
      } else {
        memory.erase(requests[k + 1].op);
      }
      while (probes.size() > k + 1) probes.pop_back();
    }
    if (mark && probes.size() > 1) mark(0, ProbeStage::kTurn);
    for (auto& p : probes) p.copy_back(turn);
  }
  const auto begun = std::chrono::steady_clock::now();
  const std::exception_ptr turn_error = wait_for_devices(turn);
  const double share = std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count() /
                       static_cast<double>(probes.size());
  std::vector<ProbeResult> results;
  for (size_t k = 0; k < probes.size(); ++k) {
    if (mark && probes.size() > 1) mark(k, probes[k].reached_target() ? ProbeStage::kTarget : ProbeStage::kReference);
    results.push_back(probes[k].finish(turn_error, share));
  }
  return results;
}

void forget_operators() {
  synthesis_memory().clear();
  accepted_in().clear();
  condition_memory().clear();
}

ProbeResult probe_op(const ProbeTarget& target, const Spec& spec, const std::string& op, const std::string& dtype,
                     const std::function<void()>& before_target) {
  return probe_ops(target, spec, process_recordings(), {{op, dtype}},
                   [&](size_t, ProbeStage stage) {
                     if (stage == ProbeStage::kTarget && before_target) before_target();
                   })
      .front();
}

}  // namespace mps_audit
