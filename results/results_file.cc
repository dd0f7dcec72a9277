// results.json: writing and reading the result model.
#include "results/results_file.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "common/diagnostics.h"
#include "common/json_number.h"
#include "common/output_file.h"
#include "common/target.h"

namespace mps_audit {
namespace {

double number_or(const nlohmann::json& j, const char* key, double fallback) {
  if (!j.contains(key)) return fallback;
  return j[key].is_number() ? j[key].get<double>() : std::nan("");
}

}  // namespace

nlohmann::json to_json(const ExpectationNote& e) {
  nlohmann::json j = {{"kind", e.kind},     {"scope", e.scope},   {"release", e.release}, {"list", e.list},
                      {"opinfo", e.opinfo}, {"source", e.source}, {"reason", e.reason},   {"macos", e.macos}};
  if (e.every_dtype) j["every_dtype"] = true;
  if (e.decided) j["decided"] = true;
  return j;
}

nlohmann::json to_json(const SampleTraits& t) {
  nlohmann::json j = nlohmann::json::object();
  if (t.max_rank) j["max_rank"] = t.max_rank;
  if (t.max_numel) j["max_numel"] = t.max_numel;
  if (t.max_size) j["max_size"] = t.max_size;
  if (t.max_bytes) j["max_bytes"] = t.max_bytes;
  const std::pair<const char*, bool> flags[] = {{"non_contiguous", t.non_contiguous},
                                                {"storage_offset", t.storage_offset},
                                                {"duplicate_indices", t.duplicate_indices},
                                                {"out_of_range_indices", t.out_of_range_indices},
                                                {"cpu_scalar", t.cpu_scalar},
                                                {"empty", t.empty},
                                                {"channels_last", t.channels_last},
                                                {"nan", t.nan},
                                                {"inf", t.inf},
                                                {"values_unknown", t.values_unknown}};
  for (const auto& [name, on] : flags) {
    if (on) j[name] = true;
  }
  if (!t.kwargs.empty()) j["kwargs"] = t.kwargs;
  if (!t.args.empty()) j["args"] = t.args;
  return j;
}

SampleTraits sample_traits_from_json(const nlohmann::json& j) {
  SampleTraits t;
  t.max_rank = j.value("max_rank", 0);
  t.max_numel = j.value("max_numel", int64_t{0});
  t.max_size = j.value("max_size", int64_t{0});
  t.non_contiguous = j.value("non_contiguous", false);
  t.storage_offset = j.value("storage_offset", false);
  t.duplicate_indices = j.value("duplicate_indices", false);
  t.out_of_range_indices = j.value("out_of_range_indices", false);
  t.cpu_scalar = j.value("cpu_scalar", false);
  t.empty = j.value("empty", false);
  t.channels_last = j.value("channels_last", false);
  t.max_bytes = j.value("max_bytes", int64_t{0});
  t.nan = j.value("nan", false);
  t.inf = j.value("inf", false);
  t.values_unknown = j.value("values_unknown", false);
  t.kwargs = j.value("kwargs", std::vector<std::string>{});
  t.args = j.value("args", std::map<std::string, std::vector<std::string>>{});
  return t;
}

nlohmann::json to_json(const KnownBugNote& b) {
  nlohmann::json j = {{"id", b.id},           {"kind", b.kind},         {"when", b.when},     {"met_by", b.met_by},
                      {"seen_in", b.seen_in}, {"fixed_in", b.fixed_in}, {"source", b.source}, {"summary", b.summary}};
  if (b.decided) j["decided"] = true;
  if (!b.condition.empty()) j["condition"] = b.condition;
  if (b.applies) j["applies"] = true;
  if (b.maybe) j["maybe"] = true;
  if (!b.fix_candidate.empty()) j["fix_candidate"] = b.fix_candidate;
  return j;
}

KnownBugNote known_bug_note_from_json(const nlohmann::json& j) {
  KnownBugNote b;
  b.id = j.value("id", "");
  b.kind = j.value("kind", "");
  b.when = j.value("when", "");
  b.met_by = j.value("met_by", "");
  b.seen_in = j.value("seen_in", "");
  b.fixed_in = j.value("fixed_in", "");
  b.source = j.value("source", "");
  b.summary = j.value("summary", "");
  b.decided = j.value("decided", false);
  b.condition = j.value("condition", "");
  b.applies = j.value("applies", false);
  b.maybe = j.value("maybe", false);
  b.fix_candidate = j.value("fix_candidate", "");
  return b;
}

nlohmann::json to_json(const ConditionOutcome& c) {
  nlohmann::json j = {{"condition", c.condition}, {"sample", c.sample}, {"verdict", to_string(c.verdict)}};
  if (!c.observed.empty()) j["observed"] = c.observed;
  if (!c.basis.empty()) j["basis"] = c.basis;
  if (!c.message.empty()) j["message"] = c.message;
  if (!c.fallback_ops.empty()) j["fallback_ops"] = c.fallback_ops;
  if (!(c.traits == SampleTraits{})) j["traits"] = to_json(c.traits);
  if (!c.known_bugs.empty()) j["known_bugs"] = c.known_bugs;
  return j;
}

ConditionOutcome condition_outcome_from_json(const nlohmann::json& j) {
  ConditionOutcome c;
  c.condition = j.value("condition", "");
  c.sample = j.value("sample", "");
  const std::string verdict = j.value("verdict", "pass");
  const auto parsed = parse_verdict(verdict);
  if (!parsed) throw std::invalid_argument(fmt::format("unknown verdict '{}' of condition {}", verdict, c.sample));
  c.verdict = *parsed;
  c.observed = j.value("observed", "");
  c.basis = j.value("basis", "");
  c.message = j.value("message", "");
  c.fallback_ops = j.value("fallback_ops", std::vector<std::string>{});
  if (const auto t = j.find("traits"); t != j.end() && t->is_object()) c.traits = sample_traits_from_json(*t);
  c.known_bugs = j.value("known_bugs", std::vector<std::string>{});
  return c;
}

nlohmann::json to_json(const ProbeResult& r) {
  nlohmann::json j = {{"op", r.op},
                      {"dtype", r.dtype},
                      {"verdict", to_string(r.verdict)},
                      {"fallback_ops", r.fallback_ops},
                      {"message", r.message},
                      {"sample", r.sample},
                      {"samples", r.samples},
                      {"registry_status", r.registry_status},
                      {"warnings", r.warnings},
                      {"seconds", json_number(r.seconds)}};
  if (r.verdict == Verdict::kSkip) j["skip_reason"] = skip_reason(r);
  if (!r.basis.empty()) j["basis"] = r.basis;
  if (!r.observed.empty()) j["observed"] = r.observed;
  if (r.expectation) j["expectation"] = to_json(*r.expectation);
  if (!(r.traits == SampleTraits{})) j["traits"] = to_json(r.traits);
  if (!r.sample_notes.empty()) j["sample_notes"] = r.sample_notes;
  if (!r.known_bugs.empty()) {
    j["known_bugs"] = nlohmann::json::array();
    for (const auto& b : r.known_bugs) j["known_bugs"].push_back(to_json(b));
  }
  if (!r.conditions.empty()) {
    j["conditions"] = nlohmann::json::array();
    for (const auto& c : r.conditions) j["conditions"].push_back(to_json(c));
  }
  if (!r.call_traits.empty()) {
    j["call_traits"] = nlohmann::json::object();
    for (const auto& [call, t] : r.call_traits) j["call_traits"][call] = to_json(t);
  }
  if (r.verdict == Verdict::kMismatch || r.max_abs_error != 0) {
    j["max_abs_error"] = json_number(r.max_abs_error);
    j["max_rel_error"] = json_number(r.max_rel_error);
    j["mismatches"] = r.mismatches;
    j["first_mismatch"] = r.first_mismatch;
  }
  return j;
}

ProbeResult probe_result_from_json(const nlohmann::json& j) {
  ProbeResult r;
  r.op = j.at("op").get<std::string>();
  r.dtype = j.at("dtype").get<std::string>();
  const std::string verdict = j.at("verdict").get<std::string>();
  const auto parsed = parse_verdict(verdict);
  if (!parsed) throw std::invalid_argument(fmt::format("unknown verdict '{}' of {} {}", verdict, r.op, r.dtype));
  r.verdict = *parsed;
  r.fallback_ops = j.value("fallback_ops", std::vector<std::string>{});
  r.message = j.value("message", "");
  r.sample = j.value("sample", "");
  r.samples = j.value("samples", 0);
  r.registry_status = j.value("registry_status", "");
  r.warnings = j.value("warnings", std::vector<std::string>{});
  r.seconds = number_or(j, "seconds", 0.0);
  r.max_abs_error = number_or(j, "max_abs_error", 0.0);
  r.max_rel_error = number_or(j, "max_rel_error", 0.0);
  r.mismatches = j.value("mismatches", int64_t{0});
  r.first_mismatch = j.value("first_mismatch", "");
  r.basis = j.value("basis", "");
  r.observed = j.value("observed", "");
  if (const auto e = j.find("expectation"); e != j.end() && e->is_object()) {
    r.expectation = ExpectationNote{e->value("kind", ""),      e->value("scope", ""),  e->value("release", ""),
                                    e->value("list", ""),      e->value("opinfo", ""), e->value("source", ""),
                                    e->value("reason", ""),    e->value("macos", ""),  e->value("every_dtype", false),
                                    e->value("decided", false)};
  }
  if (const auto t = j.find("traits"); t != j.end() && t->is_object()) r.traits = sample_traits_from_json(*t);
  r.sample_notes = j.value("sample_notes", std::vector<std::string>{});
  if (const auto b = j.find("known_bugs"); b != j.end() && b->is_array()) {
    for (const auto& one : *b) r.known_bugs.push_back(known_bug_note_from_json(one));
  }
  if (const auto c = j.find("conditions"); c != j.end() && c->is_array()) {
    for (const auto& one : *c) r.conditions.push_back(condition_outcome_from_json(one));
  }
  if (const auto c = j.find("call_traits"); c != j.end() && c->is_object()) {
    for (const auto& [call, t] : c->items()) r.call_traits[call] = sample_traits_from_json(t);
  }
  return r;
}

std::string fallback_variable_meaning(const std::optional<std::string>& value) {
  bool on = false;
  if (value && !value->empty()) {
    try {
      on = std::stoi(*value) != 0;
    } catch (const std::exception&) {
      return "not an integer: MPS cannot read it (PyTorch's std::stoi throws when MPS loads)";
    }
  }
  return on ? "operators MPS lacks run on the CPU (at::native::cpu_fallback), with one warning per process"
            : "operators MPS lacks raise NotImplementedError: set PYTORCH_ENABLE_MPS_FALLBACK=1 before torch loads "
              "to run them on the CPU";
}

nlohmann::json to_json(const RunEnvironment& env) {
  nlohmann::json targets = nlohmann::json::array();
  for (const auto& t : env.targets) {
    nlohmann::json j = {{"name", t.name}};
    if (target_kind_named(t.name) == TargetKind::kMpsEmu) {
      j["releases"] = t.releases;
      j["release_dirs"] = t.release_dirs;
    }
    targets.push_back(std::move(j));
  }
  nlohmann::json j = {
      {"torch_version", env.torch_version},
      {"target", env.target},
      {"requested_target", env.requested},
      {"device", env.device},
      {"os", env.os},
      {"fallback_mode", env.fallback_mode},
      {"emulated", !env.emulator.empty()},
      {"emulator", env.emulator},
      {"spec", env.spec},
      {"spec_hash", env.spec_hash},
      {"mps",
       {{"built", env.mps_built},
        {"available", env.mps_available},
        {"macos", env.macos.empty() ? nlohmann::json() : nlohmann::json(env.macos)},
        {"chip", env.chip.empty() ? nlohmann::json() : nlohmann::json(env.chip)},
        {"why_not", env.mps_why_not}}},
      {"cuda", {{"built", env.cuda_built}, {"available", env.cuda_available}, {"devices", env.cuda_devices}}},
      {"PYTORCH_ENABLE_MPS_FALLBACK",
       {{"value", env.fallback_variable ? nlohmann::json(*env.fallback_variable) : nlohmann::json()},
        {"meaning", fallback_variable_meaning(env.fallback_variable)}}},
      {"targets", std::move(targets)}};
  if (!env.expectations.empty()) {
    j["expectations"] = {{"path", env.expectations},
                         {"release", env.expectations_release},
                         {"mode", env.expectations_mode},
                         {"macos", env.expectations_macos}};
    if (!env.expectations_mac.empty()) j["expectations"]["mac"] = env.expectations_mac;
  }
  if (!env.known_bugs.empty()) j["known_bugs"] = env.known_bugs;
  // Only with recordings: results of runs without them read as they did before recordings existed.
  if (!env.samples.empty()) {
    j["samples"] = {{"path", env.samples},
                    {"hash", env.samples_hash},
                    {"calls", env.samples_calls},
                    {"dropped", env.samples_dropped}};
  }
  return j;
}

RunEnvironment run_environment_from_json(const nlohmann::json& j) {
  RunEnvironment env;
  env.torch_version = j.value("torch_version", "");
  env.target = j.value("target", "");
  env.requested = j.value("requested_target", "");
  env.device = j.value("device", "");
  env.os = j.value("os", "");
  env.fallback_mode = j.value("fallback_mode", "");
  env.emulator = j.value("emulator", "");
  env.spec = j.value("spec", "");
  env.spec_hash = j.value("spec_hash", "");
  if (const auto s = j.find("samples"); s != j.end() && s->is_object()) {
    env.samples = s->value("path", "");
    env.samples_hash = s->value("hash", "");
    env.samples_calls = s->value("calls", size_t{0});
    env.samples_dropped = s->value("dropped", size_t{0});
  }
  if (const auto e = j.find("expectations"); e != j.end() && e->is_object()) {
    env.expectations = e->value("path", "");
    env.expectations_release = e->value("release", "");
    env.expectations_mode = e->value("mode", "");
    env.expectations_macos = e->value("macos", "");
    env.expectations_mac = e->value("mac", "");
  }
  env.known_bugs = j.value("known_bugs", "");
  if (const auto mps = j.find("mps"); mps != j.end() && mps->is_object()) {
    env.mps_built = mps->value("built", false);
    env.mps_available = mps->value("available", false);
    if (mps->contains("macos") && (*mps)["macos"].is_string()) env.macos = (*mps)["macos"].get<std::string>();
    if (mps->contains("chip") && (*mps)["chip"].is_string()) env.chip = (*mps)["chip"].get<std::string>();
    env.mps_why_not = mps->value("why_not", "");
  }
  if (const auto cuda = j.find("cuda"); cuda != j.end() && cuda->is_object()) {
    env.cuda_built = cuda->value("built", false);
    env.cuda_available = cuda->value("available", false);
    env.cuda_devices = cuda->value("devices", std::vector<std::string>{});
  }
  if (const auto var = j.find("PYTORCH_ENABLE_MPS_FALLBACK"); var != j.end() && var->is_object()) {
    if (var->contains("value") && (*var)["value"].is_string())
      env.fallback_variable = (*var)["value"].get<std::string>();
  }
  if (const auto targets = j.find("targets"); targets != j.end() && targets->is_array()) {
    for (const auto& t : *targets) {
      if (!t.is_object()) continue;
      env.targets.push_back({t.value("name", ""), t.value("releases", std::vector<std::string>{}),
                             t.value("release_dirs", std::vector<std::string>{})});
    }
  }
  return env;
}

std::string where_it_ran(const RunEnvironment& env) {
  return env.emulator.empty() ? fmt::format("{} ({})", env.target, env.device)
                              : fmt::format("{} — {}", env.target, env.emulator);
}

nlohmann::json results_document(const Results& results, bool with_records) {
  nlohmann::json doc;
  doc["schema_version"] = kResultsSchemaVersion;
  doc["environment"] = to_json(results.environment);
  const RunProgress& p = results.run;
  doc["run"] = {{"planned", p.planned},     {"finished", p.finished},       {"not_run", p.not_run()}, {"lost", 0},
                {"complete", p.complete()}, {"interrupted", p.interrupted}, {"shard", p.shard}};
  std::map<Verdict, size_t> n;
  for (const auto& r : results.records) ++n[r.verdict];
  nlohmann::json summary = {{"total", results.records.size()}};
  for (Verdict v : kAllVerdicts) summary[std::string(to_string(v))] = n.count(v) ? n.at(v) : 0;
  doc["summary"] = summary;
  nlohmann::json arr = nlohmann::json::array();
  if (with_records) {
    for (const auto& r : results.records) arr.push_back(to_json(r));
  }
  if (!results.timeline.releases.empty()) {
    doc["timeline"] = {{"releases", results.timeline.releases}, {"native_since", results.timeline.native_since}};
  }
  doc["results"] = std::move(arr);
  return doc;
}

// Note [Records rendered side by side]
// results.json is one document written with an indent of 1 (a key or element to a line), and the default audit's
// 30,000 records are most of it: building them as one JSON value and writing it out was a visible wait at the end
// of every run, after the last probe (docs/benchmarks.md, "2026-11-24 (fifth sitting)"). Each record is written on its
// own, on as many threads as the machine has, and put in its place in the rest of the document, written once with an
// empty "results": the text is the same, byte for byte, as the whole document written at once (a record's own line
// breaks all come from the indent, since JSON strings hold theirs escaped, so indenting it two steps deeper is adding
// two spaces after each).
std::string render_results_json(const Results& results) {
  const std::string rest = results_document(results, /*with_records=*/false).dump(1);
  const std::string slot = "\n \"results\": []";
  const size_t at = rest.find(slot);
  MPS_AUDIT_ASSERT(at != std::string::npos, "results.json without its \"results\" key");
  const std::vector<ProbeResult>& records = results.records;
  constexpr size_t kPerThread = 2000;  // fewer records than this are not worth a thread
  const size_t threads =
      std::clamp<size_t>(records.size() / kPerThread, 1, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::string> parts(threads);
  std::vector<std::exception_ptr> failed(threads);  // what a part threw (text JSON cannot hold), thrown here
  auto render_part = [&](size_t k) {
    try {
      std::string& out = parts[k];
      for (size_t i = records.size() * k / threads; i < records.size() * (k + 1) / threads; ++i) {
        if (i > 0) out += ",\n";
        out += "  ";
        for (char c : to_json(records[i]).dump(1)) {
          out += c;
          if (c == '\n') out += "  ";
        }
      }
    } catch (...) {
      failed[k] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (size_t k = 1; k < threads; ++k) pool.emplace_back(render_part, k);
  render_part(0);
  for (auto& t : pool) t.join();
  for (const auto& e : failed) {
    if (e) std::rethrow_exception(e);
  }
  std::string text;
  size_t size = rest.size() + 8;
  for (const auto& part : parts) size += part.size();
  text.reserve(size);
  text.append(rest, 0, at + slot.size() - 1);
  if (!records.empty()) {
    text += "\n";
    for (const auto& part : parts) text += part;
    text += "\n ";
  }
  text.append(rest, at + slot.size() - 1, std::string::npos);
  text += "\n";
  return text;
}

Results parse_results(const std::string& text, const std::string& path) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based, one past the offending character: turn it into line:col.
    SourceLocation where{path, 1, 1};
    const size_t end = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++where.line;
        where.column = 1;
      } else {
        ++where.column;
      }
    }
    std::string what = e.what();
    const size_t colon = what.rfind(": ");
    throw UserError("not JSON: " + (colon == std::string::npos ? what : what.substr(colon + 2)), where);
  }
  if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array() || !doc.contains("environment")) {
    throw UserError("not a results.json of mps-audit run (no \"environment\" and \"results\")", {path});
  }
  const int version = doc.value("schema_version", 0);
  if (version < kOldestResultsSchemaVersion || version > kResultsSchemaVersion) {
    throw UserError(fmt::format("results schema version {} is not one this mps-audit reads ({} to {}){}", version,
                                kOldestResultsSchemaVersion, kResultsSchemaVersion,
                                version > kResultsSchemaVersion ? ": it was written by a newer mps-audit" : ""),
                    {path});
  }
  Results results;
  results.schema_version = version;
  try {
    results.environment = run_environment_from_json(doc["environment"]);
    for (const auto& r : doc["results"]) results.records.push_back(probe_result_from_json(r));
    if (const auto t = doc.find("timeline"); t != doc.end() && t->is_object()) {
      results.timeline.releases = t->value("releases", std::vector<std::string>{});
      results.timeline.native_since = t->value("native_since", std::map<std::string, std::string>{});
    }
    if (doc.contains("run")) {
      const auto& run = doc["run"];
      results.run.planned = run.value("planned", results.records.size());
      results.run.finished = run.value("finished", results.records.size());
      results.run.interrupted = run.value("interrupted", "");
      results.run.shard = run.value("shard", "");
    } else {  // schema 1: only complete runs were written
      results.run.planned = results.run.finished = results.records.size();
    }
  } catch (const std::exception& e) {
    throw UserError(fmt::format("not a results.json of mps-audit run: {}", e.what()), {path});
  }
  return results;
}

Results load_results(const std::string& path) {
  return parse_results(read_file(path), path);
}

}  // namespace mps_audit
