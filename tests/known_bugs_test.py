#!/usr/bin/env python3
"""Checks data/mps_known_bugs.yaml, the ledger of known MPS bugs from PyTorch's public issues (format
mps-audit-known-bugs/2, data/README.md): every entry parses, has the fields its format names with values from their
vocabularies, cites the pytorch/pytorch thread its id names, names operators that a shipped release's
native_functions.yaml declares, carries its own call (a repro of an operator it names), records its fix with the date
it merged, and has the fixed_in the rule derives from that date and the releases' branch cuts
(data/pytorch_releases.yaml, tools/ledger.py). Exits 1 with one line per problem.

That every repro runs on the CPU is checked by the C++ test Repros.EveryKnownBugsOwnCallRunsOnTheCpu, with the
linked libtorch; that an entry fixed before a release never applies to it, by KnownBugs.* (emu/known_bugs_test.cc)."""
import glob
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import ledger  # noqa: E402

KINDS = {"wrong_result", "crash", "hang", "error"}
DTYPES = {"all", "float32", "float16", "bfloat16", "float64", "complex64", "complex128", "int64", "int32", "int16",
          "int8", "uint8", "bool"}
ATOM = re.compile(r"^(any|other|non_contiguous|storage_offset|channels_last|empty|duplicate_indices|"
                  r"out_of_range_indices|cpu_scalar|nan|inf|(rank_ge|size_gt|numel_gt|bytes_gt):\d+|"
                  r"arg:[A-Za-z_][A-Za-z0-9_]*(=|!=|>=|<=|>|<)[^ ]+)$")
VERSION = re.compile(r"^\d+\.\d+\.\d+$")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
CHIPS = {"m1", "m2", "m3", "m4", "m5"}
MACOS = re.compile(r"^(?:(?:<|>=)\d+(?:\.\d+)?)(?:,(?:<|>=)\d+(?:\.\d+)?)*$")
REQUIRED = ("id", "source", "summary", "kind", "ops", "dtypes", "when", "fixed_in", "checked", "repro")
THREAD = re.compile(r"^https://github\.com/pytorch/pytorch/(issues|pull)/(\d+)$")
FIX = re.compile(r"^https://github\.com/pytorch/pytorch/(pull/\d+|commit/[0-9a-f]{7,40})$")


def shipped_operators():
    ops = set()
    for path in glob.glob(os.path.join(ROOT, "data", "pytorch-*", "native_functions.yaml")):
        with open(path) as f:
            ops.update("aten::" + m.group(1) for m in re.finditer(r"^- func: ([A-Za-z0-9_.]+)\(", f.read(), re.M))
    return ops


def base(op):
    return op.split(".")[0]


def check_entry(e, known_ops, releases, where):
    problems = []
    for key in REQUIRED:
        if key not in e:
            problems.append("{}: no {}".format(where, key))
    unknown = set(e) - set(ledger.KEYS)
    if unknown:
        problems.append("{}: unknown keys {}".format(where, sorted(unknown)))
    number = re.match(r"^pytorch-(\d+)$", str(e.get("id", "")))
    source = THREAD.match(str(e.get("source", "")))
    if not number or not source or number.group(1) != source.group(2):
        problems.append(where + ": the source is not the pytorch/pytorch thread its id names")
    ops = e.get("ops") or []
    if not ops:
        problems.append(where + ": no operators")
    for op in ops:
        if op not in known_ops:
            problems.append("{}: {} is in no shipped release's native_functions.yaml".format(where, op))
    for d in e.get("dtypes") or []:
        if d not in DTYPES:
            problems.append("{}: unknown dtype {!r}".format(where, d))
    when = e.get("when")
    if not isinstance(when, list) or not when:
        problems.append("{}: when must be a list of conditions".format(where))
    else:
        for atom in when:
            if not ATOM.match(str(atom)):
                problems.append("{}: unknown condition {!r}".format(where, atom))
        if "any" in when and len(when) > 1:
            problems.append(where + ": 'any' stands alone")
        if "other" in when and not e.get("when_detail"):
            problems.append(where + ": an 'other' condition needs when_detail to say what it is")
    if e.get("kind") not in KINDS:
        problems.append("{}: unknown kind {!r}".format(where, e.get("kind")))
    for key in ("seen_in", "fixed_in", "cherry_picked_into", "fixed_in_stated"):
        v = str(e.get(key, "unknown"))
        if v != "unknown" and not VERSION.match(v):
            problems.append("{}: {} {!r} is not a release".format(where, key, v))
    for key in ("fix_merged", "checked"):
        if key in e and not DATE.match(str(e[key])):
            problems.append("{}: {} {!r} is not a date YYYY-MM-DD".format(where, key, e[key]))
    if "fix" in e:
        if not FIX.match(str(e["fix"])):
            problems.append("{}: fix {!r} is not a pytorch/pytorch pull request or commit".format(where, e["fix"]))
        if "fix_merged" not in e or not e.get("fix_evidence"):
            problems.append(where + ": a fix needs fix_merged and fix_evidence (how it is known to be the fix)")
    if "fix_merged" in e and "fix" not in e:
        problems.append(where + ": fix_merged without a fix")
    if "fix_candidate" in e:
        if "fix" in e:
            problems.append(where + ": a fix_candidate beside a fix (a candidate is a pull request whose merge is unseen)")
        if not FIX.match(str(e["fix_candidate"])):
            problems.append("{}: fix_candidate {!r} is not a pytorch/pytorch pull request or commit".format(
                where, e["fix_candidate"]))
        if not e.get("fix_candidate_note"):
            problems.append(where + ": a fix_candidate needs fix_candidate_note (what it says and what is unseen)")
    elif "fix_candidate_note" in e:
        problems.append(where + ": fix_candidate_note without a fix_candidate")
    if e.get("seen_in_note") and "seen_in" not in e:
        problems.append(where + ": seen_in_note without seen_in")
    rule = ledger.fixed_in(e, releases)
    if str(e.get("fixed_in")) != rule:
        problems.append("{}: fixed_in {} where the rule (tools/ledger.py) gives {}".format(where, e.get("fixed_in"),
                                                                                          rule))
    if "fix" not in e and not e.get("fixed_in_stated") and str(e.get("fixed_in")) != "unknown":
        problems.append(where + ": fixed_in without a fix or a maintainer's word for it")
    if "macos" in e and not MACOS.match(str(e["macos"])):
        problems.append("{}: macos {!r} is not a range such as '>=14.0,<15.0'".format(where, e["macos"]))
    for chip in e.get("chips") or []:
        if chip not in CHIPS:
            problems.append("{}: unknown chip {!r}".format(where, chip))
    repro = e.get("repro")
    if isinstance(repro, dict):
        op = str(repro.get("op", ""))
        if op not in known_ops:
            problems.append("{}: the repro's operator {} is in no shipped release".format(where, op))
        if not any(op == o or base(op) == o for o in ops):
            problems.append("{}: the repro calls {}, which its ops do not name".format(where, op))
        if not isinstance(repro.get("args", {}), dict):
            problems.append(where + ": the repro's args must map argument names to values")
        if "cpu" in repro and repro["cpu"] not in ("raises", "varies"):
            problems.append("{}: repro cpu {!r}: the values are 'raises' and 'varies'".format(where, repro["cpu"]))
        if repro.get("cpu") == "varies" and not e.get("repro_note"):
            problems.append("{}: repro cpu 'varies': repro_note must say which release's CPU does what".format(where))
    elif "repro" in e:
        problems.append(where + ": repro must be a mapping {op, args}")
    return problems


