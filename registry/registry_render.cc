// Text, JSON and Markdown renderers for registries and registry diffs.
#include "registry/registry_render.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace mps_audit {
namespace {

constexpr int kJsonSchemaVersion = 1;

bool wanted(const RegistryRenderOptions& options, OpStatus status) {
  return options.statuses.empty() ||
         std::find(options.statuses.begin(), options.statuses.end(), status) != options.statuses.end();
}

std::string percent(size_t part, size_t whole) {
  return whole == 0 ? "-" : fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string status_or_absent(const std::optional<OpStatus>& s) {
  return s ? std::string(to_string(*s)) : std::string("absent");
}

std::string heading(const Registry& reg) {
  std::string h = fmt::format("{}: {}", reg.key, reg.describe());
  if (!reg.extra_path.empty()) h += fmt::format(", with the hand registrations of {}", reg.extra_path);
  return h;
}

std::string render_text(const Registry& reg, const RegistryRenderOptions& options) {
  const auto counts = reg.counts();
  std::string out = heading(reg) + "\n";
  out += fmt::format("{} operators, each classified for dispatch key {}:\n", reg.ops.size(), reg.key);
  for (OpStatus s : kAllOpStatuses) {
    const size_t n = counts[static_cast<size_t>(s)];
    out += fmt::format("  {:<19} {:>5}  {:>6}  {}\n", to_string(s), n, percent(n, reg.ops.size()),
                       describe_status(s, reg.key));
  }
  if (!options.statuses.empty()) {
    out += "\n";
    for (const auto& op : reg.ops) {
      if (wanted(options, op.status)) out += fmt::format("{:<19} {}\n", to_string(op.status), op.name);
    }
  }
  return out;
}

nlohmann::json summary_json(const Registry& reg) {
  nlohmann::json summary;
  summary["total"] = reg.ops.size();
  const auto counts = reg.counts();
  for (OpStatus s : kAllOpStatuses) summary[std::string(to_string(s))] = counts[static_cast<size_t>(s)];
  return summary;
}

nlohmann::json source_json(const Registry& reg) {
  nlohmann::json source;
  source["kind"] = reg.origin;
  source["description"] = reg.describe();
  if (!reg.path.empty()) source["path"] = reg.path;
  source["extra_registrations"] = reg.extra_path.empty() ? nlohmann::json() : nlohmann::json(reg.extra_path);
  source["torch_version"] = reg.torch_version.empty() ? nlohmann::json() : nlohmann::json(reg.torch_version);
  return source;
}

std::string render_json(const Registry& reg, const RegistryRenderOptions& options) {
  nlohmann::json doc;
  doc["schema_version"] = kJsonSchemaVersion;
  doc["key"] = reg.key;
  doc["source"] = source_json(reg);
  doc["summary"] = summary_json(reg);
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& op : reg.ops) {
    if (!wanted(options, op.status)) continue;
    nlohmann::json o;
    o["name"] = op.name;
    o["status"] = to_string(op.status);
    if (!op.schema.empty()) o["schema"] = op.schema;
    if (!op.kernel.empty()) o["kernel"] = op.kernel;
    if (!op.source.empty()) o["source"] = op.source;
    if (!op.note.empty()) o["note"] = op.note;
    ops.push_back(std::move(o));
  }
  doc["ops"] = std::move(ops);
  return doc.dump(1) + "\n";
}

// Markdown table cells must not contain '|'.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string render_markdown(const Registry& reg, const RegistryRenderOptions& options) {
  const auto counts = reg.counts();
  std::string out = fmt::format("# Operators for {}\n\n", reg.key);
  out += fmt::format("Source: {}", reg.describe());
  if (!reg.extra_path.empty()) out += fmt::format(", with the hand registrations of `{}`", reg.extra_path);
  out +=
      fmt::format(".\n\n| status | operators | share of {} | meaning |\n| --- | ---: | ---: | --- |\n", reg.ops.size());
  for (OpStatus s : kAllOpStatuses) {
    const size_t n = counts[static_cast<size_t>(s)];
    out += fmt::format("| {} | {} | {} | {} |\n", to_string(s), n, percent(n, reg.ops.size()),
                       describe_status(s, reg.key));
  }
  for (OpStatus s : kAllOpStatuses) {
    if (!wanted(options, s) || counts[static_cast<size_t>(s)] == 0) continue;
    out += fmt::format("\n## {} ({})\n\n| operator | kernel | note |\n| --- | --- | --- |\n", to_string(s),
                       counts[static_cast<size_t>(s)]);
    for (const auto& op : reg.ops) {
      if (op.status != s) continue;
      out += fmt::format("| `{}` | {} | {} |\n", cell(op.name), op.kernel.empty() ? "" : "`" + cell(op.kernel) + "`",
                         cell(op.note));
    }
  }
  return out;
}

