#!/usr/bin/env python3
"""Checks that two results.json files of the same plan agree record for record: the same (op, dtype) pairs, each
with the same verdict and message. Used to show that a change meant to make the audit faster changed no verdict.

usage: tools/compare_verdicts.py BEFORE/results.json AFTER/results.json [--verdicts-only|--whole] [--ignore=REGEX]
  --verdicts-only  compare verdicts, not messages
  --whole          compare whole records but their `seconds`: what a run records must not depend on time or load
  --ignore=REGEX   leave out operators this matches (re.search): ones whose records differ between two runs of one
                   binary (random or uninitialised outputs), which docs/benchmarks.md lists
Exit 0 when they agree, 1 when they differ (the differences are listed), 2 for unreadable input."""
import json
import re
import sys


def records(path, whole=False):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"error: {path}: {e}", file=sys.stderr)
        sys.exit(2)
    out = {}
    for r in doc.get("results", []):
        if whole:
            rest = {k: v for k, v in r.items() if k not in ("verdict", "message", "seconds")}
            out[(r["op"], r["dtype"])] = (r.get("verdict"), r.get("message", ""), rest)
        else:
            out[(r["op"], r["dtype"])] = (r.get("verdict"), r.get("message", ""))
    return out


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    verdicts_only = "--verdicts-only" in argv
    whole = "--whole" in argv
    ignore = [re.compile(a.split("=", 1)[1]) for a in argv if a.startswith("--ignore=")]
    before, after = records(args[0], whole), records(args[1], whole)
    differences = ignored = 0
    for key in sorted(before.keys() | after.keys()):
        if any(i.search(key[0]) for i in ignore):
            ignored += 1
            continue
        b, a = before.get(key), after.get(key)
        if b is None or a is None:
            print(f"{key[0]} {key[1]}: only in {'after' if b is None else 'before'}")
            differences += 1
        elif (b[0] != a[0]) or (not verdicts_only and b[1] != a[1]):
            print(f"{key[0]} {key[1]}: {b[0]} ({b[1]!r}) -> {a[0]} ({a[1]!r})")
            differences += 1
        elif whole and b[2] != a[2]:
            fields = sorted(k for k in b[2].keys() | a[2].keys() if b[2].get(k) != a[2].get(k))
            changes = ", ".join(f"{k}: {b[2].get(k)!r} -> {a[2].get(k)!r}" for k in fields)
            print(f"{key[0]} {key[1]}: {changes}")
            differences += 1
    what = "verdicts" if verdicts_only else "whole records but their seconds" if whole else "verdicts and messages"
    print(f"{len(before)} records before, {len(after)} after, {ignored} ignored, {differences} differ in {what}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
