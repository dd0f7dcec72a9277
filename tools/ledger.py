#!/usr/bin/env python3
"""The ledger of known MPS bugs (data/mps_known_bugs.yaml) and the release dates its `fixed_in` rests on
(data/pytorch_releases.yaml): the rule that derives `fixed_in`, and the ledger written in its one form.

usage: tools/ledger.py fixed-in [LEDGER]     rewrites every entry's fixed_in by the rule (and the file in its form)
       tools/ledger.py check-fixed-in [LEDGER]  exits 1, naming each entry whose fixed_in the rule does not give

The rule (data/README.md, "Fixed in"): an entry's fix is the merged pull request (or commit) that says it fixes the
thread, with the date it merged (`fix`, `fix_merged`). It is in the first release whose branch was cut after that date
(a fix merged on the day of a cut is taken to have missed it), or in the patch release a cherry-pick names
(`cherry_picked_into`). Without a fix, a maintainer's word in the thread naming the release (`fixed_in_stated`) stands.
Otherwise `fixed_in` is unknown. A release whose cut is known only as planned (the next one, before its tracker
opens) counts with its planned date, which data/pytorch_releases.yaml marks."""
import json
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEDGER = os.path.join(ROOT, "data", "mps_known_bugs.yaml")
RELEASES = os.path.join(ROOT, "data", "pytorch_releases.yaml")
FORMAT = "mps-audit-known-bugs/2"
KEYS = ("id", "source", "summary", "kind", "ops", "dtypes", "when", "when_detail", "seen_in", "seen_in_note", "macos",
        "chips", "fix", "fix_merged", "fix_evidence", "cherry_picked_into", "fixed_in_stated", "fix_candidate",
        "fix_candidate_note", "fixed_in", "checked",
        "repro", "repro_note")
HEADER = """\
# Known MPS bugs users met on real Macs, from PyTorch's public issues and pull requests: the form, the rule behind
# fixed_in and how entries were found and checked are in data/README.md ("Known MPS bugs"). Written in this form by
# tools/ledger.py; tests/known_bugs_test.py checks every entry.
"""


def version_key(v):
    return tuple(int(x) for x in v.split("."))


def load_releases(path=RELEASES):
    with open(path) as f:
        doc = yaml.safe_load(f)
    return doc["releases"]


def minor_cuts(releases):
    """(release, cut date) of each minor release X.Y.0, oldest first: the cut, else the planned one."""
    cuts = []
    for r in releases:
        if not str(r["release"]).endswith(".0"):
            continue
        cut = r.get("branch_cut")
        if cut in (None, "unknown"):
            cut = r.get("branch_cut_planned")
        if cut not in (None, "unknown"):
            cuts.append((str(r["release"]), str(cut)))
    return sorted(cuts, key=lambda rc: version_key(rc[0]))


def fixed_in(entry, releases):
    """The release the rule gives for an entry, or "unknown"."""
    if entry.get("cherry_picked_into"):
        return str(entry["cherry_picked_into"])
    merged = entry.get("fix_merged")
    if entry.get("fix") and merged:
        for release, cut in minor_cuts(releases):
            if cut > str(merged):
                return release
        return "unknown"
    if entry.get("fixed_in_stated"):
        return str(entry["fixed_in_stated"])
    return "unknown"


SAFE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:/<>=!+-]*$")
RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "nan", "inf", "-inf", "-nan", "none", "~"}


def scalar(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    s = str(v)
    if SAFE.match(s) and s.lower() not in RESERVED and not re.match(r"^[0-9.]+$", s):
        return s
    return json.dumps(s, ensure_ascii=False)


def flow(v):
    if isinstance(v, dict):
        return "{" + ", ".join("{}: {}".format(scalar(k), flow(x)) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(flow(x) for x in v) + "]"
    return scalar(v)


def version_or_date(key, v):
    """Releases and dates as plain text (a release such as 2.10.0 is no number to YAML)."""
    return str(v) if key in ("seen_in", "fixed_in", "cherry_picked_into", "fixed_in_stated", "fix_merged",
                             "checked") else v


def emit(entries):
    out = [HEADER, "format: {}\n".format(FORMAT), "entries:\n"]
    for e in entries:
        unknown = sorted(set(e) - set(KEYS))
        if unknown:
            raise SystemExit("error: entry {}: unknown keys {}".format(e.get("id"), unknown))
        first = True
        for key in KEYS:
            if key not in e:
                continue
            v = version_or_date(key, e[key])
            lead = "  - " if first else "    "
            first = False
            if key == "repro":
                out.append("{}repro:\n".format(lead))
                for rk, rv in v.items():
                    out.append("      {}: {}\n".format(rk, flow(rv)))
            elif isinstance(v, (list, dict)):
                out.append("{}{}: {}\n".format(lead, key, flow(v)))
            elif key in ("seen_in", "fixed_in", "cherry_picked_into", "fixed_in_stated", "fix_merged", "checked"):
                out.append("{}{}: {}\n".format(lead, key, v if re.match(r"^[0-9.-]+$|^unknown$", v) else scalar(v)))
            else:
                out.append("{}{}: {}\n".format(lead, key, scalar(v)))
    return "".join(out)


class _Loader(yaml.SafeLoader):
    """YAML 1.1 reads 1e-05 (no dot) as text; the ledger's numbers are numbers, as the tool's reader takes them."""


_Loader.add_implicit_resolver("tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9]+(\.[0-9]*)?[eE][-+]?[0-9]+$"),
                              list("-+0123456789"))


def load(path):
    with open(path) as f:
        return yaml.load(f, Loader=_Loader)


def main(argv):
    if not argv or argv[0] not in ("fixed-in", "check-fixed-in"):
        sys.exit(__doc__)
    path = argv[1] if len(argv) > 1 else LEDGER
    doc = load(path)
    releases = load_releases()
    entries = doc["entries"]
    if argv[0] == "check-fixed-in":
        wrong = [(e["id"], str(e.get("fixed_in")), fixed_in(e, releases)) for e in entries
                 if str(e.get("fixed_in")) != fixed_in(e, releases)]
        for ident, has, rule in wrong:
            print("{}: {}: fixed_in {} where the rule gives {}".format(path, ident, has, rule))
        return 1 if wrong else 0
    for e in entries:
        e["fixed_in"] = fixed_in(e, releases)
    with open(path, "w") as f:
        f.write(emit(entries))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
