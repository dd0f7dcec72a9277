// Errors caused by the user's input (files, flags) and how they are printed: one line,
// "error: FILE:LINE:COL: message", exit code 2. Our own invariants use MPS_AUDIT_ASSERT instead.
#pragma once

#include <stdexcept>
#include <string>

namespace mps_audit {

// Exit codes of the mps-audit binary. See cli/main.cc.
enum ExitCode : int {
  kExitOk = 0,          // ran; nothing regressed
  kExitGateFailed = 1,  // ran; the gate failed
  kExitBadInput = 2,    // bad input or tool error
};

// A place in a user's file. line and column are 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  std::string to_string() const;  // "file:line:col", "file:line", "file" or ""
};

// Thrown for bad user input; the CLI prints it with format_diagnostic() and exits with kExitBadInput.
class UserError : public std::runtime_error {
 public:
  explicit UserError(std::string message, SourceLocation where = {});
  const SourceLocation& where() const { return where_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string message_;
};

// "error: opspec.yaml:42:7: unknown dtype 'flaot32'"
std::string format_diagnostic(const UserError& e);

// Thrown where the tool itself cannot run a call as its target would (the MPS emulator cannot hold a sparse result on
// emulated MPS): the probe's outcome is then "not judged", with this message, never an error of the operator's.
class NotJudged : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown by an emulated kernel where a real Mac's process would abort (a limit of MPS, emu/mps_limits.h): the probe's
// outcome is a crash, with this message; the emulated process goes on.
class DeviceAbort : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void assertion_failed(const char* condition, const char* file, int line, const std::string& message);

}  // namespace mps_audit

// For our own invariants (never for user input): aborts with the condition and where it failed.
#define MPS_AUDIT_ASSERT(cond, message)                                               \
  do {                                                                                \
    if (!(cond)) ::mps_audit::assertion_failed(#cond, __FILE__, __LINE__, (message)); \
  } while (false)
