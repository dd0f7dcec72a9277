// The model audit's reports: model.json (readable by load_results() as a results file), model.md, a self-contained
// model.html, and the terminal summary (model_reports.h). Fallbacks come first in each, with their share of the time
// and the calls.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/json_number.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "emu/expected_verdicts.h"
#include "report/model_reports.h"
#include "report/renderers.h"

namespace mps_audit {
namespace {

nlohmann::json to_json(const Match& m) {
  nlohmann::json j = {{"compared", m.compared}, {"match", m.compared && m.match}};
  if (m.compared) {
    j["max_abs_error"] = json_number(m.max_abs_error);
    j["max_rel_error"] = json_number(m.max_rel_error);
  }
  if (!m.message.empty()) j["message"] = m.message;
  return j;
}

nlohmann::json to_json(const ModelOpCall& c) {
  nlohmann::json j = {{"op", c.op},
                      {"phase", c.phase},
                      {"dtype", c.dtype},
                      {"calls", c.calls},
                      {"status", std::string(to_string(c.status))},
                      {"fallback", c.status == CallStatus::kFallback},
                      {"fallback_ops", c.fallback_ops},
                      {"failed", c.failed()},
                      {"message", c.message},
                      {"inputs", c.input_signatures},
                      {"seconds", json_number(c.seconds)},
                      {"bytes_to_cpu", c.bytes_to_cpu},
                      {"bytes_from_cpu", c.bytes_from_cpu},
                      {"mismatch", c.mismatch}};
  if (c.mismatch) {
    j["mismatch_message"] = c.mismatch_message;
    j["max_abs_error"] = json_number(c.max_abs_error);
    j["max_rel_error"] = json_number(c.max_rel_error);
  }
  if (c.expectation) j["expectation"] = to_json(*c.expectation);
  if (!c.known_bugs.empty()) {
    j["known_bugs"] = nlohmann::json::array();
    for (const auto& b : c.known_bugs) j["known_bugs"].push_back(to_json(b));
  }
  return j;
}

double share(double part, double whole) {
  return whole > 0 ? part / whole : 0.0;
}

std::string bytes_text(int64_t b) {
  if (b >= 1 << 20) return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1 << 20));
  if (b >= 1 << 10) return fmt::format("{:.1f} KiB", static_cast<double>(b) / (1 << 10));
  return fmt::format("{} B", b);
}

std::string match_text(const Match& m) {
  if (!m.compared) return "not compared (the target failed first)";
  if (m.match) return fmt::format("match (max abs error {:.3g})", m.max_abs_error);
  if (m.max_abs_error == 0 && m.max_rel_error == 0) return "MISMATCH: " + m.message;
  return fmt::format("MISMATCH: {} (max abs error {:.3g}, max rel error {:.3g})", m.message, m.max_abs_error,
                     m.max_rel_error);
}

// One line of verdict for the whole model.
std::string headline(const ModelAudit& a) {
  if (!a.target_error.empty()) return fmt::format("FAILS on the target ({}): {}", a.failed_phase, a.target_error);
  std::string s = a.output.match ? "runs, output matches the CPU" : "runs, but the OUTPUT DIFFERS from the CPU";
  if (a.train) {
    s += a.loss_match.match && a.gradients_match() && a.updated_match()
             ? "; loss, gradients and updated parameters match"
             : fmt::format("; training step differs (loss {}, {} of {} gradients differ)",
                           a.loss_match.match ? "matches" : "differs", mismatching(a.gradients), a.gradients.size());
  }
  return s;
}

std::string fallback_line(const ModelAudit& a) {
  return fmt::format(
      "{} of {} operator calls fell back to the CPU ({:.1f}% of calls, {:.1f}% of operator time); "
      "{} copied to the CPU, {} back",
      a.fallback_calls(), a.calls(),
      100 * share(static_cast<double>(a.fallback_calls()), static_cast<double>(a.calls())),
      100 * share(a.fallback_seconds(), a.op_seconds()), bytes_text(a.bytes_to_cpu()), bytes_text(a.bytes_from_cpu()));
}

}  // namespace

