// Formatting of user-facing diagnostics.
#include "common/diagnostics.h"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace mps_audit {

std::string SourceLocation::to_string() const {
  if (file.empty()) return "";
  if (line <= 0) return file;
  if (column <= 0) return fmt::format("{}:{}", file, line);
  return fmt::format("{}:{}:{}", file, line, column);
}

UserError::UserError(std::string message, SourceLocation where)
    : std::runtime_error(message), where_(std::move(where)), message_(std::move(message)) {}

std::string format_diagnostic(const UserError& e) {
  std::string where = e.where().to_string();
  if (where.empty()) return fmt::format("error: {}", e.message());
  return fmt::format("error: {}: {}", where, e.message());
}

void assertion_failed(const char* condition, const char* file, int line, const std::string& message) {
  std::fprintf(stderr, "mps-audit: internal error at %s:%d: %s (%s)\n", file, line, message.c_str(), condition);
  std::abort();
}

}  // namespace mps_audit
