// Runs a TorchScript model on the CPU and on a target and traces the target's operators: see model_audit.h. The
// audit runs in a process of its own (Note [Model audit in a child process] in audit_process.cc).
//
// Note [Training on emulated MPS]
// libtorch 2.x's autograd engine waits, before each backward node, for the stream its incoming gradients were made
// on, whenever they live on an accelerator's device type (MPS is one), and takes those streams from the process's
// accelerator. So the audit process of `--target mps-emu` makes emulated MPS its accelerator before anything asks
// libtorch about devices (Note [Emulated MPS as the accelerator] in emu/emulated_accelerator.cc), hiding CUDA from
// itself as a Mac has none; libtorch 1.13's engine asks for no accelerator. Where emulated MPS cannot be the
// accelerator (--target auto on a libtorch with CUDA built in: CUDA's hooks are made while the target is chosen;
// libtorch 2.0 to 2.5), --train on mps-emu is refused rather than reported as a model that fails in its backward pass.
#include "model/model_audit.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <utility>

#include <ATen/ops/cross_entropy_loss.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/serialization/import.h>
#include <nlohmann/json.hpp>

#include "common/diagnostics.h"
#include "common/flags.h"
#include "common/ivalue_tensors.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "common/text.h"
#include "common/torch_compat.h"
#include "emu/emulated_accelerator.h"
#include "emu/enforced_limits.h"
#include "emu/expectations.h"
#include "emu/expected_verdicts.h"
#include "emu/mps_emulator.h"
#include "model/audit_process.h"
#include "model/model_inputs.h"
#include "model/model_records.h"
#include "model/mps_only_kernels.h"
#include "model/optimizer_step.h"
#include "model/trace_summary.h"
#include "probe/compare.h"
#include "probe/dispatch_trace.h"
#include "registry/release_data.h"
#include "report/model_reports.h"
#include "run/stop_signals.h"
#include "targets/host.h"
#include "targets/targets.h"

namespace mps_audit {
namespace {

// The line of an exception that says what went wrong. The TorchScript interpreter wraps errors in a traceback
// ("The following operation failed in the TorchScript interpreter. ... RuntimeError: what"): the last
// "...Error: " line of it is the operator's own message.
std::string error_text(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  const std::string text = c10_error ? c10_error->what_without_backtrace() : e.what();
  if (text.find("failed in the TorchScript interpreter") != std::string::npos) {
    static const std::regex error_line(R"((?:^|\n)([A-Za-z.]*(?:Error|Exception): [^\n]*))");
    std::string last;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), error_line); it != std::sregex_iterator(); ++it) {
      last = (*it)[1].str();
    }
    if (!last.empty()) return first_line(last, /*trim_trailing_spaces=*/true);
  }
  return first_line(text, /*trim_trailing_spaces=*/true);
}

at::Tensor first_tensor(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor();
  if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) {
      if (e.isTensor()) return e.toTensor();
    }
  }
  if (v.isTensorList() && !v.toTensorVector().empty()) return v.toTensorVector()[0];
  return at::Tensor();
}

// One pass of the model on one device: a forward, or a training step (forward, loss, backward, SGD step).
// `mark(phase)` is called as each phase ends, so that the trace can be cut into phases.
struct PassResult {
  c10::IValue output;
  at::Tensor loss;
  std::vector<std::string> names;
  std::vector<at::Tensor> grads, updated;
};

// Fills `r` as it goes, so that what was done before an exception stays.
void run_pass(torch::jit::Module& module, const std::vector<c10::IValue>& inputs, const at::Tensor& labels,
              const ModelOptions& o, const std::function<void(const char*)>& mark, PassResult& r) {
  std::vector<at::Tensor> params;
  if (o.train) {
    module.train(true);
    for (const auto& p : module.named_parameters(/*recurse=*/true)) {
      r.names.push_back(p.name);
      params.push_back(p.value);
      p.value.requires_grad_(true);
    }
  }
  r.output = module.forward(inputs);
  mark("forward");
  if (!o.train) return;
  const at::Tensor logits = first_tensor(r.output);
  if (!logits.defined()) throw std::runtime_error("--train: the model's output holds no tensor to take a loss of");
  r.loss = o.target_classes > 0 ? at::cross_entropy_loss(logits, labels) : logits.sum();
  mark("loss");
  r.loss.backward();
  mark("backward");
  const Optimizer optimizer = *parse_optimizer(o.optimizer);
  optimizer_step(optimizer, o.lr.value_or(default_learning_rate(optimizer)), params);
  mark("optimizer");
  for (auto& p : params) {
    r.grads.push_back(p.grad().defined() ? p.grad().detach() : at::Tensor());
    r.updated.push_back(p.detach());
  }
}

