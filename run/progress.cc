// The progress line of a run: see progress.h.
#include "run/progress.h"

#include <fmt/format.h>

namespace mps_audit {

void Progress::update(size_t done, const ProbeResult& last) {
  if (!enabled_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double eta = done ? elapsed / static_cast<double>(done) * static_cast<double>(total_ - done) : 0;
  const int percent = total_ ? static_cast<int>(100 * done / total_) : 100;
  if (tty_) {
    err_ << fmt::format("\r[{}/{}] {:3d}% ETA {:4.0f}s  {:<48.48}", done, total_, percent, eta,
                        last.op + " " + last.dtype)
         << std::flush;
    if (done == total_) err_ << "\n";
  } else if (percent >= next_percent_ || done == total_) {
    err_ << fmt::format("progress on {}: {}/{} probes ({}%), {:.0f}s elapsed, ETA {:.0f}s\n", where_, done, total_,
                        percent, elapsed, eta);
    next_percent_ = percent / 10 * 10 + 10;
  }
}

}  // namespace mps_audit
