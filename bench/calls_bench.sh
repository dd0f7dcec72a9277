#!/bin/sh
# What recording a program costs, and how long replaying a recording takes (docs/benchmarks.md).
#
#   bench/calls_bench.sh [BINARY] [PYTHON]      (defaults: build/mps-audit, /usr/bin/python3)
#
# 1. The seed example's training step (examples/train_simple_cnn.py: SimpleCNN, CrossEntropyLoss, Adam, a batch of
#    64x3x32x32) alone and under `mps-audit record`, five runs each, alternating: whole-process wall time.
#    And 20 steps, where the steps, not Python and torch starting, take most of the time.
# 2. The same program for 68 steps (about 10,000 ATen calls) recorded once, then replayed with `model --calls` on
#    emulated 1.13.1 and 2.11.0, three runs each.
set -eu
bin=${1:-build/mps-audit}
py=${2:-/usr/bin/python3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

for steps in 1 20; do
  rm -f "$dir/plain" "$dir/recorded"
  for i in 1 2 3 4 5; do
    t0=$(now); "$py" examples/train_simple_cnn.py --steps $steps >/dev/null; t1=$(now)
    "$bin" record -o "$dir/cnn.pt" -- "$py" examples/train_simple_cnn.py --steps $steps >/dev/null 2>&1; t2=$(now)
    echo "$t0 $t1" | awk '{print $2-$1}' >>"$dir/plain"
    echo "$t1 $t2" | awk '{print $2-$1}' >>"$dir/recorded"
  done
  plain=$(median <"$dir/plain"); recorded=$(median <"$dir/recorded")
  echo "seed example, $steps step(s): alone $plain s, recorded $recorded s (median of 5):" \
       "$(echo "$recorded $plain" | awk '{printf "%.2f", $1/$2}')x"
done

"$bin" record -o "$dir/steps.pt" -- "$py" examples/train_simple_cnn.py --steps 68 2>"$dir/record.err" >/dev/null
echo "68 steps: $(tail -n 1 "$dir/record.err")"
for release in 1.13.1 2.11.0; do
  for i in 1 2 3; do
    t0=$(now)
    "$bin" model --calls "$dir/steps.pt" --target mps-emu --emu-release "$release" --out "$dir/out" >/dev/null 2>&1
    t1=$(now)
    echo "$t0 $t1" | awk '{print $2-$1}'
  done | median >"$dir/replay"
  echo "replay on emulated $release: $(cat "$dir/replay") s (median of 3, $(nproc) cores)"
done
