// JSON and Markdown renderers of probe results.
#include "report/results.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace mps_audit {
namespace {

constexpr int kResultsSchemaVersion = 1;

std::map<Verdict, size_t> count(const std::vector<ProbeResult>& results) {
  std::map<Verdict, size_t> n;
  for (const auto& r : results) ++n[r.verdict];
  return n;
}

std::string where_it_ran(const RunEnvironment& env) {
  return env.emulator.empty() ? fmt::format("{} ({})", env.target, env.device)
                              : fmt::format("{} — {}", env.target, env.emulator);
}

// JSON has no NaN or infinity: those are written as null, and read back as NaN.
nlohmann::json number(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}
double number_or(const nlohmann::json& j, const char* key, double fallback) {
  if (!j.contains(key)) return fallback;
  return j[key].is_number() ? j[key].get<double>() : std::nan("");
}

std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out.size() > 300 ? out.substr(0, 297) + "..." : out;
}

}  // namespace

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
                      {"seconds", number(r.seconds)}};
  if (r.verdict == Verdict::kSkip) j["skip_reason"] = skip_reason(r);
  if (r.verdict == Verdict::kMismatch || r.max_abs_error != 0) {
    j["max_abs_error"] = number(r.max_abs_error);
    j["max_rel_error"] = number(r.max_rel_error);
    j["mismatches"] = r.mismatches;
    j["first_mismatch"] = r.first_mismatch;
  }
  return j;
}

ProbeResult probe_result_from_json(const nlohmann::json& j) {
  ProbeResult r;
  r.op = j.at("op").get<std::string>();
  r.dtype = j.at("dtype").get<std::string>();
  r.verdict = parse_verdict(j.at("verdict").get<std::string>()).value_or(Verdict::kError);
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
  return r;
}

nlohmann::json to_json(const RunEnvironment& env) {
  return {{"torch_version", env.torch_version},
          {"target", env.target},
          {"requested_target", env.requested},
          {"device", env.device},
          {"os", env.os},
          {"fallback_mode", env.fallback_mode},
          {"emulated", !env.emulator.empty()},
          {"emulator", env.emulator},
          {"spec", env.spec}};
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
  return env;
}

std::string render_results_json(const RunEnvironment& env, const std::vector<ProbeResult>& results) {
  nlohmann::json doc;
  doc["schema_version"] = kResultsSchemaVersion;
  doc["environment"] = to_json(env);
  nlohmann::json summary = {{"total", results.size()}};
  const auto n = count(results);
  for (Verdict v : kAllVerdicts) summary[std::string(to_string(v))] = n.count(v) ? n.at(v) : 0;
  doc["summary"] = summary;
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : results) arr.push_back(to_json(r));
  doc["results"] = std::move(arr);
  return doc.dump(1) + "\n";
}

std::string render_summary_table(const RunEnvironment& env, const std::vector<ProbeResult>& results) {
  const auto n = count(results);
  std::string out =
      fmt::format("{} op x dtype probes on {}, fallback {}:\n", results.size(), where_it_ran(env), env.fallback_mode);
  for (Verdict v : kAllVerdicts) {
    const size_t k = n.count(v) ? n.at(v) : 0;
    if (k == 0) continue;
    out += fmt::format("  {:<12} {:>6}  {:>5.1f}%\n", to_string(v), k,
                       results.empty() ? 0.0 : 100.0 * static_cast<double>(k) / static_cast<double>(results.size()));
  }
  return out;
}

std::string render_results_markdown(const RunEnvironment& env, const std::vector<ProbeResult>& results) {
  std::string out = fmt::format("# mps-audit: {}\n\n", where_it_ran(env));
  if (!env.emulator.empty()) {
    out += fmt::format(
        "> These results come from {}, not from a real Mac: kernels are those the release registers "
        "for MPS, numbers are the CPU's.\n\n",
        env.emulator);
  }
  out += fmt::format("libtorch {} on {}; `PYTORCH_ENABLE_MPS_FALLBACK` {}; spec `{}`.\n\n", env.torch_version, env.os,
                     env.fallback_mode == "on" ? "set" : "unset", env.spec);
  const auto n = count(results);
  out += fmt::format("| verdict | op x dtype | share of {} |\n| --- | ---: | ---: |\n", results.size());
  for (Verdict v : kAllVerdicts) {
    const size_t k = n.count(v) ? n.at(v) : 0;
    out += fmt::format("| {} | {} | {:.1f}% |\n", to_string(v), k,
                       results.empty() ? 0.0 : 100.0 * static_cast<double>(k) / static_cast<double>(results.size()));
  }
  for (Verdict v : {Verdict::kCrash, Verdict::kTimeout, Verdict::kError, Verdict::kMismatch, Verdict::kXpass,
                    Verdict::kUnsupported, Verdict::kFallback, Verdict::kXfail}) {
    if (!n.count(v)) continue;
    out += fmt::format("\n## {} ({})\n\n| operator | dtype | registry | message |\n| --- | --- | --- | --- |\n",
                       to_string(v), n.at(v));
    for (const auto& r : results) {
      if (r.verdict != v) continue;
      out += fmt::format("| `{}` | {} | {} | {} |\n", cell(r.op), r.dtype, r.registry_status, cell(r.message));
    }
  }
  if (n.count(Verdict::kSkip)) {  // thousands of rows would bury the rest: the reasons, counted
    std::map<std::string, size_t> reasons;
    std::map<std::string_view, size_t> kinds;
    for (const auto& r : results) {
      if (r.verdict != Verdict::kSkip) continue;
      ++reasons[r.message.substr(0, 90)];
      ++kinds[skip_reason(r)];
    }
    std::vector<std::pair<size_t, std::string>> sorted;
    for (const auto& [reason, k] : reasons) sorted.emplace_back(k, reason);
    std::sort(sorted.rbegin(), sorted.rend());
    out += fmt::format(
        "\n## skip ({})\n\nNot probed; each op x dtype is in results.json with its reason and `skip_reason` "
        "(docs/running.md explains them).\n\n| skip_reason | op x dtype |\n| --- | ---: |\n",
        n.at(Verdict::kSkip));
    for (std::string_view kind : kSkipReasons) {
      if (kinds.count(kind)) out += fmt::format("| {} | {} |\n", kind, kinds.at(kind));
    }
    out += "\nThe most common messages:\n\n| op x dtype | message |\n| ---: | --- |\n";
    for (size_t i = 0; i < sorted.size() && i < 25; ++i) {
      out += fmt::format("| {} | {} |\n", sorted[i].first, cell(sorted[i].second));
    }
  }
  return out;
}

}  // namespace mps_audit
