# A broken formula of mps-audit, which tests/homebrew/check_formula.rb must reject (ctest
# packaging.homebrew_broken_formula_fails): it loads, but it does not depend on pytorch, turns off an option
# CMakeLists.txt does not have (MPS_AUDIT_BUILD_TEST, not ..._TESTS), ignores HOMEBREW_TORCH_PREFIX, never installs,
# and has no test block.
class MpsAudit < Formula
  desc "Which PyTorch operators run natively on Apple's MPS backend, which fall back"
  homepage "file:///nowhere/mps-audit"
  head "file:///nowhere/mps-audit", using: :git, branch: "main"

  depends_on "cmake" => :build
  depends_on "ninja" => :build
  depends_on "cli11" => :build
  depends_on "nlohmann-json" => :build
  depends_on "fmt"
  depends_on "yaml-cpp"

  def install
    system "cmake", "-S", ".", "-B", "build", "-G", "Ninja", "-DCMAKE_PREFIX_PATH=#{Formula["pytorch"].opt_prefix}",
           "-DMPS_AUDIT_BUILD_TEST=OFF", "-DMPS_AUDIT_BUILD_BENCHMARKS=OFF", "-DCCACHE_PROGRAM=OFF", *std_cmake_args
    system "cmake", "--build", "build"
  end
end
