// Renders a registry (and a registry diff) as terminal text, JSON or Markdown. Renderers only format:
// every status was decided before they run.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "registry/registry.h"
#include "registry/registry_diff.h"

namespace mps_audit {

enum class RegistryFormat { kText, kJson, kMarkdown };

std::optional<RegistryFormat> parse_registry_format(std::string_view name);  // "text", "json", "md"

struct RegistryRenderOptions {
  // Operators with these statuses are listed (text) or kept (json, md); empty: none listed in text, all kept
  // in json and md.
  std::vector<OpStatus> statuses;
};

std::string render_registry(const Registry& reg, RegistryFormat format, const RegistryRenderOptions& options = {});
std::string render_registry_diff(const RegistryDiff& diff, RegistryFormat format);

// One line per status with its meaning for `key`, for the summaries: "a kernel registered for MPS".
std::string describe_status(OpStatus status, const std::string& key);

}  // namespace mps_audit
