#!/usr/bin/env bash
# The audit against PyTorch's own OpInfo CPU-vs-device loop on one GPU machine, in one go (about 9 minutes with
# 16 cores): builds mps-audit against the installed torch, runs the default audit on the device, runs the OpInfo
# loop (shared/peer/opinfo_compare.py), compares their throughput, and measures the audit against -j and tensor
# size on a subset of operators (bench/scaling.sh). Everything lands in OUT (default: $OUT, else ./gpu-compare):
#   summary.md, summary.json   the figures; jobs.csv, size.csv, scaling.svg   the scaling runs and their plot;
#   audit-results.json.gz, opinfo-verdicts.json.gz   both verdict sets (and audit-results.md);  log.txt   the build's and runs' output.
#
# usage: bench/gpu_compare.sh [TARGET]      (TARGET: cuda by default)
# Environment: PYTHON (the python with torch; default /opt/torch/.venv/bin/python3 when it exists), LIMIT_S (the
# OpInfo loop's time limit, default 150), PEER (the folder of opinfo_compare.py; default shared/peer, else
# ../shared/peer), BUILD_DIR (default build-wheel; an existing build there is reused), AGAIN=1 (run the audit a
# second time, cold again, and compare the two runs' verdicts: audit-again-results.json.gz, determinism.txt),
# SCALING=0 (leave out the scaling runs).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-cuda}
out=${OUT:-$PWD/gpu-compare}
mkdir -p "$out"
log=$out/log.txt
: >"$log"
python=${PYTHON:-$([ -x /opt/torch/.venv/bin/python3 ] && echo /opt/torch/.venv/bin/python3 || echo python3)}
peer=${PEER:-$([ -d shared/peer ] && echo "$PWD/shared/peer" || echo "$PWD/../shared/peer")}
build=${BUILD_DIR:-build-wheel}
work=$(mktemp -d)
cores=$(nproc)
note() { echo "== $(date -u +%T) $*" | tee -a "$log"; }

note "build ($build, $cores jobs)"
if [ ! -x "$build/mps-audit" ]; then
  prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
  TORCH_PREFIX=$prefix MPS_AUDIT_SKIP_SETUP=1 make build BUILD_DIR="$build" JOBS="$cores" >>"$log" 2>&1
fi
binary=$PWD/$build/mps-audit

# JIT-compiled CUDA kernels (jiterator) go to a fresh on-disk cache, so the audit meets them cold, as a first run
# does, and the scaling runs after it find them compiled. The OpInfo loop gets a fresh cache of its own: it starts
# cold too.
export PYTORCH_KERNEL_CACHE_PATH=$work/kernels

note "audit: $binary run --target $target (default spec, $cores workers)"
start=$(date +%s.%N)
"$binary" run --target "$target" --out "$work/audit" --format json,md --no-progress >>"$log" 2>&1 || true
end=$(date +%s.%N)
audit_s=$(python3 -c "print($end - $start)")
gzip -c "$work/audit/results.json" >"$out/audit-results.json.gz"
cp "$work/audit/results.md" "$out/audit-results.md" 2>/dev/null || true

note "OpInfo loop: $peer/opinfo_compare.py $target"
(cd "$work" && PYTORCH_KERNEL_CACHE_PATH=$work/loop-kernels PYTHONPATH=$peer LIMIT_S=${LIMIT_S:-150} \
  "$python" -W ignore "$peer/opinfo_compare.py" "$target" verdicts.json >>"$log" 2>&1) || true
gzip -c "$work/verdicts.json" >"$out/opinfo-verdicts.json.gz"

note "throughput"
python3 - "$work/audit/results.json" "$audit_s" "$cores" "$work/verdicts.json" "$out" <<'PY'
import json, sys
results, audit_s, workers, loop_path, out = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
records = json.load(open(results))["results"]
loop = json.load(open(loop_path))["summary"]
samples = sum(r.get("samples", 0) for r in records)
ran = [r for r in records if r.get("verdict") != "skip"]
s = {
    "audit": {"seconds": audit_s, "workers": workers, "records": len(records), "records_run": len(ran),
              "samples": samples, "pairs_per_s": len(records) / audit_s,
              "samples_per_s": samples / audit_s, "samples_per_s_per_worker": samples / audit_s / workers,
              "probe_seconds_total": sum(r.get("seconds", 0) for r in records)},
    "opinfo_loop": loop,
}
s["ratios"] = {
    "per_worker_samples_per_s_vs_loop": s["audit"]["samples_per_s_per_worker"] / loop["samples_per_s"],
    "pairs_per_s_vs_loop": s["audit"]["pairs_per_s"] / loop["pairs_per_s"],
    "goals": {"per_worker_samples_per_s_vs_loop": 3, "pairs_per_s_vs_loop": 50},
}
slow = sorted(records, key=lambda r: -r.get("seconds", 0))[:10]
json.dump(s, open(f"{out}/summary.json", "w"), indent=1)
a, r = s["audit"], s["ratios"]
with open(f"{out}/summary.md", "w") as f:
    f.write(f"| | audit ({workers} workers) | OpInfo loop (1 process) | ratio (goal) |\n| --- | ---: | ---: | ---: |\n")
    f.write(f"| time | {a['seconds']:.1f} s | {loop['seconds']:.1f} s | |\n")
    f.write(f"| op x dtype pairs | {a['records']} ({a['records_run']} run) | {loop['op_dtype_pairs']} | |\n")
    f.write(f"| samples | {a['samples']} | {loop['samples']} | |\n")
    f.write(f"| pairs/s | {a['pairs_per_s']:.1f} | {loop['pairs_per_s']:.1f} | {r['pairs_per_s_vs_loop']:.1f}x (50x) |\n")
    f.write(f"| samples/s per worker | {a['samples_per_s_per_worker']:.1f} | {loop['samples_per_s']:.1f} | "
            f"{r['per_worker_samples_per_s_vs_loop']:.2f}x (3x) |\n\n")
    f.write(f"probes' own seconds, summed: {a['probe_seconds_total']:.0f} s; slowest probes:\n\n")
    for x in slow:
        f.write(f"- {x['op']} {x['dtype']}: {x.get('seconds', 0):.2f} s ({x.get('verdict')})\n")
print(open(f"{out}/summary.md").read())
PY

if [ "${AGAIN:-0}" = 1 ]; then
  note "audit again, with another fresh kernel cache: does every verdict repeat?"
  PYTORCH_KERNEL_CACHE_PATH=$work/kernels-again "$binary" run --target "$target" --out "$work/again" --format json \
    --no-progress >>"$log" 2>&1 || true
  gzip -c "$work/again/results.json" >"$out/audit-again-results.json.gz"
  python3 tools/compare_verdicts.py "$work/audit/results.json" "$work/again/results.json" --verdicts-only \
    >"$out/determinism.txt" 2>&1 || true
  tail -n 5 "$out/determinism.txt"
fi

if [ "${SCALING:-1}" != 0 ]; then
  note "scaling against -j and tensor size"
  bench/scaling.sh "$binary" "$target" "$out" >>"$log" 2>&1 || true
  python3 tools/plot_scaling.py "$out/scaling.svg" "mps-audit run --target $target, $(nproc) cores, $(date -u +%F)" \
    "$out/jobs.csv" "$out/size.csv" || true
  cat "$out/jobs.csv" "$out/size.csv"
fi
note "done"
rm -rf "$work"
