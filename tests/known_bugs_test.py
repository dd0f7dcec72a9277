#!/usr/bin/env python3
"""Checks data/mps_known_bugs.yaml, the ledger of known MPS bugs from PyTorch's public issues: every entry parses, has
the fields its format names with values from their vocabularies, cites the pytorch/pytorch thread its id names, and
names operators that a shipped release's native_functions.yaml declares. Exits 1 with one line per problem."""
import glob
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = {"wrong_result", "crash", "hang", "error"}
DTYPES = {"all", "float32", "float16", "bfloat16", "float64", "complex64", "int64", "int32", "int16", "int8", "uint8",
          "bool"}
WHEN = re.compile(r"^(any|other|non_contiguous|storage_offset|duplicate_indices|out_of_range_indices|cpu_scalar|empty|"
                  r"channels_last|rank_ge:\d+|size_gt:\d+|numel_gt:\d+|kwarg:[a-z_]+)$")
VERSION = re.compile(r"^\d+\.\d+\.\d+$")
CHIPS = {"m1", "m2", "m3", "m4", "m5"}
MACOS = re.compile(r"^(?:[<>]=?\d+(?:\.\d+)?)(?:,[<>]=?\d+(?:\.\d+)?)*$")
REQUIRED = ("id", "ops", "dtypes", "when", "kind", "fixed_in", "source", "summary")


def shipped_operators():
    ops = set()
    for path in glob.glob(os.path.join(ROOT, "data", "pytorch-*", "native_functions.yaml")):
        with open(path) as f:
            ops.update("aten::" + m.group(1) for m in re.finditer(r"^- func: ([A-Za-z0-9_.]+)\(", f.read(), re.M))
    return ops


def check(doc, known_ops):
    problems = []
    if not isinstance(doc, dict) or doc.get("format") != "mps-audit-known-bugs/1":
        return ["not an mps-audit-known-bugs/1 file"]
    seen = set()
    for i, e in enumerate(doc.get("entries") or []):
        where = "entry {} ({})".format(i, e.get("id", "?") if isinstance(e, dict) else "?")
        if not isinstance(e, dict):
            problems.append(where + ": not a mapping")
            continue
        for key in REQUIRED:
            if key not in e:
                problems.append("{}: no {}".format(where, key))
        if e.get("id") in seen:
            problems.append(where + ": a second entry with this id")
        seen.add(e.get("id"))
        number = re.match(r"^pytorch-(\d+)$", str(e.get("id", "")))
        source = re.match(r"^https://github\.com/pytorch/pytorch/(issues|pull)/(\d+)$", str(e.get("source", "")))
        if not number or not source or number.group(1) != source.group(2):
            problems.append(where + ": the source is not the pytorch/pytorch thread its id names")
        for op in e.get("ops") or []:
            if op not in known_ops:
                problems.append("{}: {} is in no shipped release's native_functions.yaml".format(where, op))
        if not e.get("ops"):
            problems.append(where + ": no operators")
        for d in e.get("dtypes") or []:
            if d not in DTYPES:
                problems.append("{}: unknown dtype {!r}".format(where, d))
        if not WHEN.match(str(e.get("when", ""))):
            problems.append("{}: unknown condition {!r}".format(where, e.get("when")))
        if e.get("kind") not in KINDS:
            problems.append("{}: unknown kind {!r}".format(where, e.get("kind")))
        for key in ("seen_in", "fixed_in"):
            v = str(e.get(key, "unknown"))
            if v != "unknown" and not VERSION.match(v):
                problems.append("{}: {} {!r} is not a release".format(where, key, v))
        if "macos" in e and not MACOS.match(str(e["macos"])):
            problems.append("{}: macos {!r} is not a range such as '>=14.0,<15.0'".format(where, e["macos"]))
        for chip in e.get("chips") or []:
            if chip not in CHIPS:
                problems.append("{}: unknown chip {!r}".format(where, chip))
    return problems


def main():
    path = os.path.join(ROOT, "data", "mps_known_bugs.yaml")
    with open(path) as f:
        doc = yaml.safe_load(f)
    known_ops = shipped_operators()
    problems = check(doc, known_ops)
    # The checker itself: a broken entry must be caught.
    broken = {"format": "mps-audit-known-bugs/1",
              "entries": [{"id": "pytorch-1", "ops": ["aten::no_such_op"], "dtypes": ["flaot32"], "when": "rank:5",
                           "kind": "slow", "fixed_in": "soon", "source": "https://github.com/pytorch/pytorch/issues/2",
                           "summary": "x"}]}
    if len(check(broken, known_ops)) != 6:
        problems.append("the checker misses problems of a broken entry: {}".format(check(broken, known_ops)))
    for p in problems:
        print("{}: {}".format(path, p))
    entries = doc.get("entries") or []
    print("{} entries, {} problems".format(len(entries), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
