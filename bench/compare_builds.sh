#!/usr/bin/env bash
# Two builds of mps-audit side by side on one machine, alternating, so that a change that should not change speed
# can be shown not to (docs/benchmarks.md): the default audit on emulated MPS on two cores (taskset, --jobs 2: this
# project's machine has two), and where CUDA is present the default audit on CUDA, warm (its kernel caches filled
# by a first run of each build, not timed). Every run's records are compared with the other build's: verdict for
# verdict, they must agree.
#
# usage: bench/compare_builds.sh OLD_SOURCE NEW_SOURCE [RUNS]    (folders of the two source trees; RUNS: 3)
# Environment: PYTHON (the python with torch, for its libtorch; default /opt/torch/.venv/bin/python3 when it exists,
# else python3), OUT (default ./compare-builds): times.csv, summary.txt, log.txt; with KEEP=1 also each build's first
# run's results.json, gzipped, for comparing whole records (emu-old-1.json.gz, ..., cuda-new-1.json.gz).
set -euo pipefail
old=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
runs=${3:-3}
out=${OUT:-compare-builds}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=${PYTHON:-$([ -x /opt/torch/.venv/bin/python3 ] && echo /opt/torch/.venv/bin/python3 || echo python3)}
prefix=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')
has_cuda=$("$py" -c 'import torch; print(int(torch.cuda.is_available()))')
work=$(mktemp -d)  # the runs' folders; only the figures go to OUT
trap 'rm -rf "$work"' EXIT
log="$out/log.txt"
: >"$log"
for tree in "$old" "$new"; do
  (cd "$tree" && TORCH_PREFIX="$prefix" MPS_AUDIT_SKIP_SETUP=1 make build BUILD_DIR=build-compare JOBS="$(nproc)" \
     CMAKE_FLAGS="-DCMAKE_BUILD_TYPE=Release -DMPS_AUDIT_BUILD_TESTS=OFF -DMPS_AUDIT_BUILD_BENCHMARKS=OFF") >>"$log" 2>&1
done
# Both read one spec and one set of release data (this repository's, unless MPS_AUDIT_DATA names others), so that
# only the code differs; the two trees need no data/ of their own.
export MPS_AUDIT_DATA=${MPS_AUDIT_DATA:-$(cd "$(dirname "$0")/.." && pwd)}
echo "build,target,run,seconds" >"$out/times.csv"
time_run() {  # build-name binary target run-number folder extra...
  local name=$1 bin=$2 target=$3 k=$4 dir=$5
  shift 5
  local t0 t1
  t0=$(date +%s.%N)
  $bin run --target "$target" --out "$dir" --format json --no-progress "$@" >>"$log" 2>&1 || true
  t1=$(date +%s.%N)
  echo "$name,$target,$k,$(echo "$t0 $t1" | awk '{printf "%.2f", $2-$1}')" >>"$out/times.csv"
}
for k in $(seq 1 "$runs"); do
  for name in old new; do
    tree=$([ $name = old ] && echo "$old" || echo "$new")
    taskset=$(command -v taskset >/dev/null && echo "taskset -c 0,1" || true)
    time_run $name "$taskset $tree/build-compare/mps-audit" mps-emu "$k" "$work/emu-$name-$k" --jobs 2 \
      --emu-release 2.11.0 </dev/null
  done
done
if [ "$has_cuda" = 1 ]; then
  for name in old new; do  # fills each build's kernel caches; not timed
    tree=$([ $name = old ] && echo "$old" || echo "$new")
    "$tree/build-compare/mps-audit" run --target cuda --out "$work/cuda-$name-first" --format json --no-progress >>"$log" 2>&1 || true
  done
  for k in $(seq 1 "$runs"); do
    for name in old new; do
      tree=$([ $name = old ] && echo "$old" || echo "$new")
      time_run $name "$tree/build-compare/mps-audit" cuda "$k" "$work/cuda-$name-$k"
    done
  done
fi
"$py" - "$out" "$work" <<'PY' | tee "$out/summary.txt"
import csv, json, os, sys
figures, out = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(os.path.join(figures, "times.csv"))))
for target in sorted({r["target"] for r in rows}):
    for name in ("old", "new"):
        t = [float(r["seconds"]) for r in rows if r["target"] == target and r["build"] == name]
        print("{} {}: {}".format(target, name, ", ".join("{:.2f}".format(x) for x in t)))
def verdicts(folder):
    d = json.load(open(os.path.join(out, folder, "results.json")))
    return {(r["op"], r["dtype"]): r["verdict"] for r in d["results"]}
# Records that differ between builds, and those that differ between two runs of one build (they flip from run to
# run, whatever the build: which worker runs a probe, and what that worker learnt first, can change its inputs).
for target, prefix in (("mps-emu", "emu"), ("cuda", "cuda")):
    runs = {name: [verdicts(f) for f in sorted(os.listdir(out)) if f.startswith(prefix + "-" + name + "-")
                   and f[-1].isdigit() and os.path.exists(os.path.join(out, f, "results.json"))]
            for name in ("old", "new")}
    if not runs["old"] or not runs["new"]:
        continue
    keys = set().union(*runs["old"], *runs["new"])
    def values(k, name):
        return {r.get(k) for r in runs[name]}
    flips = sorted(k for k in keys if len(values(k, "old")) > 1 or len(values(k, "new")) > 1)
    differ = sorted(k for k in keys if k not in flips and values(k, "old") != values(k, "new"))
    print("{}: {} records; {} differ between the builds{}; {} flip between runs of one build{}".format(
        target, len(runs["new"][0]), len(differ),
        (": " + ", ".join("{} {}".format(*k) for k in differ[:8])) if differ else "",
        len(flips), (": " + ", ".join("{} {}".format(*k) for k in flips[:12])) if flips else ""))
PY
if [ "${KEEP:-0}" = 1 ]; then
  for f in "$work"/emu-old-1 "$work"/emu-new-1 "$work"/cuda-old-1 "$work"/cuda-new-1; do
    if [ -f "$f/results.json" ]; then gzip -c "$f/results.json" >"$out/$(basename "$f").json.gz"; fi
  done
fi
