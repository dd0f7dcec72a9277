// Atomic file replacement and whole-file reads with user-facing errors.
#include "common/output_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

#include "common/diagnostics.h"
#include "common/paths.h"

namespace mps_audit {

void write_file_atomically(const std::string& path, std::string_view content) {
  const std::string dir = parent_path(path);
  make_directories(dir);
  const std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  std::string tmpl = join_path(dir, "." + base + ".XXXXXX");
  int fd = mkstemp(tmpl.data());
  if (fd < 0) throw UserError("cannot create a file in '" + dir + "': " + std::strerror(errno));
  // mkstemp creates the file 0600; give it the mode any new file gets (0666 less the umask).
  const mode_t umask_now = ::umask(0);
  ::umask(umask_now);
  ::fchmod(fd, 0666 & ~umask_now);
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string err = std::strerror(errno);
      ::close(fd);
      std::remove(tmpl.c_str());
      throw UserError("cannot write '" + path + "': " + err);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || std::rename(tmpl.c_str(), path.c_str()) != 0) {
    std::string err = std::strerror(errno);
    std::remove(tmpl.c_str());
    throw UserError("cannot write '" + path + "': " + err);
  }
}

std::string read_file(const std::string& path) {
  if (is_directory(path)) throw UserError("is a directory, expected a file", {path});
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw UserError(std::string("cannot read file: ") + std::strerror(errno), {path});
  // Read at its size, once: a stream buffer's copy doubled what the plan's readers touched (samples.pt is 30 MB).
  const std::streamoff size = in.tellg();
  std::string text;
  if (size > 0) {
    text.resize(static_cast<size_t>(size));
    in.seekg(0);
    in.read(text.data(), size);
    text.resize(static_cast<size_t>(in.gcount()));  // shorter than it said: what there was
  }
  // A file that is not its size (a pipe, /proc) is read to its end.
  if (in.good() && in.peek() != std::ifstream::traits_type::eof()) {
    std::ostringstream rest;
    rest << in.rdbuf();
    text += rest.str();
  }
  if (in.bad()) throw UserError("cannot read file", {path});
  return text;
}

void emit(const std::string& text, const std::string& output, std::ostream& out) {
  if (output.empty() || output == "-") {
    out << text;
  } else {
    write_file_atomically(output, text);
  }
}

}  // namespace mps_audit
