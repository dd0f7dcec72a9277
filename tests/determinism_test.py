#!/usr/bin/env python3
"""What an audit records must not depend on time or load: the default audit on emulated MPS, run once and then
again beside busy loops on every core and more, gives the same records but for their `seconds`
(tools/compare_verdicts.py --whole). A choice made by a clock (a sample made only when the CPU ran a smaller one fast
enough, a count under a time budget) makes the loaded run record other samples, traits or known bugs.

usage: determinism_test.py MPS_AUDIT [--emu-release R]"""
import multiprocessing
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
COMPARE = os.path.join(HERE, "..", "tools", "compare_verdicts.py")


def busy():
    while True:
        pass


def audit(binary, out, extra):
    cmd = [binary, "run", "--target", "mps-emu", "--out", out, "--format", "json", "--no-progress"] + extra
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited with {done.returncode}:\n{done.stderr}")
    return os.path.join(out, "results.json")


def main(argv):
    if not argv:
        sys.exit(__doc__)
    binary, extra = argv[0], argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        quiet = audit(binary, os.path.join(tmp, "quiet"), extra)
        # Twice as many busy loops as cores: every worker of the run shares its core.
        loops = [multiprocessing.Process(target=busy, daemon=True) for _ in range(2 * (os.cpu_count() or 2))]
        for p in loops:
            p.start()
        try:
            loaded = audit(binary, os.path.join(tmp, "loaded"), extra)
        finally:
            for p in loops:
                p.kill()
                p.join()
        compared = subprocess.run([sys.executable, COMPARE, quiet, loaded, "--whole"], capture_output=True, text=True)
        print(compared.stdout, end="")
        if compared.returncode != 0:
            sys.exit("FAIL: the audit beside busy loops recorded something else than alone")
    print("ok: the same records alone and beside busy loops")


if __name__ == "__main__":
    main(sys.argv[1:])
