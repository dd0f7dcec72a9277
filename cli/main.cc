// mps-audit: tells which PyTorch operators run natively on Apple's MPS backend (and other dispatch keys).
// This driver only turns flags into option structs and calls the library; subcommand bodies live there.
//
// Exit codes:
//   0  ran, and nothing regressed
//   1  ran, and the gate failed (`run --fail-on` verdicts present, `diff` found a regression,
//      `registry diff --fail-on-lost` lost kernels)
//   2  bad input (flags, files) or a tool error; one "error: ..." line on standard error says which
//   130, 143  `run` stopped by SIGINT, SIGTERM: the reports of what finished are written, marked incomplete
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <climits>
#include <cstdlib>

#include <unistd.h>
#include <CLI/CLI.hpp>

#include "commands/coverage.h"
#include "commands/env.h"
#include "commands/merge.h"
#include "commands/model.h"
#include "commands/record.h"
#include "commands/registry.h"
#include "commands/reports.h"
#include "commands/run.h"
#include "commands/timeline.h"
#include "commands/worker.h"
#include "common/data_home.h"
#include "common/diagnostics.h"
#include "common/text.h"
#include "common/torch_info.h"
#include "targets/targets.h"

namespace {

std::string version_text() {
  const mps_audit::TorchInfo torch = mps_audit::linked_torch_info();
  return fmt::format("mps-audit {} (libtorch {}{}{})", MPS_AUDIT_CLI_VERSION, torch.version,
                     torch.has_cuda ? ", CUDA" : "", torch.has_mps ? ", MPS" : "");
}

}  // namespace