nlohmann::json changes_json(const std::vector<StatusChange>& changes) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& c : changes) {
    arr.push_back({{"name", c.name}, {"old", status_or_absent(c.before)}, {"new", status_or_absent(c.after)}});
  }
  return arr;
}

std::string diff_summary_line(const RegistryDiff& d) {
  return fmt::format("gained {} native kernels, lost {}; {} other changes ({} -> {} operators)", d.gained.size(),
                     d.lost.size(), d.other.size(), d.old_total, d.new_total);
}

std::string render_diff_text(const RegistryDiff& d) {
  std::string out = fmt::format("{}: {} -> {}\n{}\n", d.key, d.old_label, d.new_label, diff_summary_line(d));
  auto section = [&](const char* title, const std::vector<StatusChange>& changes) {
    if (changes.empty()) return;
    out += fmt::format("\n{} ({}):\n", title, changes.size());
    for (const auto& c : changes) {
      out += fmt::format("  {:<50} {} -> {}\n", c.name, status_or_absent(c.before), status_or_absent(c.after));
    }
  };
  section("Gained", d.gained);
  section("Lost", d.lost);
  section("Other changes", d.other);
  return out;
}

std::string render_diff_markdown(const RegistryDiff& d) {
  std::string out =
      fmt::format("# {} kernels: {} → {}\n\n{}.\n", d.key, d.old_label, d.new_label, diff_summary_line(d));
  auto section = [&](const char* title, const std::vector<StatusChange>& changes) {
    if (changes.empty()) return;
    out += fmt::format("\n## {} ({})\n\n| operator | old | new |\n| --- | --- | --- |\n", title, changes.size());
    for (const auto& c : changes) {
      out += fmt::format("| `{}` | {} | {} |\n", cell(c.name), status_or_absent(c.before), status_or_absent(c.after));
    }
  };
  section("Gained", d.gained);
  section("Lost", d.lost);
  section("Other changes", d.other);
  return out;
}

}  // namespace

std::optional<RegistryFormat> parse_registry_format(std::string_view name) {
  if (name == "text") return RegistryFormat::kText;
  if (name == "json") return RegistryFormat::kJson;
  if (name == "md" || name == "markdown") return RegistryFormat::kMarkdown;
  return std::nullopt;
}

std::string describe_status(OpStatus status, const std::string& key) {
  switch (status) {
    case OpStatus::kNative: return fmt::format("a kernel registered for {}", key);
    case OpStatus::kCpuFallback: return fmt::format("registered for {}, but always runs the CPU fallback", key);
    case OpStatus::kCompositeExplicit: return "one kernel for every backend (CompositeExplicitAutograd)";
    case OpStatus::kCompositeImplicit: return "decomposes into other operators (CompositeImplicitAutograd)";
    case OpStatus::kNone: return fmt::format("no kernel: reaches the backend fallback of {}", key);
  }
  return "";
}

std::string render_registry(const Registry& reg, RegistryFormat format, const RegistryRenderOptions& options) {
  switch (format) {
    case RegistryFormat::kText: return render_text(reg, options);
    case RegistryFormat::kJson: return render_json(reg, options);
    case RegistryFormat::kMarkdown: return render_markdown(reg, options);
  }
  return "";
}

std::string render_registry_diff(const RegistryDiff& d, RegistryFormat format) {
  switch (format) {
    case RegistryFormat::kText: return render_diff_text(d);
    case RegistryFormat::kMarkdown: return render_diff_markdown(d);
    case RegistryFormat::kJson: break;
  }
  nlohmann::json doc;
  doc["schema_version"] = kJsonSchemaVersion;
  doc["key"] = d.key;
  doc["old"] = {{"description", d.old_label}, {"total", d.old_total}};
  doc["new"] = {{"description", d.new_label}, {"total", d.new_total}};
  doc["summary"] = {{"gained", d.gained.size()}, {"lost", d.lost.size()}, {"other", d.other.size()}};
  doc["gained"] = changes_json(d.gained);
  doc["lost"] = changes_json(d.lost);
  doc["other"] = changes_json(d.other);
  return doc.dump(1) + "\n";
}

}  // namespace mps_audit
