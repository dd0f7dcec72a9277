// Edit-distance suggestions and list splitting.
#include "common/text.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

namespace mps_audit {

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions and swaps of neighbours cost 1 each,
  // so that "MSP" is one edit from "MPS".
  const size_t w = b.size() + 1;
  std::vector<size_t> d((a.size() + 1) * w);
  for (size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t best = std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1, d[(i - 1) * w + j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        best = std::min(best, d[(i - 2) * w + j - 2] + 1);
      }
      d[i * w + j] = best;
    }
  }
  return d[a.size() * w + b.size()];
}

std::vector<std::string> nearest_names(std::string_view word, const std::vector<std::string>& candidates,
                                       size_t limit) {
  // A typo is at most a third of the word off (and at least one edit is always allowed).
  const size_t max_distance = std::max<size_t>(1, word.size() / 3);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d <= max_distance) scored.emplace_back(d, c);
  }
  std::sort(scored.begin(), scored.end());
  scored.erase(std::unique(scored.begin(), scored.end()), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && out.size() < limit; ++i) out.push_back(scored[i].second);
  return out;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  auto near = nearest_names(word, candidates);
  if (near.empty()) return "";
  std::string list;
  for (size_t i = 0; i < near.size(); ++i) {
    if (i > 0) list += (i + 1 == near.size()) ? " or " : ", ";
    list += fmt::format("'{}'", near[i]);
  }
  return fmt::format(" (did you mean {}?)", list);
}

std::vector<std::string> split_list(std::string_view text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view piece = text.substr(start, end - start);
    while (!piece.empty() && (piece.front() == ' ' || piece.front() == '\t')) piece.remove_prefix(1);
    while (!piece.empty() && (piece.back() == ' ' || piece.back() == '\t')) piece.remove_suffix(1);
    if (!piece.empty()) out.emplace_back(piece);
    start = end + 1;
  }
  return out;
}

std::string base_operator_name(const std::string& op) {
  return op.substr(0, op.find('.', op.find("::")));
}

int compare_versions(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  for (int i = 0; i < 3; ++i) {
    long x = 0, y = 0;
    std::string part;
    if (std::getline(sa, part, '.')) x = std::strtol(part.c_str(), nullptr, 10);
    if (std::getline(sb, part, '.')) y = std::strtol(part.c_str(), nullptr, 10);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

std::string content_hash(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("fnv1a64:{:016x}", h);
}

std::string first_line(std::string_view text, bool trim_trailing_spaces) {
  std::string line(text.substr(0, text.find('\n')));
  while (trim_trailing_spaces && !line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

}  // namespace mps_audit
