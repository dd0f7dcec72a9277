#!/usr/bin/env python3
"""What the default audit on emulated MPS costs the machine: wall time, the CPU time of the run and its workers (user
and system), and their page faults (minor: first touches and copy-on-write copies; major: read from disk), medians of
N runs of each release in turn (docs/benchmarks.md). System time and minor faults are where a worker that writes
memory it shares with the run shows (Note [Kernels registered before the fork] in emu/mps_emulator.cc).

    bench/audit_cost.py [BINARY] [--runs N] [--release R ...] [--keep DIR]
        BINARY     default build/mps-audit
        --runs     runs per release (default 5)
        --release  emulated releases (default 2.14.1 and 1.13.1)
        --keep     keep each release's last results.json in DIR/<release>.json, to compare records between builds
                   (tools/compare_verdicts.py --whole)
Exit status: 0; 1 when a run fails (its standard error is printed); 2 for bad usage."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def one_run(binary, release, out):
    """(wall s, user s, sys s, minor faults, major faults) of one default audit, its workers included (wait4's usage
    of the run holds that of the children it reaped)."""
    cmd = [binary, "run", "--target", "mps-emu", "--emu-release", release, "--out", out, "--format", "json",
           "--no-progress"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.stderr.write(err.decode(errors="replace"))
        sys.exit(1)
    return wall, usage.ru_utime, usage.ru_stime, usage.ru_minflt, usage.ru_majflt


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("binary", nargs="?", default=os.path.join(ROOT, "build", "mps-audit"))
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--release", action="append")
    p.add_argument("--keep")
    opts = p.parse_args()
    if not os.access(opts.binary, os.X_OK):
        p.error("no mps-audit binary at " + opts.binary)
    releases = opts.release or ["2.14.1", "1.13.1"]
    tmp = tempfile.mkdtemp()
    try:
        figures = {r: [] for r in releases}
        for _ in range(opts.runs):
            for release in releases:  # in turn, so that the machine's drift meets every release alike
                out = os.path.join(tmp, release)
                shutil.rmtree(out, ignore_errors=True)
                figures[release].append(one_run(opts.binary, release, out))
        if opts.keep:
            os.makedirs(opts.keep, exist_ok=True)
            for release in releases:
                shutil.copy(os.path.join(tmp, release, "results.json"), os.path.join(opts.keep, release + ".json"))
        print("| release | wall | user | system | minor faults | major faults |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for release, rows in figures.items():
            med = [statistics.median(r[k] for r in rows) for k in range(5)]
            print("| {} | {:.2f} s | {:.2f} s | {:.2f} s | {:,.0f} | {:,.0f} |".format(release, *med))
        print("\nmedians of {} runs each; {} cores; {}".format(opts.runs, os.cpu_count(), opts.binary))
    finally:
        shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
