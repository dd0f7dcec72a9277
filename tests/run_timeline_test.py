#!/usr/bin/env python3
"""Checks bench/run_timeline.py on a small emulated audit: the run's exit status comes back, and the samples show the
journal filling up to every planned probe, never going back, with the run's workers seen along the way.

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
        if max(int(r["workers"]) for r in rows) < 1:
            return "no worker seen"
        if "6 records; first at" not in run.stdout:
            return f"unexpected summary: {run.stdout}"
        bad = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "run_timeline.py"), samples],
                             capture_output=True, text=True)
        if bad.returncode != 2:
            return f"bad usage gave {bad.returncode}, expected 2"
    return None


if __name__ == "__main__":
    problem = main(sys.argv[1])
    if problem:
        print(problem, file=sys.stderr)
        sys.exit(1)
