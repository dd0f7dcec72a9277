// Small text helpers: "did you mean" suggestions for diagnostics, splitting, first lines, operator names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mps_audit {

// Edit distance (optimal string alignment: a swap of neighbours is one edit), case-sensitive.
size_t edit_distance(std::string_view a, std::string_view b);

// Up to `limit` candidates closest to `word`, nearest first, ignoring ones too far off to be a typo.
std::vector<std::string> nearest_names(std::string_view word, const std::vector<std::string>& candidates,
                                       size_t limit = 3);

// " (did you mean 'a' or 'b'?)" or "" when there is nothing close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// A qualified operator name without its overload: "aten::add.Tensor" -> "aten::add" (a bare one is returned as it
// is).
std::string base_operator_name(const std::string& op);

// A content hash (64-bit FNV-1a, hex: "fnv1a64:..."), for telling a changed file or plan from a recorded one; not for
// security.
std::string content_hash(const std::string& text);

// Compares dotted versions numerically ("2.10" > "2.9"); missing components count as 0.
int compare_versions(const std::string& a, const std::string& b);

// Splits on `sep`, trimming spaces around each piece and dropping empty pieces.
std::vector<std::string> split_list(std::string_view text, char sep = ',');

// The text up to its first line break (all of it when it has none), for the one line an error or a warning is shown
// as; with `trim_trailing_spaces`, without the spaces that end that line.
std::string first_line(std::string_view text, bool trim_trailing_spaces = false);

}  // namespace mps_audit
