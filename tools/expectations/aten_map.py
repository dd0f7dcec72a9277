# Maps OpInfo entries to the ATen operators of one release's registry (native_functions.yaml and the hand
# registrations beside it), by the rules extract.py documents; opinfo_static.py uses it to compare databases.
import json
import re

_FUNC = re.compile(r"^- func:\s*([A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))?\(")
_VARIANTS = re.compile(r"^\s+variants:\s*(.*)$")


class Registry:
    """The operator names of a release: base names, full names (base.overload) and which base names have a
    Tensor method variant (what torch.Tensor.<name> exists for, near enough)."""

    def __init__(self, native_functions, extra=None):
        self.bases, self.full, self.methods = set(), set(), set()
        base = None
        with open(native_functions, encoding="utf-8") as f:
            for line in f:
                m = _FUNC.match(line)
                if m:
                    base = m.group(1)
                    self.bases.add(base)
                    self.full.add(base + ("." + m.group(2) if m.group(2) else ""))
                    continue
                v = _VARIANTS.match(line)
                if v and base and "method" in v.group(1):
                    self.methods.add(base)
        if extra:
            with open(extra, encoding="utf-8") as f:
                for line in f:
                    if line.strip() and not line.startswith("#"):
                        name = line.split("\t")[0].strip()
                        self.full.add(name)
                        self.bases.add(name.split(".")[0])

    def operator(self, candidate):
        """'pow' -> 'aten::pow' (every overload), 'slice.Tensor' -> 'aten::slice.Tensor' (one overload),
        'x.default' -> 'aten::x'; None when the registry has no such operator."""
        if not candidate:
            return None
        if "." in candidate:
            base, overload = candidate.split(".", 1)
            if overload == "default" and base in self.bases:
                return "aten::" + base
            return "aten::" + candidate if candidate in self.full else None
        return "aten::" + candidate if candidate in self.bases else None


def load_opinfo_db(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def index_opinfos(db):
    """key (name + variant, as the MPS lists write it) -> the OpInfos with that key, and name -> OpInfos."""
    by_key, by_name = {}, {}
    for op in db["opinfos"]:
        by_key.setdefault(op["name"] + op["variant"], []).append(op)
        by_name.setdefault(op["name"], []).append(op)
    return by_key, by_name


def map_opinfo(op, registry):
    """One OpInfo -> ([(operator, rule)], why-unmappable). Candidates in order: aten_name, the op callable's name,
    the name's last dotted part; the first that names an operator wins (rule aten_name|op|name). The in-place
    variant is added (rule inplace) when the registry has it."""
    out = []
    tried = []
    for rule, candidate in (("aten_name", op.get("aten_name")), ("op", op.get("op")),
                            ("name", op["name"].split(".")[-1])):
        found = registry.operator(candidate)
        if found:
            out.append((found, rule))
            break
        if candidate and candidate not in tried:
            tried.append(candidate)
    inplace = registry.operator(op.get("inplace"))
    if inplace and all(inplace != o for o, _ in out):
        out.append((inplace, "inplace"))
    if out:
        return out, None
    return [], "no operator " + " or ".join(f"'{c}'" for c in tried) + " in the registry"