// The phase that begins when `done` ends (a forward pass has one phase).
const char* next_phase(const std::string& done, bool train) {
  if (!train) return "forward";
  return done == "forward" ? "loss" : done == "loss" ? "backward" : "optimizer";
}

at::Tensor to_cpu(const at::Tensor& t) {
  return t.defined() ? t.detach().to(c10::kCPU) : t;
}

Match compare(const c10::IValue& expected, const c10::IValue& actual) {
  Match m;
  m.compared = true;
  const c10::IValue on_cpu = map_tensors(actual, [](const at::Tensor& t) { return to_cpu(t); });
  const Comparison c = compare_outputs(expected, on_cpu, CompareMode::kValues);
  m.match = c.equal;
  m.message = c.message;
  m.max_abs_error = c.max_abs_error;
  m.max_rel_error = c.max_rel_error;
  return m;
}

bool is_unsupported(const std::exception& e) {
  return dynamic_cast<const c10::NotImplementedError*>(&e) || dynamic_cast<const c10::TypeError*>(&e);
}

// The calls of a trace (see TraceOptions::keep_call_outputs) with their phases, keyed by operator, phase and
// occurrence, in the order they started.
struct TracedCall {
  size_t index;
  std::string key;  // "aten::relu forward #2"
};

std::vector<TracedCall> traced_calls(const std::vector<TraceEvent>& events,
                                     const std::vector<std::pair<std::string, size_t>>& phase_ends) {
  std::vector<TracedCall> calls;
  std::map<std::string, int> seen;
  for (size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    const bool wrapped = e.parent >= 0 && events[static_cast<size_t>(e.parent)].name.rfind("autograd::", 0) == 0;
    if ((e.parent >= 0 && !wrapped) || e.name.rfind("autograd::", 0) == 0) continue;
    std::string phase;
    for (const auto& [name, end] : phase_ends) {
      if (i < end) {
        phase = name;
        break;
      }
    }
    if (phase.empty()) continue;
    const std::string base = e.name + " " + phase;
    calls.push_back({i, fmt::format("{} #{}", base, ++seen[base])});
  }
  return calls;
}

// The first call on the target (in the order calls started) whose outputs differ from those of the same call on the
// CPU (same operator, phase and occurrence). Calls the CPU did not make — the CPU decomposes some operators that MPS
// runs whole, so its backward pass may call other operators — are not compared.
CallMismatch first_mismatching_call(const std::vector<TraceEvent>& cpu_events,
                                    const std::vector<std::pair<std::string, size_t>>& cpu_phase_ends,
                                    const std::vector<TraceEvent>& events,
                                    const std::vector<std::pair<std::string, size_t>>& phase_ends) {
  std::map<std::string, size_t> on_cpu;
  for (const auto& c : traced_calls(cpu_events, cpu_phase_ends)) on_cpu[c.key] = c.index;
  for (const auto& c : traced_calls(events, phase_ends)) {
    const auto it = on_cpu.find(c.key);
    if (it == on_cpu.end()) continue;
    const auto& expected = cpu_events[it->second].outputs;
    const auto& actual = events[c.index].outputs;
    if (expected.size() != actual.size()) continue;
    for (size_t k = 0; k < expected.size(); ++k) {
      const Comparison cmp = compare_outputs(expected[k], actual[k], CompareMode::kValues);
      if (!cmp.equal) return {static_cast<long>(c.index), cmp};
    }
  }
  return {};
}

// PyTorch's own expectations of real MPS for each call (Note [Expected verdicts] in emu/expected_verdicts.cc), and the
// known bugs: read once, before an emulated MPS is activated (its macOS is theirs), and attached to the calls.
emu::RunExpectations model_evidence(const Target& target, const RunEnvironment& host) {
  return emu::run_expectations(emu::expectation_mode("auto", target), target, host.macos,
                               target.real_mps() ? host.chip : "");
}

