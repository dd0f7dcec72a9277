# Finds the dependencies and gives each one target name, whatever version of the package provides it.
#   mps_audit::torch      libtorch (Debian's libtorch-dev, or a torch wheel's via Torch_DIR / CMAKE_PREFIX_PATH)
#   mps_audit::yaml_cpp   yaml-cpp (its exported target was renamed in 0.8)
#   mps_audit::fmt        fmt (header-only when libtorch ships its own fmt headers)
#   nlohmann_json::nlohmann_json, CLI11::CLI11, GTest::gtest_main, benchmark::benchmark

find_package(Torch REQUIRED)
# The oldest libtorch the compatibility layer knows (common/torch_compat.h); docs/building.md lists those tested.
if(Torch_VERSION VERSION_LESS 1.13)
  message(FATAL_ERROR "libtorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX} is too old: mps-audit supports libtorch 1.13 "
                      "to 2.15 (Debian bookworm's 1.13.1, Debian unstable's 2.14.1, or a torch wheel's via TORCH_PREFIX)")
endif()
add_library(mps_audit_torch INTERFACE)
# TORCH_LIBRARIES names libtorch (and libtorch_cuda on CUDA builds) with their include directories and flags.
target_link_libraries(mps_audit_torch INTERFACE ${TORCH_LIBRARIES})
target_include_directories(mps_audit_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
separate_arguments(_torch_cxx_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
target_compile_options(mps_audit_torch INTERFACE ${_torch_cxx_flags})
add_library(mps_audit::torch ALIAS mps_audit_torch)
message(STATUS "libtorch: ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}")

find_package(yaml-cpp REQUIRED)
add_library(mps_audit_yaml_cpp INTERFACE)
if(TARGET yaml-cpp::yaml-cpp)
  target_link_libraries(mps_audit_yaml_cpp INTERFACE yaml-cpp::yaml-cpp)
else()
  target_link_libraries(mps_audit_yaml_cpp INTERFACE yaml-cpp)
  if(YAML_CPP_INCLUDE_DIR)
    target_include_directories(mps_audit_yaml_cpp SYSTEM INTERFACE ${YAML_CPP_INCLUDE_DIR})
  endif()
endif()
add_library(mps_audit::yaml_cpp ALIAS mps_audit_yaml_cpp)

# fmt: torch wheels ship fmt's headers (of their own, newer version) in their include folder, which comes before
# /usr/include on the command line. Compiling against those headers but linking the system's libfmt fails, so with
# such a libtorch fmt is used header-only, from the headers that are found first.
add_library(mps_audit_fmt INTERFACE)
if(EXISTS "${TORCH_INSTALL_PREFIX}/include/fmt/format.h" AND NOT TORCH_INSTALL_PREFIX MATCHES "^/usr(/local)?/?$")
  message(STATUS "fmt: header-only, from ${TORCH_INSTALL_PREFIX}/include (shipped with libtorch)")
  target_compile_definitions(mps_audit_fmt INTERFACE FMT_HEADER_ONLY=1)
else()
  find_package(fmt REQUIRED)
  target_link_libraries(mps_audit_fmt INTERFACE fmt::fmt)
endif()
add_library(mps_audit::fmt ALIAS mps_audit_fmt)
find_package(nlohmann_json 3.9 REQUIRED)

find_package(CLI11 CONFIG QUIET)
if(NOT TARGET CLI11::CLI11)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()

if(MPS_AUDIT_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(MPS_AUDIT_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()
