// The lock on a run's output folder: two runs never write one journal.
#pragma once

#include <string>

namespace mps_audit {

// Holds an exclusive flock on DIR/.mps-audit.lock while it lives; throws UserError naming the run that holds it. The
// descriptor is close-on-exec, so workers do not inherit it (a worker outliving its parent would otherwise keep the
// folder locked).
class FolderLock {
 public:
  explicit FolderLock(const std::string& dir);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace mps_audit
