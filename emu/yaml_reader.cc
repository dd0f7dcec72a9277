#include "emu/yaml_reader.h"

#include <algorithm>

#include "common/text.h"

namespace mps_audit::emu {

void YamlReader::only_keys(const YAML::Node& entry, const std::vector<std::string>& keys, const char* what) const {
  for (const auto& kv : entry) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      fail(kv.first, fmt::format("unknown key '{}' in {}{}", key, what, did_you_mean(key, keys)));
    }
  }
}

std::vector<size_t> rows_naming(const std::unordered_map<std::string, std::vector<size_t>>& by_op,
                                const std::string& op) {
  std::vector<size_t> rows;
  const std::string base = base_operator_name(op);
  for (const std::string& key : {op, base}) {
    if (const auto it = by_op.find(key); it != by_op.end())
      rows.insert(rows.end(), it->second.begin(), it->second.end());
    if (key == base) break;
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

}  // namespace mps_audit::emu
