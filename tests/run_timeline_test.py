#!/usr/bin/env python3
"""Checks bench/run_timeline.py on a small emulated audit: the run's exit status comes back, and the samples show the
journal filling up to every planned probe, never going back; the worker count is a process's children, counted from
/proc (checked on children this test makes, since whether a sample falls while a short run's workers live is a matter
of timing); bad usage, a program that cannot be run and a CSV that cannot be written each give one line and exit 2.

usage: tests/run_timeline_test.py MPS_AUDIT"""
import csv
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(binary):
    with tempfile.TemporaryDirectory() as d:
        samples = os.path.join(d, "samples.csv")
        out = os.path.join(d, "out")
        run = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "run_timeline.py"), samples, binary, "run",
                              "--target", "mps-emu", "--emu-release", os.path.join(ROOT, "data", "pytorch-1.13.1"),
                              "--spec", os.path.join(ROOT, "opspec.yaml"), "--ops", "^aten::(abs|sin|cos)$",
                              "--dtypes", "float32,int64", "--samples", "none", "-j", "2", "--format", "json",
                              "--no-progress", "--out", out],
                             capture_output=True, text=True)
        if run.returncode != 0:
            return f"the run failed ({run.returncode}): {run.stderr}"
        with open(samples) as f:
            rows = list(csv.DictReader(f))
        records = [int(r["records"]) for r in rows]
        if records != sorted(records):
            return f"records went back: {records}"
        if records[-1] != 6:
            return f"expected 6 records at the end, got {records[-1]}"
        if any(int(r["workers"]) < 0 for r in rows):
            return "a negative worker count"
        if "6 records; first at" not in run.stdout:
            return f"unexpected summary: {run.stdout}"
        tool = [sys.executable, os.path.join(ROOT, "bench", "run_timeline.py")]
        for why, args, says in [
                ("bad usage", [samples], "usage:"),
                ("a missing program", [samples, os.path.join(d, "no-such-binary"), "run", "--out", out],
                 "error: cannot run"),
                ("a CSV in a missing folder", [os.path.join(d, "no", "such.csv"), binary, "run", "--out", out],
                 "error: "),
        ]:
            bad = subprocess.run(tool + args, capture_output=True, text=True)
            if bad.returncode != 2 or says not in bad.stderr or "Traceback" in bad.stderr:
                return f"{why} gave {bad.returncode}: {bad.stderr}"
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import run_timeline
    made = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    try:
        seen = run_timeline.children(os.getpid())
    finally:
        for p in made:
            p.kill()
            p.wait()
    if seen != 2:
        return f"counted {seen} children of a process with 2"
    if run_timeline.children(os.getpid()) != 0:
        return "counted children of a process with none"
    return None


if __name__ == "__main__":
    problem = main(sys.argv[1])
    if problem:
        print(problem, file=sys.stderr)
        sys.exit(1)