// Those of each call's operator, and in a training step, for a forward call, those of its gradient, since backward
// runs through it.
void attach_expectations(ModelAudit& audit, const emu::RunExpectations& expecting) {
  if (expecting.known_bugs) {
    for (auto& c : audit.ops) {
      ProbeResult notes;
      notes.op = c.op;
      notes.dtype = c.dtype;
      notes.verdict = Verdict::kFallback;  // a verdict no known bug changes: they are only carried
      emu::apply_known_bugs(notes, *expecting.known_bugs, expecting.release, expecting.mac, expecting.mode);
      c.known_bugs = std::move(notes.known_bugs);
    }
  }
  if (!expecting.expectations) return;
  expecting.describe(audit.environment);
  const emu::Expectations& expectations = *expecting.expectations;
  const emu::MacosVersion macos = expecting.version;
  for (auto& c : audit.ops) {
    c.expectation = emu::expectation_for(expectations, c.op, c.dtype, emu::ExpectationScope::kForward, macos);
    if (!c.expectation && audit.train && c.phase == "forward") {
      c.expectation = emu::expectation_for(expectations, c.op, c.dtype, emu::ExpectationScope::kGradient, macos);
    }
  }
}

torch::jit::Module load_model(const std::string& path) {
  if (!path_exists(path)) throw UserError("no such file", {path});
  if (is_directory(path)) throw UserError("a folder, not a TorchScript file", {path});
  try {
    return torch::jit::load(path, c10::Device(c10::kCPU));
  } catch (const std::exception& e) {
    throw UserError("not a TorchScript file (torch::jit::load: " + error_text(e) + ")", {path});
  }
}

ModelOptions checked_options(const ModelOptions& requested) {
  ModelOptions o = requested;
  check_target_request(o.target);
  check_choice("--fallback", o.fallback, {"on", "off"});
  check_choices("--format", o.formats, {"json", "md", "html"});
  if (o.train && o.lr && !(*o.lr > 0)) bad_flag("--lr", fmt::format("{}", *o.lr), "a positive learning rate");
  check_choice("--optimizer", o.optimizer, {"sgd", "adam", "adamw"});
  check_at_least("--input-high", o.input_high, 1);
  check_positive_seconds("--timeout", o.timeout_s);
  for (const auto& text : o.inputs) parse_input(text);
  return o;
}

// What the audit ran, as the reports say it: the model, its inputs, the training step's loss and optimizer.
void describe_run(ModelAudit& audit, const ModelOptions& o) {
  audit.model = o.model;
  audit.train = o.train;
  for (const auto& text : o.inputs) audit.inputs.push_back(parse_input(text).text);
  if (!o.train) return;
  const Optimizer optimizer = *parse_optimizer(o.optimizer);
  audit.optimizer = std::string(to_string(optimizer));
  audit.lr = o.lr.value_or(default_learning_rate(optimizer));
  audit.loss = o.target_classes > 0 ? fmt::format("cross_entropy ({} classes)", o.target_classes) : "sum";
}

void write_reports(const ModelAudit& audit, const ModelOptions& o, std::ostream& out) {
  const std::vector<std::string> written = write_model_files(o.formats, o.out_dir, [&](const std::string& f) {
    return f == "json" ? render_model_json(audit, model_records(audit))
           : f == "md" ? render_model_markdown(audit)
                       : render_model_html(audit);
  });
  out << render_model_summary(audit);
  out << fmt::format("reports: {}\n", fmt::join(written, ", "));
}

// The target, made once this process knows its host. An emulated MPS named by --target becomes this process's
// accelerator before describe_host asks libtorch about CUDA (Note [Training on emulated MPS]).
Target prepare_target(const ModelOptions& o, ModelAudit& audit) {
  const bool named_emulated = target_kind_named(o.target.target) == TargetKind::kMpsEmu;
  std::string not_the_accelerator;
  if (named_emulated) not_the_accelerator = emu::make_emulated_mps_the_accelerator();
  describe_host(audit.environment);
  const Target target = make_model_target(o.target, audit.environment);
  if (target.emulated() && !named_emulated) not_the_accelerator = emu::make_emulated_mps_the_accelerator();
  if (o.train && target.emulated() && !not_the_accelerator.empty()) {
    throw UserError(fmt::format(
        "--train on mps-emu: emulated MPS cannot be this process's accelerator, which the autograd engine of libtorch "
        "{} needs for a backward pass on it: {}{}",
        compat::kTorchVersion, not_the_accelerator,
        named_emulated ? "" : " (name --target mps-emu, so that CUDA is hidden from the audit first)"));
  }
  return target;
}

