// A shard of a run: the K-th of N slices of its plan (`run --shard K/N`), as results.json records it and `merge`
// reads it back.
#pragma once

#include <cstddef>
#include <string>

namespace mps_audit {

struct Shard {
  size_t index = 0, count = 0;    // 1-based index of `count` shards; count 0: the whole plan
  std::string to_string() const;  // "2/3", or "" for the whole plan
};
// "K/N" with 1 <= K <= N; throws UserError otherwise.
Shard parse_shard(const std::string& text);

}  // namespace mps_audit