def check(doc, known_ops, releases):
    if not isinstance(doc, dict) or doc.get("format") != ledger.FORMAT:
        return ["not an {} file".format(ledger.FORMAT)]
    problems = []
    seen = set()
    for i, e in enumerate(doc.get("entries") or []):
        where = "entry {} ({})".format(i, e.get("id", "?") if isinstance(e, dict) else "?")
        if not isinstance(e, dict):
            problems.append(where + ": not a mapping")
            continue
        if e.get("id") in seen:
            problems.append(where + ": a second entry with this id")
        seen.add(e.get("id"))
        problems += check_entry(e, known_ops, releases, where)
    return problems


def check_releases(releases):
    problems = []
    cuts = ledger.minor_cuts(releases)
    for (a, cut_a), (b, cut_b) in zip(cuts, cuts[1:]):
        if not cut_a < cut_b:
            problems.append("{}: branch cut {} is not after {}'s ({})".format(b, cut_b, a, cut_a))
    for r in releases:
        for key in ("branch_cut", "branch_cut_planned", "released"):
            v = str(r.get(key, "unknown"))
            if v != "unknown" and not DATE.match(v):
                problems.append("{}: {} {!r} is not a date".format(r.get("release"), key, v))
        if not r.get("source"):
            problems.append("{}: no source for its dates".format(r.get("release")))
    return problems


def main():
    path = ledger.LEDGER
    doc = ledger.load(path)
    releases = ledger.load_releases()
    known_ops = shipped_operators()
    problems = check(doc, known_ops, releases) + check_releases(releases)
    # The checker itself: a broken entry must be caught, each of its problems.
    broken = {"format": ledger.FORMAT,
              "entries": [{"id": "pytorch-1", "ops": ["aten::no_such_op"], "dtypes": ["flaot32"], "when": ["rank:5"],
                           "kind": "slow", "fixed_in": "2.5.0", "source": "https://github.com/pytorch/pytorch/issues/2",
                           "summary": "x", "checked": "2026-11-28", "fix": "https://github.com/pytorch/pytorch/pull/3",
                           "fix_merged": "2025-07-01", "fix_evidence": "merged", "fix_candidate": "a PR",
                           "repro": {"op": "aten::sin", "args": {}}}]}
    found = check(broken, known_ops, releases)
    expected = ["source", "aten::no_such_op", "flaot32", "rank:5", "slow", "rule", "sin", "beside a fix",
                "fix_candidate 'a PR'", "needs fix_candidate_note"]
    missed = [word for word in expected if not any(word in p for p in found)]
    if missed:
        problems.append("the checker misses problems of a broken entry ({}): {}".format(missed, found))
    # The rule itself: a fix merged on a release's branch cut misses it; one merged the day before is in it.
    two_eight = next(cut for release, cut in ledger.minor_cuts(releases) if release == "2.8.0")
    on_the_day = {"fix": "x", "fix_merged": two_eight}
    if ledger.fixed_in(on_the_day, releases) != "2.9.0":
        problems.append("the fixed_in rule puts a fix merged on 2.8.0's branch cut into {}".format(
            ledger.fixed_in(on_the_day, releases)))
    if ledger.fixed_in({"fix": "x", "fix_merged": "2025-06-01"}, releases) != "2.8.0":
        problems.append("the fixed_in rule misses 2.8.0 for a fix merged before its cut")
    if ledger.fixed_in({"cherry_picked_into": "2.7.1", "fix": "x", "fix_merged": "2025-06-01"}, releases) != "2.7.1":
        problems.append("the fixed_in rule ignores a cherry-pick")
    for p in problems:
        print("{}: {}".format(path, p))
    entries = doc.get("entries") or []
    fixed = sum(1 for e in entries if str(e.get("fixed_in")) != "unknown")
    print("{} entries ({} with fixed_in known, {} with a fix recorded), {} problems".format(
        len(entries), fixed, sum(1 for e in entries if "fix" in e), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