// The model and what it is called with, on the CPU; the target gets copies.
struct ModelCall {
  torch::jit::Module module;
  std::vector<c10::IValue> inputs;
  at::Tensor labels;  // --train with --target-classes
};

ModelCall load_model_call(const ModelOptions& o, ModelAudit& audit) {
  ModelCall call{load_model(o.model), {}, {}};
  auto method = call.module.find_method("forward");
  if (!method) throw UserError("the TorchScript module has no forward method", {o.model});
  const auto& arguments = method->function().getSchema().arguments();
  std::vector<std::string> wanted;
  for (size_t i = 1; i < arguments.size(); ++i) {
    if (!arguments[i].default_value()) wanted.push_back(arguments[i].name());
  }
  if (o.inputs.size() < wanted.size() || o.inputs.size() + 1 > arguments.size()) {
    throw UserError(fmt::format("{}: forward({}) takes {} input{}, given {} --input", o.model, fmt::join(wanted, ", "),
                                wanted.size(), wanted.size() == 1 ? "" : "s", o.inputs.size()));
  }
  std::vector<InputSpec> specs;
  for (const auto& text : o.inputs) specs.push_back(parse_input(text));
  describe_run(audit, o);
  call.inputs = make_inputs(specs, o.input_high, o.seed);
  if (o.train && o.target_classes > 0) call.labels = make_labels(specs, o.target_classes, o.seed);
  return call;
}

// One pass of the model, traced: what it computed, the operators it called and where each phase ended; on the target,
// where it failed and whether by refusing.
struct TracedPass {
  PassResult result;
  std::vector<TraceEvent> events;
  std::vector<std::pair<std::string, size_t>> phase_ends;
  long failed_event = -1;  // the call the failure belongs to
  bool unsupported = false;
};

// The reference. Whatever fails here is the model's or the inputs' fault, not the target's.
TracedPass reference_pass(const ModelOptions& o, ModelCall& call, ModelAudit& audit, ProgressWriter& progress) {
  TracedPass pass;
  progress.stage("cpu");
  progress.phase("forward");
  const auto t0 = std::chrono::steady_clock::now();
  try {
    DispatchTrace trace(TraceOptions{/*details=*/false, /*keep_call_outputs=*/true});
    run_pass(
        call.module, call.inputs, call.labels, o,
        [&](const char* done) {
          pass.phase_ends.emplace_back(done, trace.events().size());
          progress.phase(next_phase(done, o.train));
        },
        pass.result);
    pass.events = trace.events();
  } catch (const std::exception& e) {
    throw UserError(fmt::format("{}: the model fails on the CPU with --input {}: {}", o.model,
                                fmt::join(audit.inputs, " --input "), error_text(e)));
  }
  audit.cpu_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return pass;
}

