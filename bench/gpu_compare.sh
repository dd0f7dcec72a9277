#!/usr/bin/env bash
# The audit against PyTorch's own OpInfo CPU-vs-device loop on one GPU machine, in one go (about 7 minutes with
# 16 cores): builds mps-audit against the installed torch, then runs each of the two twice, first with empty kernel
# caches ("cold", as on a new machine) and again with the caches the first run left ("warm", as every later run on
# that machine), compares their throughput, and checks that the audit's two runs agree verdict for verdict. The
# audit runs cold a second time too, in the first run's folder, whose probe costs order its work (Note [Slowest
# operators first] in probe/probe_costs.cc): a machine that ran an audit before, with its kernel caches emptied (a
# new PyTorch, say).
#
# Note [Kernel caches]
# CUDA kernels that PyTorch compiles at first use (jiterator: special functions, complex arithmetic, gcd, ...) are
# kept on disk, in PYTORCH_KERNEL_CACHE_PATH (PyTorch's own; a folder named there is used only if it exists) and in
# CUDA_CACHE_PATH (the driver's). Compiling them is most of a first run's time, for either tool, and a later run
# finds them there. So each tool gets caches of its own, empty at first: neither finds what the other compiled, and
# both pay the same first-run price. The operating system's file cache is warmed for both (libtorch and its CUDA
# libraries read once) before either runs.
#
# Everything lands in OUT (default: $OUT, else ./gpu-compare): summary.md and summary.json (the figures),
# audit-{cold,warm,cold-again}-results.json.gz and opinfo-{cold,warm}-verdicts.json.gz (`mps-audit render` makes the audit's
# other reports from its results.json), determinism.txt (the audit's cold and warm runs, verdict for verdict), log.txt (the build's and the runs' output); and with
# SCALING=1, jobs.csv, size.csv and scaling.svg (bench/scaling.sh on the device).
#
# usage: bench/gpu_compare.sh [TARGET]      (TARGET: cuda by default)
# Environment: PYTHON (the python with torch; default /opt/torch/.venv/bin/python3 when it exists), LIMIT_S (the
# OpInfo loop's time limit, default 400), PEER (the folder of opinfo_compare.py, absolute or relative to the
# repository's root; default shared/peer, else ../shared/peer), BUILD_DIR (default build-wheel; an existing build
# there is reused), JOBS (the audit's workers; default: one per core), EXTRA_JOBS (more worker counts for the audit,
# warm, e.g. "8 4"), SCALING=1 (add the scaling runs).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-cuda}
peer=${PEER:-$([ -d shared/peer ] && echo "$PWD/shared/peer" || echo "$PWD/../shared/peer")}
[ -f "$peer/opinfo_compare.py" ] || { echo "error: $peer/opinfo_compare.py: no such file (set PEER)" >&2; exit 2; }
peer=$(cd "$peer" && pwd)  # the loop runs in the work folder: a relative PEER must still find it
out=${OUT:-$PWD/gpu-compare}
mkdir -p "$out"
log=$out/log.txt
: >"$log"
python=${PYTHON:-$([ -x /opt/torch/.venv/bin/python3 ] && echo /opt/torch/.venv/bin/python3 || echo python3)}
build=${BUILD_DIR:-build-wheel}
jobs=${JOBS:-$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
note() { echo "== $(date -u +%T) $*" | tee -a "$log"; }

note "build ($build, $(nproc) jobs)"
if [ ! -x "$build/mps-audit" ]; then
  prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
  TORCH_PREFIX=$prefix MPS_AUDIT_SKIP_SETUP=1 make build BUILD_DIR="$build" JOBS="$(nproc)" \
    CMAKE_FLAGS="-DCMAKE_BUILD_TYPE=Release -DMPS_AUDIT_BUILD_TESTS=OFF -DMPS_AUDIT_BUILD_BENCHMARKS=OFF" >>"$log" 2>&1
fi
binary=$PWD/$build/mps-audit

note "warming the file cache: libtorch and the CUDA libraries it loads"
site=$("$python" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
find "$site/torch/lib" "$site/nvidia" -name '*.so*' -type f -exec cat {} + >/dev/null 2>&1 || true

# Runs the command after "--" with the kernel caches of $1 (created when missing); prints its wall seconds.
timed_with_caches() {
  local caches=$1
  shift 2
  mkdir -p "$caches/torch" "$caches/cuda"
  local start end
  start=$(date +%s.%N)
  PYTORCH_KERNEL_CACHE_PATH=$caches/torch CUDA_CACHE_PATH=$caches/cuda "$@" >>"$log" 2>&1 || true
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.2f}')"
}

for temperature in cold warm; do
  note "audit, $temperature kernel caches: $binary run --target $target -j $jobs"
  seconds=$(timed_with_caches "$work/audit-caches" -- "$binary" run --target "$target" -j "$jobs" \
    --out "$work/audit-$temperature" --format json,md --no-progress)
  echo "$seconds" >"$work/audit-$temperature.seconds"
  note "  $seconds s; caches now: $(cd "$work/audit-caches" && du -sh -- * | tr '\t\n' ' ')"
  gzip -c "$work/audit-$temperature/results.json" >"$out/audit-$temperature-results.json.gz"
done
# Cold again: empty kernel caches, in a copy of the cold run's folder, whose probe costs (Note [Slowest operators
# first]) order the work: an audit after a PyTorch upgrade, say, on a machine that ran one before.
cp -r "$work/audit-cold" "$work/audit-cold-again"
note "audit, cold kernel caches again, with the cold run's probe costs"
seconds=$(timed_with_caches "$work/audit-caches-again" -- "$binary" run --target "$target" -j "$jobs" \
  --out "$work/audit-cold-again" --format json,md --no-progress)
echo "$seconds" >"$work/audit-cold-again.seconds"
note "  $seconds s"
gzip -c "$work/audit-cold-again/results.json" >"$out/audit-cold-again-results.json.gz"
for j in ${EXTRA_JOBS:-}; do
  note "audit, warm kernel caches, -j $j"
  timed_with_caches "$work/audit-caches" -- "$binary" run --target "$target" -j "$j" --out "$work/audit-j$j" \
    --format json --no-progress >"$work/audit-j$j.seconds"
  note "  $(cat "$work/audit-j$j.seconds") s"
done
python3 tools/compare_verdicts.py "$work/audit-cold/results.json" "$work/audit-warm/results.json" --verdicts-only \
  >"$out/determinism.txt" 2>&1 || true
tail -n 3 "$out/determinism.txt"

for temperature in cold warm; do
  note "OpInfo loop, $temperature kernel caches: $peer/opinfo_compare.py $target"
  seconds=$(timed_with_caches "$work/loop-caches" -- env -C "$work" PYTHONPATH="$peer" LIMIT_S="${LIMIT_S:-400}" \
    "$python" -W ignore "$peer/opinfo_compare.py" "$target" "loop-$temperature.json")
  note "  $seconds s; caches now: $(cd "$work/loop-caches" && du -sh -- * | tr '\t\n' ' ')"
  gzip -c "$work/loop-$temperature.json" >"$out/opinfo-$temperature-verdicts.json.gz"
done

note "throughput"
python3 - "$work" "$jobs" "$out" ${EXTRA_JOBS:-} <<'PY'
import json, sys
work, workers, out, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3], [int(j) for j in sys.argv[4:]]
s = {"workers": workers, "goals": {"per_worker_samples_per_s_vs_loop": 3, "pairs_per_s_vs_loop": 50}}
for t in ("cold", "warm", "cold-again"):
    records = json.load(open(f"{work}/audit-{t}/results.json"))["results"]
    seconds = float(open(f"{work}/audit-{t}.seconds").read())
    loop = json.load(open(f"{work}/loop-{t.replace('-again', '')}.json"))["summary"]
    samples = sum(r.get("samples", 0) for r in records)
    audit = {"seconds": seconds, "records": len(records),
             "records_run": sum(r.get("verdict") != "skip" for r in records), "samples": samples,
             "pairs_per_s": len(records) / seconds, "samples_per_s_per_worker": samples / seconds / workers,
             "probe_seconds_total": sum(r.get("seconds", 0) for r in records),
             "slowest": [[r["op"], r["dtype"], round(r.get("seconds", 0), 3)]
                         for r in sorted(records, key=lambda r: -r.get("seconds", 0))[:10]]}
    s[t] = {"audit": audit, "opinfo_loop": loop, "ratios": {
        "per_worker_samples_per_s_vs_loop": audit["samples_per_s_per_worker"] / loop["samples_per_s"],
        "pairs_per_s_vs_loop": audit["pairs_per_s"] / loop["pairs_per_s"]}}