std::string render_model_json(const ModelAudit& a, const std::vector<ProbeResult>& records) {
  Results results;
  results.environment = a.environment;
  results.records = records;
  results.run.planned = results.run.finished = results.records.size();
  if (!a.target_error.empty()) {
    results.run.interrupted = a.target_ended.empty() ? "the model failed on the target" : a.target_error;
  }
  nlohmann::json doc = nlohmann::json::parse(render_results_json(results));
  doc["kind"] = "model";
  doc["model"] = a.model;
  doc["inputs"] = a.inputs;
  doc["train"] = a.train;
  doc["verdict"] = headline(a);
  doc["target_error"] = a.target_error.empty() ? nlohmann::json() : nlohmann::json(a.target_error);
  doc["failed_phase"] = a.failed_phase.empty() ? nlohmann::json() : nlohmann::json(a.failed_phase);
  doc["target_ended"] = a.target_ended.empty() ? nlohmann::json() : nlohmann::json(a.target_ended);
  doc["output_match"] = to_json(a.output);
  doc["totals"] = {{"calls", a.calls()},
                   {"fallback_calls", a.fallback_calls()},
                   {"fallback_call_share",
                    json_number(share(static_cast<double>(a.fallback_calls()), static_cast<double>(a.calls())))},
                   {"op_seconds", json_number(a.op_seconds())},
                   {"fallback_seconds", json_number(a.fallback_seconds())},
                   {"fallback_time_share", json_number(share(a.fallback_seconds(), a.op_seconds()))},
                   {"bytes_to_cpu", a.bytes_to_cpu()},
                   {"bytes_from_cpu", a.bytes_from_cpu()},
                   {"cpu_seconds", json_number(a.cpu_seconds)},
                   {"target_seconds", json_number(a.target_seconds)}};
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& c : a.ops) ops.push_back(to_json(c));
  doc["ops"] = std::move(ops);
  doc["warnings"] = a.warnings;
  if (a.train) {
    nlohmann::json grads = nlohmann::json::array(), updated = nlohmann::json::array();
    for (const auto& g : a.gradients) grads.push_back({{"name", g.name}, {"match", to_json(g.match)}});
    for (const auto& u : a.updated) updated.push_back({{"name", u.name}, {"match", to_json(u.match)}});
    doc["training"] = {{"loss", a.loss},
                       {"optimizer", a.optimizer},
                       {"lr", a.lr},
                       {"loss_match", to_json(a.loss_match)},
                       {"gradients_match", a.gradients_match()},
                       {"gradients", std::move(grads)},
                       {"updated_parameters_match", a.updated_match()},
                       {"updated_parameters", std::move(updated)}};
  }
  return doc.dump(1) + "\n";
}

std::string render_model_summary(const ModelAudit& a) {
  std::string s = fmt::format("{} ({}) on {}: {}\n", a.model, a.train ? "training step" : "forward",
                              where_it_ran(a.environment), headline(a));
  s += fallback_line(a) + "\n";
  for (const auto& c : a.ops) {
    if (c.mismatch) {
      s += fmt::format("  mismatch {} ({}): the first call whose outputs differ from the CPU's: {}\n", c.op, c.phase,
                       c.mismatch_message);
    }
    if (const auto& e = c.expectation; e && emu::decides_verdict(*e)) {
      s += fmt::format("  expected to fail on real MPS: {} ({}, {}): PyTorch {}'s {} ({}) expects {}{}\n", c.op,
                       c.phase, c.dtype, e->release, e->list, e->source, e->kind,
                       e->scope == "forward" ? "" : " of its " + e->scope);
    }
    if (c.status == CallStatus::kNative) continue;
    s += fmt::format(
        "  {:<8} {} ({}, {} call{}){}\n", to_string(c.status), c.op, c.phase, c.calls, c.calls == 1 ? "" : "s",
        c.status == CallStatus::kFallback ? ": CPU ran " + fmt::format("{}", fmt::join(c.fallback_ops, ", "))
                                          : ": " + c.message);
  }
  return s;
}

