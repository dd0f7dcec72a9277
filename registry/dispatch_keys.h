// Dispatch key names as the linked c10 knows them, and which keys each composite alias key covers.
#pragma once

#include <string>
#include <vector>

namespace mps_audit {

// The composite alias keys in the dispatcher's order of precedence.
inline constexpr const char* kCompositeExplicitNonFunctional = "CompositeExplicitAutogradNonFunctional";
inline constexpr const char* kCompositeExplicit = "CompositeExplicitAutograd";
inline constexpr const char* kCompositeImplicitNested = "CompositeImplicitAutogradNestedTensor";
inline constexpr const char* kCompositeImplicit = "CompositeImplicitAutograd";

// Every runtime and alias key name of the linked c10, sorted.
const std::vector<std::string>& known_dispatch_keys();
bool is_known_dispatch_key(const std::string& name);

// Whether the alias key covers `key` when the dispatcher computes its table (c10::isIncludedInAlias).
// A key the linked c10 does not know (one from a newer release's YAML) is taken as a plain backend key:
// covered by the composite aliases, but not by the nested-tensor one unless it is a NestedTensor key.
bool alias_includes(const std::string& alias, const std::string& key);

}  // namespace mps_audit
