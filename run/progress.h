// The progress line of a run on standard error: a line that redraws itself on a terminal, else a line per tenth.
#pragma once

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

#include "results/result.h"

namespace mps_audit {

class Progress {
 public:
  Progress(std::ostream& err, size_t total, bool enabled, bool tty, std::string where)
      : err_(err), total_(total), enabled_(enabled), tty_(tty), where_(std::move(where)) {}
  // After each record; `done` of the total are recorded, `last` the newest.
  void update(size_t done, const ProbeResult& last);

 private:
  std::ostream& err_;
  size_t total_;
  bool enabled_, tty_;
  std::string where_;
  int next_percent_ = 10;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace mps_audit
