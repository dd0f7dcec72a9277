// Markdown with a size limit: tables fill what is left of it, and the text says what was left out (GitHub
// truncates comments at 65,536 characters). Shared by the Markdown reports of run, diff and compare.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "results/analysis.h"

namespace mps_audit {

class MarkdownWriter {
 public:
  // `rest_is_in` ends the sentence "Every row left out is in ...".
  MarkdownWriter(size_t limit, std::string rest_is_in)
      : limit_(limit > kReserve ? limit - kReserve : 0), rest_is_in_(std::move(rest_is_in)) {}
  // Adds text that fits; returns whether it did. Text that does not fit is dropped and named in the closing lines.
  bool add(const std::string& text) {
    if (out_.size() + text.size() >= limit_) {
      left_out_.push_back(fmt::format("a section ({} characters)", text.size()));
      return false;
    }
    out_ += text;
    return true;
  }
  // A collapsible <details> section whose content `body` adds; nothing of it when even its opening does not fit.
  template <typename Body>
  void details(const std::string& summary, Body&& body, bool open = false) {
    if (!add(fmt::format("\n<details{}><summary>{}</summary>\n\n", open ? " open" : "", summary))) return;
    body();
    out_ += "\n</details>\n";  // from the reserve
  }
  // A table: as many rows as fit, at most `max_rows`, then a line saying how many are not shown.
  void table(const std::string& head, const std::vector<std::string>& rows, const std::string& what,
             size_t max_rows = SIZE_MAX) {
    if (rows.empty()) return;
    if (out_.size() + head.size() >= limit_) {
      left_out_.push_back(fmt::format("{} ({} rows)", what, rows.size()));
      return;
    }
    out_ += head;
    size_t shown = 0;
    for (const auto& row : rows) {
      if (shown == max_rows) {
        out_ += fmt::format("\n_The first {} of {} rows; every row is in {}._\n", shown, rows.size(), rest_is_in_);
        return;
      }
      if (out_.size() + row.size() >= limit_) break;
      out_ += row;
      ++shown;
    }
    if (shown < rows.size()) {
      out_ += fmt::format("\n_{} of {} rows shown; the rest did not fit._\n", shown, rows.size());
      left_out_.push_back(fmt::format("{} ({} of {} rows)", what, rows.size() - shown, rows.size()));
    }
  }
  bool full() const { return out_.size() >= limit_; }
  std::string finish() {
    if (!left_out_.empty()) {
      std::string list = fmt::format("{}", fmt::join(left_out_, "; "));
      if (list.size() > kReserve / 2) list = list.substr(0, list.rfind("; ", kReserve / 2)) + "; and more";
      out_ += fmt::format("\n---\nLeft out to stay within {} characters: {}. Every row left out is in {}.\n",
                          limit_ + kReserve, list, rest_is_in_);
    }
    return std::move(out_);
  }

 private:
  static constexpr size_t kReserve = 600;  // kept back for the closing lines
  size_t limit_;
  std::string rest_is_in_;
  std::string out_;
  std::vector<std::string> left_out_;
};

// " ✓ | ↓ |  |": one matrix row's cells, a verdict symbol per dtype (empty where the dtype has no record).
inline std::string verdict_cells(const std::vector<std::string>& dtypes,
                                 const std::map<std::string, Verdict>& by_dtype) {
  std::string row;
  for (const auto& d : dtypes) {
    auto it = by_dtype.find(d);
    row += fmt::format(" {} |", it == by_dtype.end() ? "" : std::string(verdict_symbol(it->second)));
  }
  return row;
}

}  // namespace mps_audit