// The model on the target, from a fresh copy: its failure is a finding (audit.target_error), and what it warned.
TracedPass target_pass(const ModelOptions& o, const ModelCall& call, c10::Device device, ModelAudit& audit,
                       ProgressWriter& progress) {
  TracedPass pass;
  torch::jit::Module module = load_model(o.model);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<c10::IValue> inputs;
  at::Tensor labels;
  try {
    module.to(device);
    for (const auto& v : call.inputs) inputs.push_back(v.toTensor().to(device));
    if (call.labels.defined()) labels = call.labels.to(device);
  } catch (const std::exception& e) {
    audit.target_error = "moving the model or its inputs to the target: " + error_text(e);
    audit.failed_phase = "setup";
    pass.unsupported = is_unsupported(e);
  }
  if (audit.target_error.empty()) {
    compat::CollectingWarningHandler warnings;
    compat::torch_warnings::WarningHandlerGuard guard(&warnings);
    DispatchTrace trace(TraceOptions{/*details=*/true, /*keep_call_outputs=*/true});
    std::string phase = "forward";
    progress.phase("forward");
    try {
      run_pass(
          module, inputs, labels, o,
          [&](const char* done) {
            pass.phase_ends.emplace_back(done, trace.events().size());
            phase = next_phase(done, o.train);
            progress.phase(phase.c_str());
          },
          pass.result);
    } catch (const std::exception& e) {
      audit.target_error = error_text(e);
      audit.failed_phase = phase;
      pass.unsupported = is_unsupported(e);
      // A limit of MPS at which a Mac's process aborts (emu/mps_limits.h): the emulated one went on from it.
      if (std::string abort = emu::take_limit_abort(); !abort.empty()) {
        audit.target_error = std::move(abort);
        audit.target_ended = "crash";
      }
    }
    pass.events = trace.events();
    if (!audit.target_error.empty()) {
      pass.phase_ends.emplace_back(audit.failed_phase, pass.events.size());
      // The call that raised is the one the last operator started belongs to (end callbacks ran as the
      // exception unwound them, so the trace does not say which ended by raising).
      pass.failed_event = pass.events.empty() ? -1 : static_cast<long>(pass.events.size() - 1);
    }
    for (auto& w : warnings.messages) {
      w = first_line(w, /*trim_trailing_spaces=*/true);
      if (std::find(audit.warnings.begin(), audit.warnings.end(), w) == audit.warnings.end()) {
        audit.warnings.push_back(w);
      }
    }
  }
  audit.target_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  audit.target_unsupported = pass.unsupported;
  return pass;
}

// What came out, compared with the CPU's (a pass that failed has nothing to compare from where it failed on); true
// when something differs.
bool compare_passes(const ModelOptions& o, const PassResult& expected, const PassResult& actual, ModelAudit& audit) {
  const bool forward_done = audit.target_error.empty() || audit.failed_phase != "forward";
  if (forward_done && audit.failed_phase != "setup") audit.output = compare(expected.output, actual.output);
  if (o.train && audit.target_error.empty()) {
    audit.loss_match = compare(expected.loss, actual.loss);
    for (size_t i = 0; i < expected.names.size(); ++i) {
      NamedMatch g{expected.names[i], {}};
      if (!expected.grads[i].defined() || !actual.grads[i].defined()) {
        g.match.compared = true;
        g.match.match = expected.grads[i].defined() == actual.grads[i].defined();
        if (!g.match.match) {
          g.match.message = expected.grads[i].defined() ? "the CPU computed a gradient, the target none"
                                                        : "the target computed a gradient, the CPU none";
        }
      } else {
        g.match = compare(expected.grads[i], actual.grads[i]);
      }
      audit.gradients.push_back(g);
      audit.updated.push_back({expected.names[i], compare(expected.updated[i], actual.updated[i])});
    }
  }
  bool differs = audit.output.compared && !audit.output.match;
  differs = differs || (audit.loss_match.compared && !audit.loss_match.match);
  for (const auto& g : audit.gradients) differs = differs || !g.match.match;
  return differs;
}

// The whole audit, in the audit process (Note [Model audit in a child process] in audit_process.cc).
int audit_here(const ModelOptions& o, std::ostream& out, std::ostream& err, ProgressWriter& progress) {
  ModelAudit audit;
  const Target target = prepare_target(o, audit);
  ModelCall call = load_model_call(o, audit);
  const emu::RunExpectations expecting = model_evidence(target, audit.environment);
  // The emulator goes first: autograd sizes its per-device queues once, at the process's first backward pass, from
  // the devices registered then, so MPS must be registered before the CPU reference's backward.
  if (target.emulated()) {
    ::setenv("PYTORCH_ENABLE_MPS_FALLBACK", o.fallback == "on" ? "1" : "0", 1);
    audit.environment.emulator =
        emu::activate_mps_emulator({target.emu.release_dir, expecting.version / 100, std::nullopt, expecting.version})
            .label();
    register_cpu_references_for_mps_only_ops();
  }
  const TracedPass expected = reference_pass(o, call, audit, progress);

  RunEnvironment& env = audit.environment;
  env.target = std::string(target.name());
  env.requested = o.target.target;
  env.fallback_mode = o.fallback;
  env.device = target.device().str();
  progress.environment(to_json(env).dump());
  progress.stage("target");
  progress.phase("setup");
  err << fmt::format("auditing {} ({}) on {}\n", o.model, o.train ? "one training step" : "forward", where_it_ran(env));
  const TracedPass actual = target_pass(o, call, target.device(), audit, progress);
  progress.stage("reporting");

  // Where the difference starts: only when something differs, since a call's outputs may legitimately differ
  // (random operators) without changing what the model computes.
  CallMismatch first_mismatch;
  if (compare_passes(o, expected.result, actual.result, audit)) {
    first_mismatch = first_mismatching_call(expected.events, expected.phase_ends, actual.events, actual.phase_ends);
  }
  audit.ops = summarize_trace(actual.events, actual.phase_ends, actual.failed_event, audit.target_error,
                              actual.unsupported, first_mismatch);
  if (audit.target_ended == "crash") {  // the emulated process went on from where a Mac's would have died
    for (auto& c : audit.ops) {
      if (c.status == CallStatus::kFailed) c.status = CallStatus::kCrash;
    }
  }
  attach_expectations(audit, expecting);
  write_reports(audit, o, out);
  return kExitOk;
}

