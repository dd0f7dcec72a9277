# A formula of mps-audit that does not parse (its install method lacks its `end`), which
# tests/homebrew/check_formula.rb must reject (ctest packaging.homebrew_broken_formula_fails).
class MpsAudit < Formula
  desc "Which PyTorch operators run natively on Apple's MPS backend, which fall back"
  homepage "file:///nowhere/mps-audit"
  head "file:///nowhere/mps-audit", using: :git, branch: "main"

  depends_on "cmake" => :build
  depends_on "pytorch"

  def install
    system "cmake", "-S", ".", "-B", "build", *std_cmake_args
    system "cmake", "--build", "build"
    system "cmake", "--install", "build"

  test do
    system bin/"mps-audit", "--version"
  end
end
