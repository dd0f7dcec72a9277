// Loading one registry: see load_registry.h.
#include "registry/load_registry.h"

#include <set>
#include <vector>

#include <fmt/format.h>

#include "common/diagnostics.h"
#include "common/text.h"
#include "registry/dispatch_keys.h"
#include "registry/extra_registrations.h"
#include "registry/live_registry.h"
#include "registry/native_functions.h"
#include "registry/release_data.h"
#include "registry/static_registry.h"

namespace mps_audit {
namespace {

// A key is accepted when the linked c10 knows it or the release's YAML uses it (a newer release may have keys
// the linked c10 lacks); anything else is a typo, and classifying for it would silently say "none" everywhere.
void check_static_key(const std::string& key, const std::vector<NativeFunctionDecl>& decls) {
  if (is_known_dispatch_key(key)) return;
  std::set<std::string> keys(known_dispatch_keys().begin(), known_dispatch_keys().end());
  for (const auto& d : decls) {
    for (const auto& kv : d.dispatch) keys.insert(kv.first);
  }
  if (keys.count(key)) return;
  throw UserError(fmt::format("unknown dispatch key '{}'{}", key,
                              did_you_mean(key, std::vector<std::string>(keys.begin(), keys.end()))));
}

}  // namespace

Registry load_registry(const std::string& source, const std::string& extra_registrations, const std::string& key) {
  std::vector<ExtraRegistration> extra;
  if (source.empty() || source == kLiveSource) {
    if (!extra_registrations.empty()) extra = read_extra_registrations(extra_registrations);
    Registry reg = scan_live_dispatcher(key, extra);
    reg.extra_path = extra_registrations;
    return reg;
  }
  ReleaseFiles files = resolve_release(source, key);
  if (!extra_registrations.empty()) files.extra_registrations = extra_registrations;
  const auto decls = read_native_functions(files.native_functions);
  check_static_key(key, decls);
  if (!files.extra_registrations.empty()) extra = read_extra_registrations(files.extra_registrations);
  Registry reg = classify_native_functions(decls, extra, key);
  reg.path = files.native_functions;
  reg.extra_path = files.extra_registrations;
  reg.torch_version = files.version;
  return reg;
}

}  // namespace mps_audit
