// Reading the emulator's YAML data files (the known-bug ledger, the MPS limits) with file:line:col in every error.
#pragma once

#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/diagnostics.h"

namespace mps_audit::emu {

class YamlReader {
 public:
  explicit YamlReader(std::string path) : path_(std::move(path)) {}

  SourceLocation at(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    if (m.is_null()) return {path_};
    return {path_, m.line + 1, m.column + 1};
  }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& message) const { throw UserError(message, at(n)); }

  // The whole file, or a UserError at the YAML error's place.
  YAML::Node load(const std::string& text) const {
    try {
      return YAML::Load(text);
    } catch (const YAML::ParserException& e) {
      throw UserError(fmt::format("not YAML: {}", e.msg), {path_, e.mark.line + 1, e.mark.column + 1});
    }
  }

  std::string scalar(const YAML::Node& entry, const char* key, bool required) const {
    const YAML::Node n = entry[key];
    if (!n) {
      if (required) fail(entry, fmt::format("entry has no '{}'", key));
      return "";
    }
    if (!n.IsScalar()) fail(n, fmt::format("'{}' must be a string", key));
    return n.as<std::string>();
  }
  std::vector<std::string> list(const YAML::Node& entry, const char* key, bool required) const {
    const YAML::Node n = entry[key];
    if (!n) {
      if (required) fail(entry, fmt::format("entry has no '{}'", key));
      return {};
    }
    if (!n.IsSequence() || n.size() == 0) fail(n, fmt::format("'{}' must be a list of at least one string", key));
    std::vector<std::string> out;
    for (const auto& item : n) {
      if (!item.IsScalar()) fail(item, fmt::format("'{}' must be a list of strings", key));
      out.push_back(item.as<std::string>());
    }
    return out;
  }
  // A release "X.Y.Z", or "unknown" (also where the key is absent).
  std::string version(const YAML::Node& e, const char* key, bool required) const {
    static const std::regex kVersion("unknown|[0-9]+\\.[0-9]+\\.[0-9]+");
    std::string v = scalar(e, key, required);
    if (v.empty()) v = "unknown";
    if (!std::regex_match(v, kVersion)) fail(e[key], fmt::format("{} '{}': expected X.Y.Z or unknown", key, v));
    return v;
  }
  std::string date(const YAML::Node& e, const char* key, bool required) const {
    static const std::regex kDate("[0-9]{4}-[0-9]{2}-[0-9]{2}");
    const std::string v = scalar(e, key, required);
    if (!v.empty() && !std::regex_match(v, kDate)) fail(e[key], fmt::format("{} '{}': expected YYYY-MM-DD", key, v));
    return v;
  }
  // The list `list` of a whole file whose `format` must be `format` ("not <what>: expected 'format: ...'" where not).
  YAML::Node document_list(const std::string& text, const char* format, const char* what, const char* list) const;
  // Fails on a key of `entry` that is not in `keys`, naming the nearest.
  void only_keys(const YAML::Node& entry, const std::vector<std::string>& keys, const char* what) const;

 private:
  std::string path_;
};

// The rows of a data file that name `op` (its overload "aten::cumsum.out" or its base name "aten::cumsum"), from an
// index of rows by the names they give, in file order, each once.
std::vector<size_t> rows_naming(const std::unordered_map<std::string, std::vector<size_t>>& by_op,
                                const std::string& op);

}  // namespace mps_audit::emu
