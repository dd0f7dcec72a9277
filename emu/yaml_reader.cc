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

YAML::Node YamlReader::document_list(const std::string& text, const char* format, const char* what,
                                     const char* list) const {
  const YAML::Node root = load(text);
  if (!root.IsMap() || !root["format"] || !root["format"].IsScalar() || root["format"].as<std::string>() != format) {
    fail(root["format"] ? root["format"] : root, fmt::format("not {}: expected 'format: {}'", what, format));
  }
  const YAML::Node items = root[list];
  if (!items || !items.IsSequence()) fail(root, fmt::format("no '{}' list", list));
  return items;
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
