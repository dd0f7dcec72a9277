#!/usr/bin/env python3
# Turns PyTorch's own MPS test expectations (test_mps.py / common_mps.py lists, OpInfo DecorateInfos) into
# data/pytorch-X/mps_expectations.tsv by ATen operator, for the C++ reader; data/README.md has each release's command.
# The readers live beside it: modifiers.py (2.x's modifier functions), consistency_lists.py (1.13.1's
# TestConsistency), opinfo_decorators.py (the OpInfos' MPS DecorateInfos), entries.py (what they all make); this file
# turns their entries into rows, accounts for every entry and writes the TSV.
"""Extracts one release's MPS test expectations into an mps-audit-expectations/1 TSV.

The lists are evaluated, not pattern-matched: each modifier function (mps_ops_modifier, mps_ops_grad_modifier,
mps_ops_error_inputs_modifier) runs in a sandbox where torch.<dtype> is a label and MACOS_VERSION takes each macOS
version a condition of the source turns on (plus 13.0, 14.0, 15.0, 26.0 and the floor 12.3), over stand-in
OpInfos for every key; the DecorateInfos it adds say which list entry applies where. 1.13.1's class
TestConsistency (ALLOWLIST_OP, ALLOWLIST_OP_GRAD, BLOCKLIST) is read the same way, without versions."""
import argparse
import ast
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aten_map  # noqa: E402
import opinfo_static  # noqa: E402
import sandbox  # noqa: E402
from consistency_lists import read_test_consistency  # noqa: E402
from entries import dtype_sort_key, list_kind  # noqa: E402
from modifiers import instantiated_devices, read_modifiers  # noqa: E402
from opinfo_decorators import decorator_entries, decorator_scopes  # noqa: E402,F401 (tests call decorator_scopes)

FORMAT = "mps-audit-expectations/1"
COLUMNS = ("operator", "dtypes", "kind", "scope", "macos", "list", "opinfo", "mapping", "source", "reason")


# --- rows ------------------------------------------------------------------------------------------------------

def condition_groups(by_dtype, points):
    """dtype -> macOS points -> [(macos condition, [dtypes])], deterministic."""
    groups = {}
    for lab, applies in by_dtype.items():
        for cond in sandbox.macos_conditions(applies, points):
            groups.setdefault(cond, set()).add(lab)
    out = []
    for cond in sorted(groups):
        labs = groups[cond]
        out.append((cond, ["*"] if "*" in labs else sorted(labs, key=dtype_sort_key)))
    return out


class ListAccount:
    """One list's (and scope's) figures: entries read, rows made, keys left unmappable, entries not applicable."""

    def __init__(self):
        self.entries = self.rows = 0
        self.unmappable = []
        self.not_applicable = []  # (key, why, how many entries)

    def na(self, key, why, count=1):
        self.entries += count
        self.not_applicable.append((key, why, count))

    def na_count(self):
        return sum(n for _, _, n in self.not_applicable)


class Accounting:
    """How every entry of every list was used, for stdout and the TSV's summary line."""

    def __init__(self):
        self.lists = {}

    def of(self, list_name, scope):
        return self.lists.setdefault((list_name, scope), ListAccount())

    def totals(self):
        return {"entries": sum(a.entries for a in self.lists.values()),
                "rows": sum(a.rows for a in self.lists.values()),
                "unmappable": sum(len(a.unmappable) for a in self.lists.values()),
                "not_applicable": sum(a.na_count() for a in self.lists.values())}


def build_rows(entries, points_of, by_key, by_name, registry, acct, source_of):
    """The rows of every entry (one per operator, scope and macOS condition), each entry counted in the account
    of its list and scope."""
    rows = []
    for e in entries:
        a = acct.of(e.list_name, next(iter(e.conditions)) if e.conditions else "-")
        if not any(e.conditions.values()):
            a.na(e.key, "it names no dtype")
            continue
        a.entries += 1
        targets = target_operators(e, by_key, by_name, registry)
        if "-" in targets:
            a.unmappable.append(e.key)
        points = points_of(e)
        made = 0
        for operator, (rule, conditions) in sorted(targets.items()):
            for scope in sorted(conditions):
                for cond, labs in condition_groups(conditions[scope], points):
                    kind = e.kind or list_kind(e.list_name, scope, e.decorator, e.reason)
                    rows.append((operator, ",".join(labs), kind, scope, cond, e.list_name, e.key, rule,
                                 source_of(e), e.reason))
                    made += 1
        if made == 0:
            a.entries -= 1
            a.na(e.key, "every dtype it names is blocked by BLOCKLIST")
        a.rows += made
    return rows


