#!/usr/bin/python3
"""What `pytest --mps-audit` (python/mps_audit.py) costs a test suite (docs/benchmarks.md).

    /usr/bin/python3 bench/pytest_overhead.py [BINARY] [--runs N]      (defaults: build/mps-audit, 5 runs)
    /usr/bin/python3 bench/pytest_overhead.py [BINARY] --project DIR [--runs N] [-- PYTEST_ARGS...]

Three suites, made in a temporary folder, each run alone and under the plugin, alternating, N times:
  small  50 small tests (10 operators x 5 sizes: add, mul, matmul, softmax, relu, sum, cumsum, layer_norm, conv2d,
         sort), as a project's unit tests are;
  cnn    the seed example's training step as one test (examples/simple_cnn.py's SimpleCNN, CrossEntropyLoss, Adam, a
         batch of 64x3x32x32);
  cnn68  the same test for 68 steps, about 10,000 ATen calls, for the replay's time.
Per suite, the medians of: pytest's own session time ("in X s": collection and tests; under the plugin also the
recording's cost, and after it the replay and the reports, which pytest.json's report_seconds gives and which are
taken out; each suite's conftest.py imports torch, so that torch loads before the session either way, as the
plugin makes it), the replay and reports, and the whole process (Python, torch and pytest starting included).
The last column says which recorder ran (pytest.json's `recorder`: native or python).

--project DIR measures a project's own suite instead: pytest runs in DIR (with PYTEST_ARGS, default its tests as
pytest finds them), alone and under the plugin, alternating; its own failures are its own, and both runs must have the
same outcome line. PYTHONPATH is kept, with python/ put first.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SMALL = '''import pytest
import torch
import torch.nn.functional as F

OPS = {
    "add": lambda x: x + x,
    "mul": lambda x: x * 2.0,
    "matmul": lambda x: x @ x,
    "softmax": lambda x: torch.softmax(x, dim=-1),
    "relu": F.relu,
    "sum": lambda x: x.sum(dim=0),
    "cumsum": lambda x: torch.cumsum(x, dim=1),
    "layer_norm": lambda x: F.layer_norm(x, x.shape[-1:]),
    "conv2d": lambda x: F.conv2d(x[None, None], torch.ones(1, 1, 3, 3)),
    "sort": lambda x: torch.sort(x, dim=1).values,
}


@pytest.mark.parametrize("n", [4, 8, 16, 32, 64])
@pytest.mark.parametrize("op", sorted(OPS))
def test_op(op, n):
    torch.manual_seed(n)
    x = torch.randn(n, n)
    out = OPS[op](x)
    assert torch.isfinite(out).all()
'''

CNN = '''import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, {examples!r})
from simple_cnn import SimpleCNN  # noqa: E402


def test_training_step():
    torch.manual_seed(0)
    model = SimpleCNN()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images = torch.randn(64, 3, 32, 32)
    labels = torch.randint(0, 10, (64,))
    for _ in range({steps}):
        optimizer.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()
    assert torch.isfinite(loss)
'''


def run(folder, binary, audit, out, project_args=None):
    """One pytest session: (session seconds, replay and reports seconds, wall seconds, (calls, distinct), recorder,
    outcome line). `project_args`: a project's own suite, run in `folder` with these arguments."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    cmd += project_args if project_args is not None else [folder]
    if audit:
        cmd += ["-p", "mps_audit", "--mps-audit=" + out, "--mps-audit-binary=" + binary]
    path = os.path.join(ROOT, "python")
    if project_args is not None and os.environ.get("PYTHONPATH"):
        path += os.pathsep + os.environ["PYTHONPATH"]
    env = dict(os.environ, PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1")
    if audit:
        shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, env=env,
                          cwd=folder if project_args is not None else None)
    wall = time.perf_counter() - start
    found = re.findall(r"^=*\s*(.*) in ([0-9.]+)s", done.stdout, re.M)
    if not found or (done.returncode != 0 and project_args is None):
        sys.exit("pytest failed:\n" + done.stdout)
    outcome, session = found[-1][0], float(found[-1][1])
    replay, calls, recorder = 0.0, None, ""
    if audit:
        with open(os.path.join(out, "pytest.json")) as f:
            doc = json.load(f)
        replay, calls = doc["report_seconds"], (doc["calls"], doc["distinct_calls"])
        recorder = doc.get("recorder", "")
    return session, replay, wall, calls, recorder, outcome


def row(name, alone, audited):
    med = statistics.median
    s_alone = med(r[0] for r in alone)
    s_rec = med(r[0] - r[1] for r in audited)
    calls = audited[-1][3]
    return "| {} | {} ({}) | {:.2f} s | {:.2f} s | {:.2f}x | {:.2f} s | {:.2f} s | {:.2f} s | {} |".format(
        name, calls[0], calls[1], s_alone, s_rec, s_rec / s_alone, med(r[1] for r in audited),
        med(r[2] for r in alone), med(r[2] for r in audited), audited[-1][4])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary", nargs="?", default=os.path.join(ROOT, "build", "mps-audit"))
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--project", metavar="DIR", help="a project's own suite instead of the three made here")
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    opts = p.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    opts.pytest_args = extra
    if opts.pytest_args and not opts.project:
        p.error("pytest arguments go with --project")
    if opts.project and not os.path.isdir(opts.project):
        p.error("--project {}: no such folder".format(opts.project))
    tmp = tempfile.mkdtemp()
    header = ("| suite | calls (distinct) | session alone | session under the plugin, less replay and reports | ratio | "
              "replay and reports | whole process alone | under the plugin | recorder |\n"
              "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    try:
        if opts.project:
            print(header)
            alone, audited = [], []
            for _ in range(opts.runs):
                alone.append(run(opts.project, opts.binary, False, None, opts.pytest_args))
                audited.append(run(opts.project, opts.binary, True, os.path.join(tmp, "out"), opts.pytest_args))
            outcomes = {r[5] for r in alone + audited}
            if len(outcomes) != 1:
                sys.exit("the runs ended differently: {}".format(sorted(outcomes)))
            print(row(os.path.basename(os.path.abspath(opts.project)), alone, audited))
            print("\nmedians of {} runs each, alternating; {} cores; torch from {}; every run: {}".format(
                opts.runs, os.cpu_count(), sys.executable, outcomes.pop()))
            return
        suites = {"small": SMALL, "cnn": CNN.format(examples=os.path.join(ROOT, "examples"), steps=1),
                  "cnn68": CNN.format(examples=os.path.join(ROOT, "examples"), steps=68)}
        print(header)
        for name, text in suites.items():
            folder = os.path.join(tmp, name)
            os.makedirs(folder)
            with open(os.path.join(folder, "test_{}.py".format(name)), "w") as f:
                f.write(text)
            with open(os.path.join(folder, "conftest.py"), "w") as f:
                f.write("import torch  # before the session, with or without the plugin (which imports it then)\n")
            alone, audited = [], []
            for _ in range(opts.runs):
                alone.append(run(folder, opts.binary, False, None))
                audited.append(run(folder, opts.binary, True, os.path.join(tmp, "out-" + name)))
            print(row(name, alone, audited))
        print("\nmedians of {} runs each, alternating; {} cores; torch from {}".format(
            opts.runs, os.cpu_count(), sys.executable))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
