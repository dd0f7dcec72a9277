// Path and folder helpers on POSIX calls.
//
// Note [No std::filesystem]
// Torch wheels are built with an older libstdc++ whose std::filesystem internals libtorch carries with it;
// a binary compiled by a newer g++ that links such a libtorch can call into those copies with its own newer
// inline code, and std::filesystem::remove_all crashed that way against torch 2.11. These few helpers on
// stat/mkdir/opendir avoid the question; use them instead of std::filesystem anywhere in this project.
#pragma once

#include <string>
#include <vector>

namespace mps_audit {

bool path_exists(const std::string& path);
bool is_directory(const std::string& path);
// Creates the folder and its missing parents; throws UserError when one cannot be made.
void make_directories(const std::string& path);
// "a/b" for "a/b/c" and "a/b/c/", "." for "c", "/" for "/c".
std::string parent_path(const std::string& path);
// "c" for "a/b/c" and "a/b/c/"; the absolute path is resolved first, so "." gives the current folder's name.
std::string folder_name(const std::string& path);
std::string join_path(const std::string& a, const std::string& b);
// Names in a folder (no "." or ".."), sorted; empty when it cannot be read.
std::vector<std::string> list_directory(const std::string& path);

}  // namespace mps_audit