std::string render_model_markdown(const ModelAudit& a) {
  std::string s = fmt::format("# Model audit: `{}`\n\n", a.model);
  s += fmt::format("{} on **{}**, inputs {}{}.\n\n", a.train ? "One training step" : "Forward pass",
                   where_it_ran(a.environment), fmt::join(a.inputs, ", "),
                   a.train ? fmt::format(", loss {}, {} lr {}", a.loss, a.optimizer, a.lr) : "");
  s += fmt::format("**{}**\n\n{}.\n\n", headline(a), fallback_line(a));
  s += fmt::format("- output: {}\n", match_text(a.output));
  if (a.train) {
    s += fmt::format("- loss: {}\n", match_text(a.loss_match));
    s +=
        fmt::format("- gradients: {} of {} match\n", a.gradients.size() - mismatching(a.gradients), a.gradients.size());
    s += fmt::format("- updated parameters: {} of {} match\n", a.updated.size() - mismatching(a.updated),
                     a.updated.size());
    for (const auto& g : a.gradients) {
      if (!g.match.match) s += fmt::format("  - gradient of `{}`: {}\n", g.name, match_text(g.match));
    }
  }
  s += fmt::format("- time: {:.4f} s on the CPU, {:.4f} s on the target\n\n", a.cpu_seconds, a.target_seconds);
  s += "## Operators (fallbacks first)\n\n";
  s += "| operator | phase | dtype | calls | status | ran on the CPU | time (s) | share of time | to CPU | back |\n";
  s += "| --- | --- | --- | ---: | --- | --- | ---: | ---: | ---: | ---: |\n";
  for (const auto& c : a.ops) {
    s += fmt::format(
        "| `{}` | {} | {} | {} | {} | {} | {:.6f} | {:.1f}% | {} | {} |\n", c.op, c.phase, c.dtype, c.calls,
        (c.failed()                          ? fmt::format("**{}**: {}", to_string(c.status), markdown_cell(c.message))
         : c.status == CallStatus::kFallback ? std::string("**fallback**")
                                             : std::string(to_string(c.status))) +
            (c.mismatch ? ", **first mismatch**: " + markdown_cell(c.mismatch_message) : ""),
        fmt::join(c.fallback_ops, ", "), c.seconds, 100 * share(c.seconds, a.op_seconds()),
        c.bytes_to_cpu ? bytes_text(c.bytes_to_cpu) : "", c.bytes_from_cpu ? bytes_text(c.bytes_from_cpu) : "");
  }
  std::string expected;
  for (const auto& c : a.ops) {
    if (const auto& e = c.expectation; e && emu::decides_verdict(*e)) {
      expected += fmt::format("| `{}` | {} | {} | {}{} | {} | {} | {} |\n", c.op, c.phase, c.dtype, e->kind,
                              e->scope == "forward" ? "" : " (its " + e->scope + ")", e->list, e->source,
                              markdown_cell(e->reason));
    }
  }
  if (!expected.empty()) {
    s += fmt::format(
        "\n## Expected to fail on real MPS\n\nPyTorch {}'s own MPS test lists, for macOS {} ({}); in a training "
        "step a forward call carries its gradient's entry, since backward runs through it.\n\n| operator | phase | "
        "dtype | expected | list | source | reason |\n| --- | --- | --- | --- | --- | --- | --- |\n{}",
        a.environment.expectations_release, a.environment.expectations_macos, a.environment.expectations, expected);
  }
  std::string bugs;
  for (const auto& c : a.ops) {
    for (const auto& b : c.known_bugs) {
      bugs += fmt::format("| `{}` | {} | {} | [{}]({}) | {} | {} | {} |\n", c.op, c.phase, c.dtype, b.id, b.source,
                          b.kind, b.when, b.fixed_in == "unknown" ? "not known" : b.fixed_in);
    }
  }
  if (!bugs.empty()) {
    s += fmt::format(
        "\n## Known MPS bugs these calls may meet\n\nFrom the ledger of known MPS bugs ({}), on {}: whether a call "
        "meets one depends on its inputs (the condition).\n\n| operator | phase | dtype | bug | kind | condition | "
        "fixed in |\n| --- | --- | --- | --- | --- | --- | --- |\n{}",
        a.environment.known_bugs, a.environment.expectations_mac, bugs);
  }
  s += "\n## Input shapes\n\n";
  for (const auto& c : a.ops) {
    s += fmt::format("- `{}` ({}): {}\n", c.op, c.phase,
                     markdown_cell(fmt::format("{}", fmt::join(c.input_signatures, " · "))));
  }
  if (!a.warnings.empty()) {
    s += "\n## Warnings on the target\n\n";
    for (const auto& w : a.warnings) s += "- " + markdown_cell(w) + "\n";
  }
  s += fmt::format("\ntorch {} on {}\n", a.environment.torch_version, a.environment.os);
  return s;
}

