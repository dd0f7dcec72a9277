#!/usr/bin/env python3
"""Where a run's time goes, from outside: runs `mps-audit run ...` and samples, every 50 ms, how many records its
journal holds, how many worker processes it has, and (where nvidia-smi is found) how busy the GPU is. Writes the
samples as CSV and prints a summary: when the first and the last record came, when the run ended, and the records per
second between a tenth and nine tenths of them.

usage: bench/run_timeline.py CSV MPS_AUDIT run --out DIR [run's other arguments...]
  CSV  where the samples go (t_s, records, workers, gpu_percent; gpu_percent empty without nvidia-smi)
The run's exit status is this script's; 2, with one line saying why, for bad usage, a CSV that cannot be written
or a program that cannot be run."""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time


class JournalCounter:
    """The records a run adds to its journal, counted from what was added since the last look: whole lines only. A
    journal there before the run counts from its end (a resumed run), or from its start once the run begins it again."""

    def __init__(self, path):
        self.path, self.partial, self.records = path, b"", 0
        self.offset = os.path.getsize(path) if os.path.exists(path) else 0

    def count(self):
        try:
            with open(self.path, "rb") as f:
                if os.fstat(f.fileno()).st_size < self.offset:  # a new run began the journal again
                    self.offset, self.partial, self.records = 0, b"", 0
                f.seek(self.offset)
                added = f.read()
        except OSError:
            return self.records
        self.offset += len(added)
        lines = (self.partial + added).split(b"\n")
        self.partial = lines.pop()  # the last line, not yet whole (or empty)
        self.records += sum(1 for line in lines if b'"verdict":' in line)
        return self.records


def children(pid):
    """The run's worker processes: its children, by their parent in /proc."""
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            count += 1
    return count


class GpuSampler:
    """nvidia-smi's utilisation, read as it comes (every 100 ms); the last figure at any time."""

    def __init__(self):
        self.last = None
        self.process = None
        if shutil.which("nvidia-smi"):
            self.process = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits", "-lms", "100"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            if line.strip().isdigit():
                self.last = int(line.strip())

    def stop(self):
        if self.process:
            self.process.terminate()


def main(argv):
    if len(argv) < 4 or argv[2] != "run" or "--out" not in argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    csv_path, command = argv[0], argv[1:]
    folder = os.path.dirname(os.path.abspath(csv_path))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        print(f"error: {csv_path}: cannot write there (no such folder, or not writable)", file=sys.stderr)
        return 2
    out_dir = command[command.index("--out") + 1]
    journal = JournalCounter(os.path.join(out_dir, "journal.jsonl"))
    start = time.monotonic()
    try:
        run = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    except OSError as e:
        print(f"error: cannot run {command[0]}: {e.strerror}", file=sys.stderr)
        return 2
    gpu = GpuSampler()
    samples = []
    while True:
        done = run.poll() is not None
        t = time.monotonic() - start
        samples.append((t, journal.count(), children(run.pid) if not done else 0, gpu.last))
        if done:
            break
        time.sleep(0.05)
    gpu.stop()
    # Written whole or not at all: a temporary file beside it, renamed into place.
    with tempfile.NamedTemporaryFile("w", newline="", dir=folder, prefix=".run_timeline.", delete=False) as f:
        writer = csv.writer(f)
        writer.writerow(["t_s", "records", "workers", "gpu_percent"])
        for t, records, workers, busy in samples:
            writer.writerow([f"{t:.3f}", records, workers, "" if busy is None else busy])
    os.replace(f.name, csv_path)
    total = samples[-1][1]
    if total == 0:
        print(f"wall {samples[-1][0]:.2f} s, no records")
        return run.returncode
    first = next(t for t, n, _, _ in samples if n > 0)
    last = next(t for t, n, _, _ in samples if n >= total)
    print(f"wall {samples[-1][0]:.2f} s, {total} records; first at {first:.2f} s, last at {last:.2f} s")
    if total >= 10:
        low = next(t for t, n, _, _ in samples if n >= total // 10)
        high = next(t for t, n, _, _ in samples if n >= total * 9 // 10)
        if high > low:
            rate = (total * 9 // 10 - total // 10) / (high - low)
            print(f"records per second from a tenth to nine tenths of them: {rate:.0f}")
    return run.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
