#!/usr/bin/env python3
# How often an audit finds plain passes where PyTorch's own MPS tests expect a failure: of an audit's op x dtype
# records that an mps_expectations.tsv row marks as failing on MPS (scope forward) on a given macOS, how many pass.
"""Counts an audit's op x dtype records that PyTorch's MPS expectations say fail, and how many of them pass.

usage: tools/expectations/check_plain_pass.py RESULTS.json EXPECTATIONS.tsv --macos 14.0 [--no-global]
  A record matches a row when the row's operator is '*', the record's base name (aten::pow for
  aten::pow.Tensor_Scalar) or its full name; its dtype is among the row's dtypes or they are '*'; the row's scope is
  forward, its kind one of unimplemented, wrong, error, crash, flaky, and its macOS condition holds for --macos.
  --no-global leaves out the rows of the global float64/complex128 rule (list 'global: ...').
Exit 0, or 2 for unreadable input."""
import argparse
import json
import sys

FAILING = {"unimplemented", "wrong", "error", "crash", "flaky"}


def version(text):
    major, _, minor = text.partition(".")
    return (int(major), int(minor or 0))


def condition_holds(condition, macos):
    """'*', '>=13.3', '<15.0' or '>=13.3,<15.0' against a version tuple."""
    if condition == "*":
        return True
    for bound in condition.split(","):
        if bound.startswith(">="):
            if not macos >= version(bound[2:]):
                return False
        elif bound.startswith("<"):
            if not macos < version(bound[1:]):
                return False
        else:
            raise ValueError(f"unknown macOS condition {condition!r}")
    return True


def read_rows(path):
    """The TSV's rows as dicts of its columns; '#' lines are comments."""
    columns = ("operator", "dtypes", "kind", "scope", "macos", "list", "opinfo", "mapping", "source", "reason")
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            rows.append(dict(zip(columns, line.split("\t"))))
    return rows


def applicable(rows, macos, include_global):
    """operator ('*', 'aten::NAME' or 'aten::NAME.OVERLOAD') -> the failing forward rows that hold on `macos`."""
    out = {}
    for r in rows:
        if r["scope"] != "forward" or r["kind"] not in FAILING or r["operator"] == "-":
            continue
        if not include_global and r["list"].startswith("global:"):
            continue
        if condition_holds(r["macos"], macos):
            out.setdefault(r["operator"], []).append(r)
    return out


def matching(record, by_operator):
    op = record["op"]
    base = op.split(".", 1)[0]
    found = []
    for key in dict.fromkeys(("*", base, op)):
        for r in by_operator.get(key, ()):
            if r["dtypes"] == "*" or record["dtype"] in r["dtypes"].split(","):
                found.append(r)
    return found


def check(records, rows, macos, include_global):
    """-> (records with an expectation of failure, those of them whose verdict is pass), each as (record, rows)."""
    by_operator = applicable(rows, macos, include_global)
    expected, passing = [], []
    for rec in records:
        rows_here = matching(rec, by_operator)
        if rows_here:
            expected.append((rec, rows_here))
            if rec.get("verdict") == "pass":
                passing.append((rec, rows_here))
    return expected, passing


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results")
    p.add_argument("expectations")
    p.add_argument("--macos", required=True, help="the macOS version the expectations are read for, e.g. 14.0")
    p.add_argument("--no-global", action="store_true", help="leave out the global float64/complex128 rows")
    opts = p.parse_args(argv)
    try:
        with open(opts.results, encoding="utf-8") as f:
            records = json.load(f)["results"]
        rows = read_rows(opts.expectations)
        macos = version(opts.macos)
    except (OSError, ValueError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    expected, passing = check(records, rows, macos, not opts.no_global)
    share = 100.0 * len(passing) / len(expected) if expected else 0.0
    print(f"{len(expected)} of {len(records)} op x dtype records are expected to fail on MPS (macOS {opts.macos}); "
          f"{len(passing)} of them pass ({share:.1f}%)")
    for rec, rows_here in sorted(passing, key=lambda x: (x[0]["op"], x[0]["dtype"])):
        why = "; ".join(f"{r['kind']} ({r['list']} {r['opinfo']}, {r['source']})" for r in rows_here)
        print(f"  {rec['op']} {rec['dtype']}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
