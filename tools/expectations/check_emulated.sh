#!/usr/bin/env bash
# The expectations' goal, measured: the default audit on emulated MPS of a release, with PyTorch's expectations
# applied and without, on each macOS version the emulator takes, and for each run the share of the op x dtype pairs
# that the release's own lists expect to fail (forward scope, conditions read for that macOS) that it reports as a
# plain pass (tools/expectations/check_plain_pass.py). docs/expectations.md records the figures.
#
# usage: tools/expectations/check_emulated.sh RELEASE [BINARY]   (RELEASE: 2.11.0; BINARY: build/mps-audit)
# Environment: OUT (default ./expectations-check), PYTHON (default /usr/bin/python3, else python3).
set -euo pipefail
cd "$(dirname "$0")/../.."
release=${1:?usage: tools/expectations/check_emulated.sh RELEASE [BINARY]}
binary=${2:-build/mps-audit}
data=data/pytorch-$release
[ -f "$data/mps_expectations.tsv" ] || { echo "error: $data/mps_expectations.tsv: no such file" >&2; exit 2; }
python=${PYTHON:-$([ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)}
out=${OUT:-$PWD/expectations-check}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
summary=$out/summary-$release.txt
: >"$summary"
for macos in 13 14 15 26; do
  for mode in off auto; do
    "$binary" run --target mps-emu --emu-release "$data" --emu-macos "$macos" --expectations "$mode" \
      --out "$work/$macos-$mode" --format json --no-progress >"$work/$macos-$mode.txt" 2>&1
    "$python" tools/expectations/check_plain_pass.py "$work/$macos-$mode/results.json" \
      "$data/mps_expectations.tsv" --macos "$macos.0" --no-global >"$work/$macos-$mode.check"
    line=$(head -1 "$work/$macos-$mode.check")
    echo "PyTorch $release, macOS $macos, expectations $mode: $line" | tee -a "$summary"
  done
  grep -E '^  (known_failure|unsupported|pass) ' "$work/$macos-auto.txt" | sed "s/^/  macOS $macos: /" | tee -a "$summary"
  cp "$work/$macos-auto.check" "$out/plain-passes-$release-macos$macos.txt"
done
