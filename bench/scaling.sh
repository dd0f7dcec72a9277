#!/usr/bin/env bash
# How the audit's time scales with worker processes (-j) and with tensor size, on a fixed subset of operators, so
# that -j 1 stays short. Writes CSV (and each run's results.json under a work folder) for tools/plot_scaling.py.
#
# usage: bench/scaling.sh BINARY TARGET OUT_DIR [JOBS...]
#   BINARY   the mps-audit binary;  TARGET  cpu, mps-emu, cuda, ...;  OUT_DIR  where jobs.csv and size.csv go
#   JOBS     worker counts to try (default: 1 2 4 8 16, capped at twice the cores)
# Environment: SCALING_OPS (regular expression of the subset), SCALING_SIZES (square sizes, default "4 64 256"),
#   SCALING_SPEC (the spec whose default shape is changed, default opspec.yaml).
set -euo pipefail
binary=$1 target=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")/.." && pwd)
spec=${SCALING_SPEC:-$here/opspec.yaml}
ops=${SCALING_OPS:-'^aten::(add|sub|mul|div|sin|cos|exp|log|sqrt|abs|neg|sum|mean|amax|mm|bmm|cat|where|clamp|pow|sigmoid|tanh|relu|gelu|erf|lerp|softmax|_log_softmax|cumsum|sort|topk|index_select|gather|addmm|maximum)(\.|$)'}
sizes=${SCALING_SIZES:-4 64 256}
cores=$(nproc)
jobs=("$@")
[ ${#jobs[@]} -eq 0 ] && for j in 1 2 4 8 16; do [ "$j" -le $((2 * cores)) ] && jobs+=("$j"); done
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One audit: prints "wall_s,user_s,sys_s,records,samples".
audit() {
  local dir=$1
  shift
  local start end
  start=$(date +%s.%N)
  /usr/bin/time -f '%U %S' -o "$dir.time" "$binary" run --target "$target" --ops "$ops" --out "$dir" \
    --format json --no-progress "$@" >/dev/null 2>"$dir.err" || true
  end=$(date +%s.%N)
  python3 - "$dir/results.json" "$start" "$end" "$dir.time" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
user, system = open(sys.argv[4]).read().split()[-2:]
records = doc["results"]
print(f"{float(sys.argv[3]) - float(sys.argv[2]):.2f},{user},{system},{len(records)},"
      f"{sum(r.get('samples', 0) for r in records)}")
PY
}

echo "jobs,wall_s,user_s,sys_s,records,samples" >"$out/jobs.csv"
for j in "${jobs[@]}"; do
  echo "$j,$(audit "$work/j$j" --spec "$spec" -j "$j")" | tee -a "$out/jobs.csv"
done

echo "size,wall_s,user_s,sys_s,records,samples" >"$out/size.csv"
for n in $sizes; do
  # The spec's default shape, which synthesized inputs take; samples the spec spells out keep theirs.
  sed "0,/^  shape: .*/s//  shape: [$n, $n]/" "$spec" >"$work/spec$n.yaml"
  echo "$n,$(audit "$work/s$n" --spec "$work/spec$n.yaml")" | tee -a "$out/size.csv"
done