loop = s["warm"]["opinfo_loop"]
s["warm_by_jobs"] = []
for j in [workers] + extra:
    path = f"{work}/audit-warm" if j == workers else f"{work}/audit-j{j}"
    seconds = float(open(f"{work}/audit-warm.seconds" if j == workers else f"{work}/audit-j{j}.seconds").read())
    records = json.load(open(f"{path}/results.json"))["results"]
    samples = sum(r.get("samples", 0) for r in records)
    s["warm_by_jobs"].append({"jobs": j, "seconds": seconds, "pairs_per_s": len(records) / seconds,
                              "samples_per_s_per_worker": samples / seconds / j,
                              "pairs_per_s_vs_loop": len(records) / seconds / loop["pairs_per_s"],
                              "per_worker_samples_per_s_vs_loop": samples / seconds / j / loop["samples_per_s"]})
json.dump(s, open(f"{out}/summary.json", "w"), indent=1)
with open(f"{out}/summary.md", "w") as f:
    f.write(f"| | audit, cold | OpInfo loop, cold | audit, warm | OpInfo loop, warm |\n| --- | ---: | ---: | ---: | ---: |\n")
    row = lambda name, fa, fl: f.write(f"| {name} | " + " | ".join(
        x for t in ("cold", "warm") for x in (fa(s[t]["audit"]), fl(s[t]["opinfo_loop"]))) + " |\n")
    row("time", lambda a: f"{a['seconds']:.1f} s", lambda l: f"{l['seconds']:.1f} s" + (" (stopped)" if l["stopped_early"] else ""))
    row("op x dtype pairs", lambda a: f"{a['records']:,} ({a['records_run']:,} not skipped)", lambda l: f"{l['op_dtype_pairs']:,}")
    row("samples", lambda a: f"{a['samples']:,}", lambda l: f"{l['samples']:,}")
    row("pairs/s", lambda a: f"{a['pairs_per_s']:.1f}", lambda l: f"{l['pairs_per_s']:.1f}")
    row("samples/s per worker", lambda a: f"{a['samples_per_s_per_worker']:.1f} ({workers} workers)",
        lambda l: f"{l['samples_per_s']:.1f} (1 process)")
    f.write("\n| ratio (goal) | cold | warm |\n| --- | ---: | ---: |\n")
    for key, name, goal in (("pairs_per_s_vs_loop", "pairs/s, audit / loop", "50x"),
                            ("per_worker_samples_per_s_vs_loop", "samples/s per worker, audit / loop", "3x")):
        f.write(f"| {name} ({goal}) | {s['cold']['ratios'][key]:.2f}x | {s['warm']['ratios'][key]:.2f}x |\n")
    a = s["cold-again"]
    f.write(f"\ncold again, with the cold run's probe costs: {a['audit']['seconds']:.1f} s, "
            f"{a['ratios']['pairs_per_s_vs_loop']:.2f}x the cold loop's pairs per second\n")
    for t in ("cold", "warm", "cold-again"):
        a = s[t]["audit"]
        f.write(f"\n{t}: the audit's probes' own seconds, summed: {a['probe_seconds_total']:.0f} s; slowest: "
                + ", ".join(f"{op} {dt} {sec} s" for op, dt, sec in a["slowest"]) + "\n")
    f.write("\nThe audit warm, by number of workers, against the warm loop:\n\n| -j | time | pairs/s (x loop) | "
            "samples/s per worker (x loop) |\n| ---: | ---: | ---: | ---: |\n")
    for w in s["warm_by_jobs"]:
        f.write(f"| {w['jobs']} | {w['seconds']:.1f} s | {w['pairs_per_s']:.0f} ({w['pairs_per_s_vs_loop']:.1f}x) | "
                f"{w['samples_per_s_per_worker']:.0f} ({w['per_worker_samples_per_s_vs_loop']:.2f}x) |\n")
print(open(f"{out}/summary.md").read())
PY

if [ "${SCALING:-0}" = 1 ]; then
  note "scaling against -j and tensor size"
  bench/scaling.sh "$binary" "$target" "$out" >>"$log" 2>&1 || true
  python3 tools/plot_scaling.py "$out/scaling.svg" "mps-audit run --target $target, $(nproc) cores, $(date -u +%F)" \
    "$out/jobs.csv" "$out/size.csv" || true
  cat "$out/jobs.csv" "$out/size.csv"
fi
note "done"
