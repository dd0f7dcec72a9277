// The lock on a run's output folder: see folder_lock.h.
#include "run/folder_lock.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/diagnostics.h"
#include "common/paths.h"

namespace mps_audit {
namespace {

constexpr const char* kLockFile = ".mps-audit.lock";

}  // namespace

FolderLock::FolderLock(const std::string& dir) : path_(join_path(dir, kLockFile)) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw UserError(fmt::format("cannot create the lock file: {}", std::strerror(errno)), {path_});
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    std::string holder(32, '\0');
    const ssize_t n = ::pread(fd_, holder.data(), holder.size(), 0);
    holder.resize(n > 0 ? static_cast<size_t>(n) : 0);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
    ::close(fd_);
    throw UserError(fmt::format("{} is in use by another run{}: wait for it to end, or use another --out", dir,
                                holder.empty() ? "" : " (pid " + holder + ")"));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
}

FolderLock::~FolderLock() {
  ::close(fd_);
}

}  // namespace mps_audit