// layers: flag table
int main(int argc, char** argv) {
  using namespace mps_audit;
  CLI::App app{"mps-audit: which PyTorch operators run natively on MPS, and which fall back to the CPU"};
  app.name("mps-audit");
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text);

  RegistryOptions registry_opts;
  CLI::App* registry = app.add_subcommand(
      "registry", "List the operators of a dispatcher or a native_functions.yaml, classified for a dispatch key");
  registry->add_option("--native-functions", registry_opts.native_functions,
                       "A release's native_functions.yaml, or a folder holding it (e.g. data/pytorch-2.11.0); "
                       "default: the live dispatcher of the linked libtorch");
  registry->add_option("--extra-registrations", registry_opts.extra_registrations,
                       "TSV of kernels registered by hand (default: the release folder's "
                       "mps_extra_registrations.tsv, for --key MPS)");
  registry->add_option("--key", registry_opts.key, "Dispatch key to classify for")->capture_default_str();
  registry->add_option("--format", registry_opts.format, "text, json or md")->capture_default_str();
  registry->add_option("-o,--output", registry_opts.output, "Write to this file instead of standard output");
  registry
      ->add_option("--status", registry_opts.statuses,
                   "List (text) or keep (json, md) only operators with these statuses: native, "
                   "cpu_fallback, composite_explicit, composite_implicit, none")
      ->delimiter(',');
  registry->require_subcommand(0, 1);

  RegistryDiffOptions diff_opts;
  CLI::App* diff = registry->add_subcommand(
      "diff", "Operators that gained or lost a kernel for a dispatch key between two registries");
  diff->add_option("old", diff_opts.old_source, "native_functions.yaml, release folder, or 'live'")->required();
  diff->add_option("new", diff_opts.new_source, "native_functions.yaml, release folder, or 'live'")->required();
  diff->add_option("--key", diff_opts.key, "Dispatch key to compare")->capture_default_str();
  diff->add_option("--format", diff_opts.format, "text, json or md")->capture_default_str();
  diff->add_option("-o,--output", diff_opts.output, "Write to this file instead of standard output");
  diff->add_flag("--fail-on-lost", diff_opts.fail_on_lost, "Exit with 1 when an operator lost its kernel");

  RunOptions run_opts;
  run_opts.self = executable_path(argv[0]);
  CLI::App* run = app.add_subcommand("run", "Probe operators on the CPU and a target, compare, and report");
  run->add_option("--target", run_opts.target.target, "auto, mps, mps-emu, cuda, cpu or meta")->capture_default_str();
  run->add_option("--spec", run_opts.spec,
                  "The op spec (default: the opspec.yaml of $MPS_AUDIT_DATA, the install, or the build tree)");
  run->add_option("--ops", run_opts.ops, "Regular expression on 'aten::name.overload' (default: all)");
  run->add_option("--dtypes", run_opts.dtypes, "Dtypes to probe (default: the spec's)")->delimiter(',');
  run->add_option("--out", run_opts.out_dir, "Folder for the reports")->capture_default_str();
  run->add_option("--format", run_opts.formats, "Report formats: json, md, html, junit, csv, badge")
      ->delimiter(',')
      ->capture_default_str();
  run->add_option("--fallback", run_opts.fallback, "PYTORCH_ENABLE_MPS_FALLBACK for the probes: on or off")
      ->capture_default_str();
  run->add_option(
      "--emu-release", run_opts.target.emu_release,
      "mps-emu: the release to emulate, a folder or a shipped release's version (2.11.0; default: the linked "
      "libtorch's)");
  run->add_option("--emu-macos", run_opts.target.emu_macos,
                  "mps-emu: the Mac's macOS, major.minor (13.3; default: the newest the release's data names)");
  run->add_option("--emu-chip", run_opts.target.emu_chip, "mps-emu: the Mac's chip: m1, m2, m3, m4, m5 or any")
      ->capture_default_str();
  run->add_option("--expectations", run_opts.expectations,
                  "PyTorch's own MPS test expectations: auto (predict on mps-emu, check on mps), predict, check, off")
      ->capture_default_str();
  run->add_option("--timeout", run_opts.timeout_s, "Seconds one probe may take")->capture_default_str();
  run->add_option_function<int>(
      "-j,--jobs", [&](const int& n) { run_opts.jobs = n; }, "Worker processes (default: one per core)");
  run->add_option("--fail-on", run_opts.fail_on,
                  "Exit 1 when any result has one of these verdicts (or 'conditional': a conditional failure)")
      ->delimiter(',');
  run->add_option("--baseline", run_opts.baseline, "Exit 1 when a verdict got worse than in this results.json");
  run->add_flag("--fail-on-conditional", run_opts.fail_on_conditional,
                "--baseline: a new conditional failure (fails under a condition only) is a regression too");
  run->add_flag("--strict", run_opts.strict, "JUnit: unsupported and fallback are failures too");
  run->add_flag("!--no-progress", run_opts.progress, "No progress line");
  run->add_flag("--resume", run_opts.resume,
                "Continue the interrupted run in --out (same flags): probes it recorded are not run again");
  run->add_option("--samples", run_opts.samples,
                  "Recorded samples to replay (tools/record_samples.py), or 'none' (default: the linked release's)");
  run->add_option("--shard", run_opts.shard, "K/N: run the K-th of N balanced slices of the plan (see merge)");

  emu::TimelineOptions timeline_opts;
  CLI::App* timeline = app.add_subcommand(
      "timeline", "Which release runs each operator on MPS: native since, expected to work since, per dtype");
  timeline->add_option("--ops", timeline_opts.ops, "Regular expression on 'aten::name.overload' (default: all)");
  timeline->add_option("--macos", timeline_opts.macos, "macOS version to read PyTorch's lists' conditions for")
      ->capture_default_str();
  timeline->add_option("--format", timeline_opts.format, "text, md or json")->capture_default_str();
  timeline->add_option("-o,--output", timeline_opts.output, "Write to this file instead of standard output");

  CoverageOptions coverage_opts;
  CLI::App* coverage = app.add_subcommand(
      "coverage", "The coverage page: every operator across the shipped releases, Core ATen first (make coverage)");
  coverage->add_option("--format", coverage_opts.format, "md or html")->capture_default_str();
  coverage->add_option("--macos", coverage_opts.macos, "macOS version to read PyTorch's lists' conditions for")
      ->capture_default_str();
  coverage->add_option("-o,--output", coverage_opts.output, "Write to this file instead of standard output");

  MergeOptions merge_opts;
  CLI::App* merge = app.add_subcommand("merge", "Combine the results.json of the shards of a run into one");
  merge->add_option("inputs", merge_opts.inputs, "results.json of each shard")->required();
  merge->add_option("-o,--output", merge_opts.output, "The merged results.json")->required();
  merge->add_option("--format", merge_opts.formats, "Reports to write beside it: json, md, html, junit, csv, badge")
      ->delimiter(',')
      ->capture_default_str();

  RenderCommandOptions render_opts;
  CLI::App* render = app.add_subcommand("render", "Write reports of a results.json again, in any format");
  render->add_option("results", render_opts.input, "A results.json")->required();
  render->add_option("--format", render_opts.formats, "json, md, html, junit, csv, badge")
      ->delimiter(',')
      ->capture_default_str();
  render->add_option("-o,--out", render_opts.out_dir, "Folder for the reports (default: the results.json's)");
  render->add_flag("--strict", render_opts.strict, "JUnit: unsupported and fallback are failures too");

  DiffCommandOptions gate_opts;
  CLI::App* gate = app.add_subcommand(
      "diff", "The CI gate: what got worse from a baseline results.json to a new one (exit 1 on a regression)");
  gate->add_option("base", gate_opts.base, "The baseline results.json")->required();
  gate->add_option("new", gate_opts.now, "The new results.json")->required();
  gate->add_option("--format", gate_opts.format, "text, md (for a PR comment) or json")->capture_default_str();
  gate->add_option("-o,--output", gate_opts.output, "Write to this file instead of standard output");
  gate->add_flag("--fail-on-conditional", gate_opts.fail_on_conditional,
                 "A new conditional failure (fails under a condition only) is a regression too");
  gate->add_option("--update-baseline", gate_opts.update_baseline,
                   "Write the new results here when nothing regressed (a ratchet)");

  CompareCommandOptions compare_opts;
  CLI::App* compare =
      app.add_subcommand("compare", "Several runs side by side: one op x dtype matrix, a column group per run");
  compare->add_option("results", compare_opts.inputs, "Two or more results.json files")->required();
  compare->add_option("--format", compare_opts.format, "md, html or json")->capture_default_str();
  compare->add_option("-o,--output", compare_opts.output, "Write to this file instead of standard output");

  EnvOptions env_opts;
  CLI::App* env = app.add_subcommand("env", "What this machine offers: MPS, CUDA, the fallback variable, targets");
  env->add_option("--format", env_opts.format, "text or json")->capture_default_str();

  ModelOptions model_opts;
  model_opts.self = run_opts.self;
  model_opts.command_line.assign(argv, argv + argc);
  CLI::App* model = app.add_subcommand(
      "model", "Run a TorchScript model on the CPU and a target: what falls back, what it costs, do results match");
  model->add_option("model", model_opts.model, "TorchScript file (torch.jit.script(...).save())");
  CallsOptions calls_opts;
  calls_opts.self = run_opts.self;
  model->add_option("--calls", calls_opts.calls,
                    "Replay a program's recorded calls (mps-audit record) instead of a TorchScript model");
  model->add_option_function<int>(
      "--jobs", [&](const int& jobs) { calls_opts.jobs = jobs; }, "--calls: worker processes (default: one per core)");
  model->add_option("--input", model_opts.inputs, "One per forward argument: 4x3x32x32[:float32], 2x16:int64");
  model->add_option("--input-high", model_opts.input_high, "Integer inputs are drawn from [0, N)")
      ->capture_default_str();
  model->add_option("--target", model_opts.target.target, "auto, mps, mps-emu, cuda or cpu")->capture_default_str();
  model->add_option("--emu-release", model_opts.target.emu_release,
                    "mps-emu: the release to emulate, a folder or a shipped release's version (2.11.0)");
  model->add_option("--emu-macos", model_opts.target.emu_macos,
                    "mps-emu: the Mac's macOS, major.minor (13.3; default: the newest the release's data names)");
  model->add_option("--emu-chip", model_opts.target.emu_chip, "mps-emu: the Mac's chip: m1, m2, m3, m4, m5 or any")
      ->capture_default_str();
  model->add_option("--fallback", model_opts.fallback, "PYTORCH_ENABLE_MPS_FALLBACK for the target: on or off")
      ->capture_default_str();
  model->add_option("--out", model_opts.out_dir, "Folder for the reports")->capture_default_str();
  model->add_option("--format", model_opts.formats, "json, md, html")->delimiter(',')->capture_default_str();
  model->add_flag("--train", model_opts.train, "One training step: loss, backward, SGD step");
  model->add_option("--target-classes", model_opts.target_classes,
                    "--train: cross-entropy against N random classes (default: the sum of the output)");
  model
      ->add_option("--optimizer", model_opts.optimizer, "--train: sgd, adam or adamw, one step with PyTorch's defaults")
      ->capture_default_str();
  model->add_option_function<double>(
      "--lr", [&](const double& lr) { model_opts.lr = lr; },
      "--train: learning rate (default: the optimizer's, 0.01 for sgd, 1e-3 for adam and adamw)");
  model->add_option("--seed", model_opts.seed, "Seed of the random inputs and labels")->capture_default_str();
  model
      ->add_option("--timeout", model_opts.timeout_s,
                   "Seconds the audit may stay in one stage before it counts as hung")
      ->capture_default_str();

  RecordOptions record_opts;
  CLI::App* record = app.add_subcommand(
      "record", "Run a Python program unchanged and record every ATen call it makes, for `model --calls`");
  record->add_option("-o,--out", record_opts.out, "The calls file to write");
  record
      ->add_option("--max-numel", record_opts.max_numel,
                   "Tensors with more elements are kept as shape, dtype, strides and value range")
      ->capture_default_str();
  record->add_flag("--module-path", record_opts.module_path,
                   "Print the folder of the recorder module (for `import mps_audit_record` in a notebook)");
  record->add_option("command", record_opts.command, "-- python3 train.py ARGS...: the program to run");

  WorkerOptions worker_opts;
  std::string worker_target_name, worker_release;
  CLI::App* worker = app.add_subcommand("__worker", "");  // started by `run` (run/worker_process.cc)
  worker->group("");
  worker->add_option("--target", worker_target_name)->required();
  worker->add_option("--spec", worker_opts.spec)->required();
  worker->add_option("--parent", worker_opts.parent);
  worker->add_option("--lifeline", worker_opts.lifeline);
  worker->add_option("--state", worker_opts.state);
  worker->add_option("--emu-release", worker_release);
  worker->add_option("--emu-macos", worker_opts.emu_macos);
  worker->add_option("--samples", worker_opts.samples);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "error: " << e.what() << "\n(run 'mps-audit --help' for usage)\n";
    return kExitBadInput;
  }

  const auto command = [&]() -> int {
    try {
      if (run->parsed()) return run_command(run_opts, std::cout, std::cerr);
      if (env->parsed()) return run_env(env_opts, std::cout);
      if (model->parsed()) {
        ModelCommandOptions m{model_opts, calls_opts, model->count("--timeout") > 0};
        return model_command(m, std::cout, std::cerr);
      }
      if (record->parsed()) return run_record(record_opts, std::cout, std::cerr);
      if (worker->parsed()) {
        worker_opts.target = worker_target(worker_target_name, worker_release);
        return run_worker(worker_opts, std::cout);
      }
      if (merge->parsed()) return run_merge(merge_opts, std::cout);
      if (timeline->parsed()) return emu::run_timeline(timeline_opts, std::cout);
      if (coverage->parsed()) return run_coverage(coverage_opts, std::cout);
      if (diff->parsed()) return run_registry_diff(diff_opts, std::cout);
      if (render->parsed()) return run_render(render_opts, std::cout);
      if (gate->parsed()) return run_diff(gate_opts, std::cout);
      if (compare->parsed()) return run_compare(compare_opts, std::cout);
      if (registry->parsed()) return run_registry(registry_opts, std::cout);
    } catch (const UserError& e) {
      std::cerr << format_diagnostic(e) << "\n";
      return kExitBadInput;
    } catch (const std::exception& e) {
      std::cerr << "error: " << first_line(e.what()) << "\n";
      return kExitBadInput;
    }
    return kExitBadInput;
  };
  const int code = command();
  // Every file the command wrote is closed (and renamed into place) by now, so the process ends without tearing
  // down what it holds: the destructors of libtorch's statics, the spec and the recorded samples took a quarter of a
  // second at the end of each run on CUDA, for nothing the command needed.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}
