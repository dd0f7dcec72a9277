// Writing outputs so that a reader never sees half a file: write a temporary file beside the target,
// then rename it over the target.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

namespace mps_audit {

// Replaces `path` with `content` atomically; throws UserError when the file cannot be written.
void write_file_atomically(const std::string& path, std::string_view content);

// A command's output: to `out` when `output` is empty or "-", else into that file, atomically.
void emit(const std::string& text, const std::string& output, std::ostream& out);

// Reads a whole file; throws UserError naming the file when it is missing or unreadable.
std::string read_file(const std::string& path);

}  // namespace mps_audit
