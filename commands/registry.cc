// `mps-audit registry` and `registry diff`: see registry.h.
#include "commands/registry.h"

#include <fmt/format.h>

#include "common/diagnostics.h"
#include "common/flags.h"
#include "common/output_file.h"
#include "common/text.h"
#include "registry/registry_diff.h"
#include "registry/registry_render.h"

namespace mps_audit {
namespace {

RegistryFormat format_or_throw(const std::string& name) {
  check_choice("--format", name, {"text", "json", "md"});
  return *parse_registry_format(name);
}

}  // namespace

int run_registry(const RegistryOptions& options, std::ostream& out) {
  const RegistryFormat format = format_or_throw(options.format);
  RegistryRenderOptions render;
  std::vector<std::string> all;
  for (OpStatus st : kAllOpStatuses) all.emplace_back(to_string(st));
  check_choices("--status", options.statuses, all);
  for (const auto& name : options.statuses) render.statuses.push_back(*parse_op_status(name));
  const Registry reg = load_registry(options.native_functions, options.extra_registrations, options.key);
  emit(render_registry(reg, format, render), options.output, out);
  return kExitOk;
}

int run_registry_diff(const RegistryDiffOptions& options, std::ostream& out) {
  const RegistryFormat format = format_or_throw(options.format);
  const Registry before = load_registry(options.old_source, "", options.key);
  const Registry after = load_registry(options.new_source, "", options.key);
  const RegistryDiff diff = diff_registries(before, after);
  emit(render_registry_diff(diff, format), options.output, out);
  return options.fail_on_lost && !diff.lost.empty() ? kExitGateFailed : kExitOk;
}

}  // namespace mps_audit