def _merge(into, conditions):
    """Adds one entry's conditions (scope -> dtype -> points) into another's."""
    for scope, by in conditions.items():
        for lab, pts in by.items():
            into.setdefault(scope, {}).setdefault(lab, set()).update(pts)


def target_operators(e, by_key, by_name, registry):
    """An entry -> {operator: (mapping rule, conditions)}, with '-' for the OpInfos that map to no operator; a
    1.13.1 allow-list entry covers every OpInfo of its name, less what BLOCKLIST takes from each."""
    if e.mode == "global":
        return {"*": ("global", e.conditions)}
    opinfos = by_name.get(e.key, []) if e.mode == "name" else by_key.get(e.key, [])
    if not opinfos:
        what = "named" if e.mode == "name" else "with key"
        return {"-": (f"unmappable: no OpInfo {what} '{e.key}' in the database", e.conditions)}
    out = {}
    for op in opinfos:
        conditions = e.conditions
        blocked = e.exclude.get(op["name"] + op["variant"])
        if blocked is not None:
            conditions = {s: {lab: pts for lab, pts in by.items() if "*" not in blocked and lab not in blocked}
                          for s, by in e.conditions.items()}
        if not any(conditions.values()):
            continue
        mapped, why = aten_map.map_opinfo(op, registry)
        for operator, rule in mapped or [("-", "unmappable: " + str(why))]:
            _merge(out.setdefault(operator, (rule, {}))[1], conditions)
    return out


def write_tsv(path, release, origin, rows, acct):
    t = acct.totals()
    summary = (f"{t['entries']} list entries -> {t['rows']} rows; {t['unmappable']} entries unmappable, "
               f"{t['not_applicable']} not applicable (tools/expectations/extract.py prints each)")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(f"# {FORMAT}\n# release: {release}\n# from: {origin}\n# {summary}\n# " + "\t".join(COLUMNS) + "\n")
        for row in rows:
            f.write("\t".join(" ".join(str(c).replace("\t", " ").split()) if i == 9 else str(c)
                              for i, c in enumerate(row)) + "\n")


def print_accounting(acct, out=sys.stdout):
    """Per list: its figures, the unmappable keys, and the entries not applicable grouped by why."""
    for (list_name, scope), a in sorted(acct.lists.items()):
        print(f"{list_name} [{scope}]: {a.entries} entries, {a.rows} rows, {len(a.unmappable)} unmappable, "
              f"{a.na_count()} not applicable", file=out)
        if a.unmappable:
            print("  unmappable: " + " ".join(sorted(a.unmappable)), file=out)
        by_why = {}
        for key, why, count in a.not_applicable:
            by_why.setdefault(why, []).append((key, count))
        for why in sorted(by_why):
            keys = by_why[why]
            n = sum(c for _, c in keys)
            print(f"  not applicable ({why}): {n}: " + " ".join(k for k, _ in keys), file=out)
    t = acct.totals()
    print(f"total: {t['entries']} entries, {t['rows']} rows, {t['unmappable']} unmappable, "
          f"{t['not_applicable']} not applicable", file=out)


