#!/usr/bin/env bash
# Runs a make target (default: test) against the newest torch Debian ships: inside a Debian unstable root that this
# script makes with debootstrap and keeps for the next run, with this checkout mounted at its own path and built in
# its own folder (build-newest). Only Debian's packages go into the root: scripts/setup.sh installs them there as it
# does on the host. `make test-newest` calls this; .ci/run calls it after `make test`.
#
#   scripts/newest_torch.sh [TARGET...]      make TARGET... there: test (the default), audit, build, ...
#   scripts/newest_torch.sh run CMD [ARG...]  run a command there, in this checkout (e.g. python3 tools/...)
#   scripts/newest_torch.sh shell            an interactive shell there
#
# Environment:
#   MPS_AUDIT_NEWEST_ROOT    where the root lives (default /var/lib/mps-audit/debian-sid); made when missing
#   MPS_AUDIT_NEWEST_MIRROR  the Debian mirror (default http://deb.debian.org/debian)
#   MPS_AUDIT_NEWEST_SUITE   the suite (default sid)
#   CI, JOBS, CMAKE_FLAGS    passed to make inside the root
# Needs root (or sudo) for debootstrap, chroot and the bind mounts. Exit status: the make target's; 2 when the root
# cannot be made.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
root="${MPS_AUDIT_NEWEST_ROOT:-/var/lib/mps-audit/debian-sid}"
mirror="${MPS_AUDIT_NEWEST_MIRROR:-http://deb.debian.org/debian}"
suite="${MPS_AUDIT_NEWEST_SUITE:-sid}"
build_dir="${MPS_AUDIT_NEWEST_BUILD_DIR:-build-newest}"
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(test)

if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "error: $0 needs root (or sudo) for debootstrap and chroot" >&2; exit 2; }
  exec sudo --preserve-env=CI,JOBS,CMAKE_FLAGS,MPS_AUDIT_NEWEST_ROOT,MPS_AUDIT_NEWEST_MIRROR,MPS_AUDIT_NEWEST_SUITE \
    "$0" "$@"
fi
[ "$(uname -s)" = Linux ] || { echo "error: $0 runs on Linux (a Debian unstable root)" >&2; exit 2; }
# Each run mounts in a mount namespace of its own: its mounts are seen by nothing else and go with it, so runs side by
# side (a build, and a command beside it) never unmount each other's.
if [ -z "${MPS_AUDIT_NEWEST_NAMESPACE:-}" ]; then
  exec env MPS_AUDIT_NEWEST_NAMESPACE=1 unshare --mount --propagation private "$0" "$@"
fi

# The root: made once (debootstrap into a folder beside it, moved into place when complete, so that an interrupted
# run leaves no half-made root behind), then reused. Its mirror's Release file may be past its Valid-Until date
# (snapshots are), which apt would refuse.
make_root() {
  command -v debootstrap >/dev/null || {
    command -v apt-get >/dev/null || { echo "error: debootstrap is missing and there is no apt-get" >&2; exit 2; }
    echo "newest torch: installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  }
  local partial="$root.partial"
  rm -rf "$partial"
  mkdir -p "$(dirname "$root")"
  echo "newest torch: making a Debian $suite root in $root (debootstrap, once)"
  if ! debootstrap --variant=minbase "$suite" "$partial" "$mirror" >"$partial.log" 2>&1; then
    echo "error: debootstrap $suite into $partial failed; its log: $partial.log" >&2
    exit 2
  fi
  echo 'Acquire::Check-Valid-Until "false";' >"$partial/etc/apt/apt.conf.d/99mps-audit"
  mv "$partial" "$root"
  rm -f "$partial.log"
}
mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
flock 9  # one run makes the root; the others wait for it
[ -f "$root/etc/apt/apt.conf.d/99mps-audit" ] || make_root
flock -u 9
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

# Mounts for the run, in its own namespace: the kernel's file systems, and this checkout at its own path (so that the
# build folder's paths are the same inside and out).
bind() {  # bind SOURCE TARGET-INSIDE-THE-ROOT
  mkdir -p "$root$2"
  mount --rbind "$1" "$root$2"
}
bind /proc /proc
bind /sys /sys
bind /dev /dev
bind "$repo" "$repo"

# Inside: the same setup and make as on the host, with a clean environment. ccache keeps its cache in the root, so a
# reused root rebuilds only what changed.
chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  LANG=C.UTF-8 TERM="${TERM:-dumb}" CI="${CI:-}" ${JOBS:+JOBS="$JOBS"} ${CMAKE_FLAGS:+CMAKE_FLAGS="$CMAKE_FLAGS"} \
  /bin/bash -c '
    set -e
    command -v make >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq make >/dev/null; }
    cd "$1"; shift
    build_dir="$1"; shift
    if [ "$1" = shell ]; then exec /bin/bash -i; fi
    if [ "$1" = run ]; then shift; exec "$@"; fi
    echo "newest torch: $(. /etc/os-release; echo "$PRETTY_NAME"), make $* BUILD_DIR=$build_dir"
    exec make "$@" BUILD_DIR="$build_dir"
  ' newest-torch "$repo" "$build_dir" "${targets[@]}"
