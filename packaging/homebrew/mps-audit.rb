# Homebrew formula: builds mps-audit from a git repository with CMake against Homebrew's libtorch (the `pytorch`
# formula), or a torch wheel's, and installs it like any other tool (docs/building.md, "macOS with Homebrew").
# tests/homebrew/check_formula.rb checks it against a stub of Homebrew's formula DSL (ctest -R packaging.homebrew).
class MpsAudit < Formula
  # No release tarball or public repository is published, so the formula builds HEAD of branch main of the repository
  # named by $HOMEBREW_MPS_AUDIT_REPO: a git URL, or the path of a clone. brew drops every variable from the
  # environment that is not HOMEBREW_*, hence the prefix. Unset, it is the clone this file lies in, so that the formula
  # loads without it; a copy in a tap lies in no clone, and git then fails to clone that folder.
  REPO = ENV.fetch("HOMEBREW_MPS_AUDIT_REPO") do
    File.expand_path("../../..", File.exist?(__FILE__) ? File.realpath(__FILE__) : __FILE__)
  end
  # A clone's path as a file:// URL, the form Homebrew's git download takes; a URL (or user@host:path) as it is.
  REPO_URL = File.directory?(REPO) ? "file://#{File.expand_path(REPO)}" : REPO

  desc "Which PyTorch operators run natively on Apple's MPS backend, which fall back"
  homepage REPO_URL
  license "BSD-3-Clause"
  head REPO_URL, using: :git, branch: "main"

  depends_on "cmake" => :build
  depends_on "ninja" => :build
  # Header-only: needed to compile, not at run time.
  depends_on "cli11" => :build
  depends_on "nlohmann-json" => :build
  depends_on "fmt"
  depends_on "pytorch"
  depends_on "yaml-cpp"

  def install
    # Homebrew's pytorch links its libtorch's CMake package into its prefix (share/cmake/Torch). A torch wheel's
    # libtorch instead, the release a Python here imports and so the one to audit:
    # HOMEBREW_TORCH_PREFIX=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)'). It must lie outside
    # the home folder, which the build sandbox does not let the build read.
    torch_prefix = ENV.fetch("HOMEBREW_TORCH_PREFIX", Formula["pytorch"].opt_prefix.to_s)

    args = %W[
      -DCMAKE_PREFIX_PATH=#{torch_prefix}
      -DMPS_AUDIT_BUILD_TESTS=OFF
      -DMPS_AUDIT_BUILD_BENCHMARKS=OFF
      -DCCACHE_PROGRAM=OFF
    ]
    # CCACHE_PROGRAM=OFF: ccache, found in Homebrew's prefix, would write its cache outside the build sandbox.
    system "cmake", "-S", ".", "-B", "build", "-G", "Ninja", *args, *std_cmake_args
    system "cmake", "--build", "build"
    # bin/mps-audit, and beside it share/mps-audit (opspec.yaml, data/), where the binary finds them from any folder,
    # and share/doc/mps-audit.
    system "cmake", "--install", "build"
  end

  test do
    assert_match "mps-audit", shell_output("#{bin}/mps-audit --version")
    # Emulated MPS works on any machine; a shipped release, since Homebrew's libtorch may be one that is not.
    system bin/"mps-audit", "run", "--target", "mps-emu", "--emu-release", "2.11.0", "--ops", "^aten::abs$",
           "--dtypes", "float32", "--format", "json", "--no-progress", "--out", testpath/"out"
    assert_path_exists testpath/"out/results.json"
    # From an empty folder, the spec it used is the installed one, found beside the binary.
    assert_match %r{"spec": "[^"]*/share/mps-audit/opspec\.yaml"}, (testpath/"out/results.json").read
  end
end