// The end of an audit whose process died or hung (see Note [Model audit in a child process] in audit_process.cc): on
// the target, the reports of that finding; elsewhere, one line.
int report_lost_audit(const ModelOptions& o, const LostAudit& p, std::ostream& out) {
  const std::string what = p.end.timed_out ? fmt::format("did not finish within {:g} s (--timeout)", o.timeout_s)
                                           : fmt::format("crashed the process: {}", signal_name(p.end.signal));
  const std::string call = p.call.empty() ? "" : fmt::format("{} ({})", p.call, p.phase);
  if (p.stage == "loading") throw UserError(fmt::format("{}: loading the model {}", o.model, what));
  if (p.stage == "cpu") {
    throw UserError(fmt::format("{}: on the CPU, {} {}", o.model, call.empty() ? "the model" : call, what));
  }
  if (p.stage != "target") {
    throw UserError(fmt::format("{}: the audit {} after the target pass, comparing the results and writing the reports",
                                o.model, what));
  }
  ModelAudit audit;
  if (!p.environment.empty()) audit.environment = run_environment_from_json(nlohmann::json::parse(p.environment));
  audit.failed_phase = p.phase;
  audit.target_ended = p.end.timed_out ? "timeout" : "crash";
  audit.target_error = fmt::format(
      "{} {}", call.empty() ? fmt::format("the {} phase, outside any operator call,", p.phase) : call, what);
  if (!p.call.empty()) {
    ModelOpCall c;
    c.op = p.call;
    c.phase = p.phase;
    c.dtype = p.dtype.empty() ? "none" : p.dtype;
    c.calls = 1;
    c.status = p.end.timed_out ? CallStatus::kTimeout : CallStatus::kCrash;
    if (!p.inputs.empty()) c.input_signatures.push_back(p.inputs);
    c.message = what;
    audit.ops.push_back(std::move(c));
  }
  describe_run(audit, o);
  const auto kind = target_kind_named(audit.environment.target).value_or(TargetKind::kCpu);
  attach_expectations(audit, model_evidence(make_target_of_kind(kind, o.target), audit.environment));
  write_reports(audit, o, out);
  return kExitOk;
}

}  // namespace

int run_model_audit(const ModelOptions& requested, std::ostream& out, std::ostream& err) {
  const ModelOptions o = checked_options(requested);
  AuditProcessOptions process;
  process.self = o.self;
  process.command_line = o.command_line;
  process.timeout_s = o.timeout_s;
  // Real MPS reads PYTORCH_ENABLE_MPS_FALLBACK when libtorch loads, before main(): an executed audit process gets it
  // set as --fallback says (Note [Model audit in a child process] in audit_process.cc).
  const std::optional<TargetKind> named = target_kind_named(o.target.target);  // none: auto, maybe a Mac's MPS
  if (!named || *named == TargetKind::kMps) {
    process.variables = {{"PYTORCH_ENABLE_MPS_FALLBACK", o.fallback == "on" ? "1" : "0"}};
  }
  return run_in_audit_process(
      process, out, err, [&](ProgressWriter& progress) { return audit_here(o, out, err, progress); },
      [&](const LostAudit& lost) { return report_lost_audit(o, lost, out); });
}

}  // namespace mps_audit