def extract(root, lists_rel, db, registry, release, origin, out_path, stdout=sys.stdout):
    """The whole extraction of one release; returns (rows, accounting). The OpInfos' DecorateInfos are read
    when the source has torch/testing/_internal/common_methods_invocations.py."""
    with open(os.path.join(root, lists_rel), encoding="utf-8") as f:
        text = f.read()
    by_key, by_name = aten_map.index_opinfos(db)
    db_keys = sorted(by_key)
    acct = Accounting()
    tree = ast.parse(text)
    devices = instantiated_devices(tree)
    entries, points = [], {}
    readers = read_modifiers(text, lists_rel, db_keys)
    for reader in readers:
        found, never = reader.results()
        for e in found:
            points[id(e)] = reader.points
        entries.extend(found)
        for name, key, line in never:
            acct.of(name, reader.scope).na(f"{key}@{line}", "its test holds on no macOS version evaluated: "
                                           + ", ".join(sandbox.fmt_version(p) for p in reader.points))
        for name, count in sorted(reader.unused_lists().items()):
            acct.of(name, reader.scope).na("*", "no DecorateInfo comes from it directly: an exemption set, "
                                           "read through the rule that names it", count)
    notes = []
    if not readers:
        found, notes = read_test_consistency(text, by_name)
        entries.extend(found)
    decorator_points = [0.0] if not readers else sandbox.macos_points(tree)
    if os.path.exists(os.path.join(root, opinfo_static.INTERNAL, "common_methods_invocations.py")):
        opinfos, parser = opinfo_static.parse(root, registry)
        found, more = decorator_entries(opinfos, parser.stray_mps_decorators(), devices, decorator_points)
        entries.extend(found)
        notes.extend(more)
    for list_name, key, why in notes:
        acct.of(list_name, "forward").na(key, why)

    def points_of(e):
        return points.get(id(e), decorator_points)

    def source_of(e):
        return f"{e.source_file or lists_rel}:{e.line}"

    rows = build_rows(entries, points_of, by_key, by_name, registry, acct, source_of)
    rows.sort(key=lambda r: (r[0], r[8].rsplit(":", 1)[0], int(r[8].rsplit(":", 1)[1]), r[3], r[4], r[1], r[6]))
    if out_path:
        write_tsv(out_path, release, origin, rows, acct)
    print_accounting(acct, stdout)
    return rows, acct


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--release", required=True, help="the release, e.g. 2.11.0")
    p.add_argument("--source", required=True, help="root of the release's sources: the lists file and "
                   "torch/testing/_internal/common_methods_invocations.py (+ opinfo/definitions) are under it")
    p.add_argument("--lists", help="the lists file, relative to --source (default: "
                   "torch/testing/_internal/common_mps.py when there is one, else test/test_mps.py)")
    p.add_argument("--opinfo-db", help="the OpInfo database (opinfo_db.py's JSON); default: parse --source "
                   "statically (opinfo_static.py)")
    p.add_argument("--write-opinfo-db", help="also write the OpInfo database used here")
    p.add_argument("--registry", required=True, help="the release's native_functions.yaml")
    p.add_argument("--extra", help="the release's mps_extra_registrations.tsv")
    p.add_argument("--from", dest="origin", help="the '# from:' line of the TSV")
    p.add_argument("-o", "--out", required=True)
    opts = p.parse_args()
    lists = opts.lists
    if lists is None:
        mps = os.path.join("torch", "testing", "_internal", "common_mps.py")
        lists = mps if os.path.exists(os.path.join(opts.source, mps)) else os.path.join("test", "test_mps.py")
    registry = aten_map.Registry(opts.registry, opts.extra)
    if opts.opinfo_db:
        db = aten_map.load_opinfo_db(opts.opinfo_db)
    else:
        db = opinfo_static.to_db(opinfo_static.parse(opts.source, registry)[0], opts.release)
    if "source" in db:
        db_origin = "the OpInfo database parsed statically from the same source (opinfo_static.py)"
    else:
        db_origin = f"the OpInfo database of torch {db.get('torch', '?')} (dumped live by opinfo_db.py)"
    if opts.write_opinfo_db:
        with open(opts.write_opinfo_db, "w", encoding="utf-8") as f:
            json.dump(db, f, indent=0, sort_keys=True)
            f.write("\n")
    origin = opts.origin or f"{lists} of PyTorch {opts.release}'s source and {db_origin}"
    extract(opts.source, lists, db, registry, opts.release, origin, opts.out)


if __name__ == "__main__":
    main()
