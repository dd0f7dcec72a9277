// Entry point of the emulator tests: activates the MPS emulator once for the process, with the release and macOS
// version that ctest chooses (tests/CMakeLists.txt runs this binary once per configuration):
//   MPS_AUDIT_TEST_EMU_RELEASE  release folder (default: the one matching the linked libtorch)
//   MPS_AUDIT_TEST_EMU_MACOS    macOS major version of the data type rules (default 14)
// PYTORCH_ENABLE_MPS_FALLBACK and MPS_AUDIT_EMU_FAULTS are read by the emulator itself, as in real use.
#include <cstdlib>
#include <iostream>

#include <gtest/gtest.h>

#include "common/diagnostics.h"
#include "emu/mps_emulator.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  mps_audit::emu::EmulatorOptions options;
  if (const char* r = std::getenv("MPS_AUDIT_TEST_EMU_RELEASE")) options.release_dir = r;
  if (const char* m = std::getenv("MPS_AUDIT_TEST_EMU_MACOS")) options.macos_major = std::atoi(m);
  try {
    const mps_audit::emu::EmulatorInfo info = mps_audit::emu::activate_mps_emulator(options);
    std::cout << info.label() << ": " << info.native_kernels << " native kernels, " << info.cpu_fallback_kernels
              << " always-CPU, " << info.stub_kernels << " stubs, " << info.absent_ops.size()
              << " operators absent from this libtorch; fallback " << (info.fallback_enabled ? "on" : "off") << "\n";
  } catch (const mps_audit::UserError& e) {
    std::cerr << mps_audit::format_diagnostic(e) << "\n";
    return 2;
  }
  return RUN_ALL_TESTS();
}
