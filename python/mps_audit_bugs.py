"""Which entries of the ledger of known MPS bugs (data/mps_known_bugs.yaml) a recorded call meets, for the report of
`pytest --mps-audit` (mps_audit.py).

Note [Known bugs a call meets]
The ledger names, per bug, its operators and dtypes, the input condition that triggers it (`when`), the release it was
first reported in and the one that fixed it, where the thread says. A call meets an entry when its operator (the
entry's overload, or any overload of an entry named without one) and dtype are the entry's, the release replayed on
is at least the one the bug was reported in and below the one that fixed it (an entry with neither is left out,
one with only a fix applies below it), the macOS version is in the entry's
range where it has one, and the condition holds for the call's tensors: `any`; `rank_ge:N`, `size_gt:N` (a dimension),
`numel_gt:N`, `non_contiguous`, `storage_offset`, `empty` and `channels_last`, read off the call's tensors when it was
recorded (`features()`). The other conditions (`other`, `kwarg:NAME`, `cpu_scalar`, the index conditions) depend on
values or devices a recording cannot tell apart, so a call never meets those entries. A ledger entry is what a user
saw on a real Mac, not what the replay saw: the report lists the entries a test's calls meet beside its verdicts, and
they never make a test fail. Where PyYAML is missing the ledger is not read (the report says so).
"""
import os

_LEDGER = {}


def load(home):
    """The ledger's entries by operator name (overload left out), or {} (no data home, no PyYAML, or an unreadable
    file); read once."""
    if home in _LEDGER:
        return _LEDGER[home]
    entries = []
    path = os.path.join(home, "data", "mps_known_bugs.yaml") if home else None
    if path and os.path.exists(path):
        try:
            import yaml
            with open(path) as f:
                doc = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml where it is
            if isinstance(doc, dict) and doc.get("format") == "mps-audit-known-bugs/1":
                entries = [e for e in doc.get("entries") or [] if isinstance(e, dict)]
        except Exception:  # no PyYAML, or not the ledger: no entries
            entries = []
    by_name = {}  # the operator's name without its overload -> the entries naming it
    for e in entries:
        for op in e.get("ops") or []:
            by_name.setdefault(str(op).split(".")[0], []).append(e)
    _LEDGER[home] = by_name
    return by_name


def features(named, torch):
    """What the ledger's conditions ask of a call, from its tensor arguments."""
    f = {"rank": 0, "size": 0, "numel": 0, "non_contiguous": False, "storage_offset": False, "empty": False,
         "channels_last": False}
    stack = list(named.values())
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
            continue
        if not isinstance(v, torch.Tensor) or v.layout != torch.strided:
            continue
        f["rank"] = max(f["rank"], v.dim())
        f["size"] = max([f["size"]] + list(v.shape))
        f["numel"] = max(f["numel"], v.numel())
        f["empty"] = f["empty"] or v.numel() == 0
        if v.dim() == 4 and v.numel() > 0 and not v.is_contiguous() and \
                v.is_contiguous(memory_format=torch.channels_last):
            f["channels_last"] = True
        elif not v.is_contiguous():
            f["non_contiguous"] = True
        f["storage_offset"] = f["storage_offset"] or v.storage_offset() != 0
    return f


def _version(v):
    try:
        return tuple(int(p) for p in str(v).split("+")[0].split("."))
    except ValueError:
        return None


def _in_macos_range(spec, macos):
    """">=14.0,<15.0" holds for macOS `macos` (a major version)."""
    try:
        major = float(str(macos).split(".")[0])
    except ValueError:
        return True
    for part in str(spec).split(","):
        for op in (">=", "<=", ">", "<"):
            if part.startswith(op):
                bound = float(part[len(op):])
                ok = {">=": major >= bound, "<=": major <= bound, ">": major > bound, "<": major < bound}[op]
                if not ok:
                    return False
                break
    return True


def _condition(when, f):
    when = str(when)
    if when == "any":
        return True
    if when in ("non_contiguous", "storage_offset", "empty", "channels_last"):
        return bool(f.get(when))
    for prefix, key in (("rank_ge:", "rank"), ("size_gt:", "size"), ("numel_gt:", "numel")):
        if when.startswith(prefix):
            bound = int(when[len(prefix):])
            return f.get(key, 0) >= bound if prefix == "rank_ge:" else f.get(key, 0) > bound
    return False  # other, kwarg:NAME, cpu_scalar, duplicate or out-of-range indices: not told by a recording


def _same_operator(entry_op, op):
    if "." in entry_op.split("::")[-1]:
        return entry_op == op
    return entry_op == op.split(".")[0]


def matching(ledger, call, release, macos):
    """The entries `call` (a recording's entry, with its "features") meets on `release` and `macos` (Note [Known bugs
    a call meets]): [{id, summary, kind, range, source}]."""
    f = call.get("features")
    have = _version(release) if release else None
    if not ledger or f is None or have is None:
        return []
    out = []
    for e in ledger.get(call["op"].split(".")[0], ()):
        if not any(_same_operator(str(o), call["op"]) for o in e.get("ops") or []):
            continue
        dtypes = e.get("dtypes") or []
        if "all" not in dtypes and call["dtype"] not in dtypes:
            continue
        seen, fixed = _version(e.get("seen_in", "")), _version(e.get("fixed_in", "unknown"))
        if (seen is None and fixed is None) or (seen is not None and have < seen) or \
                (fixed is not None and have >= fixed):
            continue
        if "macos" in e and macos is not None and not _in_macos_range(e["macos"], macos):
            continue
        if not _condition(e.get("when"), f):
            continue
        span = "{}{}".format("reported in {}, ".format(e["seen_in"]) if seen else "",
                             "fixed in " + str(e["fixed_in"]) if fixed else "no fix known")
        if e.get("chips"):
            span += ", on " + ", ".join(str(c) for c in e["chips"])
        out.append({"id": str(e.get("id")), "summary": str(e.get("summary", "")), "kind": str(e.get("kind", "")),
                    "range": span, "source": str(e.get("source", ""))})
    return out
