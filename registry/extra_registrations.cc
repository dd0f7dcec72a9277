// TSV reader for hand-registered kernels.
#include "registry/extra_registrations.h"

#include <sstream>
#include <unordered_map>

#include <fmt/format.h>

#include "common/output_file.h"
#include "common/text.h"

namespace mps_audit {

std::vector<ExtraRegistration> parse_extra_registrations(const std::string& text, const std::string& file) {
  static const std::unordered_map<std::string, ExtraKind> kKinds = {
      {"native", ExtraKind::kNative}, {"cpu_fallback", ExtraKind::kCpuFallback}, {"stub", ExtraKind::kStub}};
  std::vector<ExtraRegistration> out;
  std::unordered_map<std::string, int> seen;
  std::istringstream in(text);
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    const size_t op_end = line.find_first_of(" \t", first);
    const size_t kind_begin = op_end == std::string::npos ? std::string::npos : line.find_first_not_of(" \t", op_end);
    if (kind_begin == std::string::npos) {
      throw UserError("expected 'operator<TAB>kind'", {file, lineno, static_cast<int>(first) + 1});
    }
    const size_t kind_end = line.find_first_of(" \t", kind_begin);
    if (kind_end != std::string::npos && line.find_first_not_of(" \t", kind_end) != std::string::npos) {
      throw UserError("expected two columns, 'operator<TAB>kind'",
                      {file, lineno, static_cast<int>(line.find_first_not_of(" \t", kind_end)) + 1});
    }
    ExtraRegistration reg;
    reg.op = line.substr(first, op_end - first);
    if (reg.op.find("::") == std::string::npos) reg.op = "aten::" + reg.op;
    reg.where = {file, lineno, static_cast<int>(first) + 1};
    const std::string kind =
        line.substr(kind_begin, kind_end == std::string::npos ? std::string::npos : kind_end - kind_begin);
    auto it = kKinds.find(kind);
    if (it == kKinds.end()) {
      throw UserError(fmt::format("unknown kind '{}', expected native, cpu_fallback or stub{}", kind,
                                  did_you_mean(kind, {"native", "cpu_fallback", "stub"})),
                      {file, lineno, static_cast<int>(kind_begin) + 1});
    }
    reg.kind = it->second;
    if (auto [prev, inserted] = seen.emplace(reg.op, lineno); !inserted) {
      throw UserError(fmt::format("'{}' is listed twice (first on line {})", reg.op, prev->second), reg.where);
    }
    out.push_back(std::move(reg));
  }
  return out;
}

std::vector<ExtraRegistration> read_extra_registrations(const std::string& path) {
  return parse_extra_registrations(read_file(path), path);
}

}  // namespace mps_audit
