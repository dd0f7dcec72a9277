#!/usr/bin/env python3
"""Compares an mps-audit results.json with the verdicts of PyTorch's own OpInfo CPU-vs-device loop.

    tools/opinfo_agreement.py results.json opinfo-verdicts.json [--md]

The OpInfo loop (the core of test_ops.py::test_compare_cpu) writes {"verdicts": {"name[.variant]|dtype": verdict}}.
An OpInfo is matched to the ATen operator its name says (nn.functional.X -> aten::X, linalg.X -> aten::linalg_X,
special.X -> aten::special_X, fft.X -> aten::fft_X), overload "", "Tensor", "default", "input" or "self" in that
order; OpInfos with a variant name are left out, as are pairs either side could not run on the CPU (mps-audit's
skips, the loop's cpu_error). Verdicts are compared as pass (pass, fallback, xpass), mismatch, and error (error,
unsupported, crash, timeout, xfail). Prints the counts and every difference.
"""
import argparse
import collections
import json
import sys

PREFIXES = [("nn.functional.", ""), ("linalg.", "linalg_"), ("special.", "special_"), ("fft.", "fft_")]
OVERLOADS = ["", "Tensor", "default", "input", "self"]
OURS = {"pass": "pass", "fallback": "pass", "xpass": "pass", "mismatch": "mismatch", "error": "error",
        "unsupported": "error", "crash": "error", "timeout": "error", "xfail": "error"}


def aten_base(opinfo_name):
    for prefix, replacement in PREFIXES:
        if opinfo_name.startswith(prefix):
            return replacement + opinfo_name[len(prefix):]
    return opinfo_name


def load_records(path):
    with open(path) as f:
        doc = json.load(f)
    records = doc.get("results", doc.get("records", []))
    return {(r["op"], r["dtype"]): r for r in records}


def compare(records, verdicts):
    rows, counts = [], collections.Counter()
    for key, theirs in sorted(verdicts.items()):
        name, dtype = key.rsplit("|", 1)
        if "." in name and not any(name.startswith(p) for p, _ in PREFIXES):
            continue  # an OpInfo variant: its inputs differ from the plain operator's
        if theirs == "cpu_error":
            continue
        base = aten_base(name)
        record = None
        for overload in OVERLOADS:
            op = f"aten::{base}" + (f".{overload}" if overload else "")
            record = records.get((op, dtype))
            if record:
                break
        if not record or record["verdict"] == "skip":
            counts["not compared"] += 1
            continue
        ours = OURS[record["verdict"]]
        if ours == theirs:
            counts["agree"] += 1
        else:
            counts["differ"] += 1
            rows.append((record["op"], dtype, ours, theirs, record.get("message", "")))
    return counts, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("opinfo")
    parser.add_argument("--md", action="store_true", help="print the differences as a Markdown table")
    args = parser.parse_args()
    try:
        records = load_records(args.results)
        with open(args.opinfo) as f:
            verdicts = json.load(f)["verdicts"]
    except (OSError, ValueError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    counts, rows = compare(records, verdicts)
    print(f"agree: {counts['agree']}, differ: {counts['differ']}, "
          f"OpInfo pairs mps-audit did not probe or skipped: {counts['not compared']}")
    by_kind = collections.Counter((ours, theirs) for _, _, ours, theirs, _ in rows)
    for (ours, theirs), n in by_kind.most_common():
        print(f"  mps-audit {ours}, OpInfo {theirs}: {n}")
    if args.md:
        print("\n| operator | dtype | mps-audit | OpInfo | mps-audit's message |\n| --- | --- | --- | --- | --- |")
        for op, dtype, ours, theirs, message in rows:
            print(f"| `{op}` | {dtype} | {ours} | {theirs} | {message[:160].replace('|', '/')} |")
    else:
        for op, dtype, ours, theirs, message in rows:
            print(f"{op}\t{dtype}\t{ours}\t{theirs}\t{message[:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
