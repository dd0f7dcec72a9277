// Small text helpers shared by the diagnostics: "did you mean" suggestions and splitting.
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

// Splits on `sep`, trimming spaces around each piece and dropping empty pieces.
std::vector<std::string> split_list(std::string_view text, char sep = ',');

}  // namespace mps_audit