std::string model_page_head(std::string_view title) {
  return fmt::format(
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{}</title><style>"
      "body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;"
      "padding:2px 6px;text-align:left}}tr.fallback{{background:#fff3cd}}"
      "tr.failed,tr.crash,tr.timeout{{background:#f8d7da}}</style></head><body>\n",
      escape_html(title));
}

std::vector<std::string> write_model_files(const std::vector<std::string>& formats, const std::string& dir,
                                           const std::function<std::string(const std::string&)>& render) {
  make_directories(dir);
  std::vector<std::string> written;
  for (const auto& f : formats) {
    written.push_back(join_path(dir, "model." + f));
    write_file_atomically(written.back(), render(f));
  }
  return written;
}

std::string render_model_html(const ModelAudit& a) {
  std::string s = model_page_head("Model audit");
  s += fmt::format("<h1>Model audit: {}</h1>\n<p>{} on <b>{}</b>, inputs {}</p>\n", escape_html(a.model),
                   a.train ? "One training step" : "Forward pass", escape_html(where_it_ran(a.environment)),
                   escape_html(fmt::format("{}", fmt::join(a.inputs, ", "))));
  s += fmt::format("<p><b>{}</b></p>\n<p>{}</p>\n<ul><li>output: {}</li>\n", escape_html(headline(a)),
                   escape_html(fallback_line(a)), escape_html(match_text(a.output)));
  if (a.train) {
    s += fmt::format("<li>loss: {}</li><li>gradients: {} of {} match</li><li>updated parameters: {} of {} match</li>\n",
                     escape_html(match_text(a.loss_match)), a.gradients.size() - mismatching(a.gradients),
                     a.gradients.size(), a.updated.size() - mismatching(a.updated), a.updated.size());
  }
  s += "</ul>\n<table><tr><th>operator</th><th>phase</th><th>dtype</th><th>calls</th><th>status</th>"
       "<th>ran on the CPU</th><th>time (s)</th><th>to CPU (B)</th><th>back (B)</th><th>inputs</th></tr>\n";
  for (const auto& c : a.ops) {
    s += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.6f}</td>"
        "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
        to_string(c.status), escape_html(c.op), c.phase, c.dtype, c.calls,
        escape_html(c.failed() ? fmt::format("{}: {}", to_string(c.status), c.message)
                               : std::string(to_string(c.status))),
        escape_html(fmt::format("{}", fmt::join(c.fallback_ops, ", "))), c.seconds, c.bytes_to_cpu, c.bytes_from_cpu,
        escape_html(fmt::format("{}", fmt::join(c.input_signatures, " · "))));
  }
  s += "</table>\n</body></html>\n";
  return s;
}

}  // namespace mps_audit
