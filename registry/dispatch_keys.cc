// Dispatch key names and alias coverage, answered by the linked c10.
#include "registry/dispatch_keys.h"

#include <algorithm>
#include <unordered_map>

#include <c10/core/DispatchKey.h>
#include <c10/core/DispatchKeySet.h>

namespace mps_audit {
namespace {

const std::unordered_map<std::string, c10::DispatchKey>& key_table() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string, c10::DispatchKey>();
    const auto last = static_cast<uint16_t>(c10::DispatchKey::EndOfAliasKeys);
    for (uint16_t i = 1; i <= last; ++i) {
      const auto key = static_cast<c10::DispatchKey>(i);
      const std::string name = c10::toString(key);
      // Only names the key parses back from are real keys; range markers and gaps are not.
      try {
        if (c10::parseDispatchKey(name) == key) t->emplace(name, key);
      } catch (const std::exception&) {
      }
    }
    return t;
  }();
  return *table;
}

}  // namespace

const std::vector<std::string>& known_dispatch_keys() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& kv : key_table()) v.push_back(kv.first);
    std::sort(v.begin(), v.end());
    return v;
  }();
  return names;
}

bool is_known_dispatch_key(const std::string& name) {
  return key_table().count(name) > 0;
}

bool alias_includes(const std::string& alias, const std::string& key) {
  const auto& table = key_table();
  auto a = table.find(alias);
  auto k = table.find(key);
  if (a == table.end()) return false;  // the linked c10 predates this alias: nothing can register to it
  if (k == table.end()) {
    const bool nested = key.rfind("NestedTensor", 0) == 0;
    return alias == kCompositeImplicitNested ? nested : true;
  }
  return c10::isIncludedInAlias(k->second, a->second);
}

}  // namespace mps_audit
