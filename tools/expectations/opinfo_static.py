#!/usr/bin/env python3
# The OpInfo database of a PyTorch source tree read without torch: the op_db lists of
# torch/testing/_internal/common_methods_invocations.py and opinfo/definitions/*.py parsed with `ast`, for releases
# whose torch cannot be run here (2.6.0), and the MPS DecorateInfos of every release's OpInfos for extract.py.
#
#   tools/expectations/opinfo_static.py --source ROOT --registry data/pytorch-X/native_functions.yaml -o db.json
#   tools/expectations/opinfo_static.py --source ROOT --registry ... --compare live-opinfo_db.json
"""Parses the OpInfo database of a PyTorch source tree statically; --compare checks it against a live dump."""
import argparse
import ast
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aten_map  # noqa: E402
import sandbox  # noqa: E402

INTERNAL = os.path.join("torch", "testing", "_internal")
# Constructors that make an op_db entry; python references (PythonRefInfo and its kin) are not in op_db.
NOT_OPINFOS = {"DecorateInfo", "AliasInfo", "SampleInput", "ErrorInput"}
# Namespaces whose functions are C++ bindings named <namespace>_<function> (torch.fft.fft.__name__ == 'fft_fft').
PREFIXED_NAMESPACES = {"fft", "linalg", "special", "sparse"}


class _Module:
    """One parsed source file: its tree, comments, module-level functions and assignments."""

    def __init__(self, root, rel):
        self.rel = rel
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            self.text = f.read()
        self.tree = ast.parse(self.text)
        self.comments = sandbox.comments_by_line(self.text)
        self.functions, self.values = {}, {}
        for node in self.tree.body:
            if isinstance(node, ast.FunctionDef):
                self.functions[node.name] = node
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.values[node.targets[0].id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                self.values[node.target.id] = node.value


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _callable_name(node, module):
    """The __name__ the live OpInfo's callable would have, from the expression that makes it; None where it has
    none (lambdas, partials) or it cannot be told."""
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    dotted = _dotted(node)
    if dotted is None:
        return None
    parts = dotted.split(".")
    if parts[:3] == ["torch", "ops", "aten"] and len(parts) > 3:
        return ".".join(parts[3:])
    if parts[0] == "torch" and len(parts) == 3 and parts[1] in PREFIXED_NAMESPACES:
        return f"{parts[1]}_{parts[2]}"
    if len(parts) == 1 and parts[0] not in module.functions:
        return None
    return parts[-1]


def _default_op_name(name):
    """The __name__ of _getattr_qual(torch, name), what OpInfo.__post_init__ makes the op when none is given."""
    parts = name.split(".")
    if parts[:3] == ["torch", "ops", "aten"] and len(parts) > 3:
        return ".".join(parts[3:])
    if len(parts) == 2 and parts[0] in PREFIXED_NAMESPACES:
        return f"{parts[0]}_{parts[1]}"
    return parts[-1]


class Parser:
    """Walks op_db: OpInfo-like constructor calls, helper functions returning one (inlined with their arguments
    bound), and starred generator expressions over literal tuples."""

    def __init__(self, root, registry):
        self.root = root
        self.registry = registry
        self.modules = {}
        self.opinfos = []
        self.mps_decorators_seen = set()  # (file, line) of every DecorateInfo(..., device_type='mps') walked

    def module(self, rel):
        if rel not in self.modules:
            self.modules[rel] = _Module(self.root, rel)
        return self.modules[rel]

    def run(self):
        main = self.module(os.path.join(INTERNAL, "common_methods_invocations.py"))
        self.walk_list(main.values["op_db"], main, {})
        definitions = os.path.join(INTERNAL, "opinfo", "definitions")
        init = os.path.join(definitions, "__init__.py")
        if os.path.exists(os.path.join(self.root, init)):
            for elt in self.module(init).values["op_db"].elts:
                name = _dotted(elt.value) if isinstance(elt, ast.Starred) else None
                if name and name.endswith(".op_db"):
                    sub = self.module(os.path.join(definitions, name.split(".")[0] + ".py"))
                    self.walk_list(sub.values["op_db"], sub, {})
        return self.opinfos

    def walk_list(self, node, module, env):
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                self.walk_starred(elt.value, module, env)
            elif isinstance(elt, ast.Call):
                self.walk_call(elt, module, env)

    def walk_starred(self, node, module, env):
        if isinstance(node, (ast.GeneratorExp, ast.ListComp)) and len(node.generators) == 1:
            gen = node.generators[0]
            values = self.literal(gen.iter, module, env)
            for value in values or ():
                inner = dict(env)
                self.bind(gen.target, value, inner)
                self.walk_call(node.elt, module, inner)
        elif isinstance(node, ast.Name) and node.id in module.values:
            self.walk_list(module.values[node.id], module, env)

    @staticmethod
    def bind(target, value, env):
        if isinstance(target, ast.Name):
            env[target.id] = ("value", value)
        elif isinstance(target, ast.Tuple) and isinstance(value, tuple):
            for t, v in zip(target.elts, value):
                Parser.bind(t, v, env)

    def literal(self, node, module, env):
        try:
            return ast.literal_eval(node)
        except ValueError:
            return self.string(node, module, env)

    def string(self, node, module, env):
        """The value of a name or f-string argument, or None when it is not a constant."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name) and node.id in env:
            kind, value = env[node.id]
            return value if kind == "value" else self.string(value[0], value[1], value[2])
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                s = self.string(v.value if isinstance(v, ast.FormattedValue) else v, module, env)
                if s is None:
                    return None
                parts.append(str(s))
            return "".join(parts)
        return None

    def walk_call(self, call, module, env):
        if not isinstance(call, ast.Call):
            return
        fname = _dotted(call.func) or ""
        last = fname.split(".")[-1]
        if last.endswith("Info") and last not in NOT_OPINFOS and "PythonRef" not in last:
            self.opinfo(call, last, module, env)
        elif fname in module.functions:
            fn = module.functions[fname]
            inner = {}
            params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
            defaults = dict(zip(params[len(params) - len(fn.args.defaults):], fn.args.defaults))
            defaults.update({a.arg: d for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None})
            for p, d in defaults.items():
                inner[p] = ("node", (d, module, {}))
            for p, a in zip(params, call.args):
                inner[p] = ("node", (a, module, env))
            for k in call.keywords:
                if k.arg:
                    inner[k.arg] = ("node", (k.value, module, env))
            for stmt in ast.walk(fn):
                if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Call):
                    self.walk_call(stmt.value, module, inner)

    def opinfo(self, call, cls, module, env):
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        name = self.string(call.args[0] if call.args else kw.get("name"), module, env)
        if not isinstance(name, str) or name.startswith("_refs."):
            return
        if cls == "ForeachFuncInfo":
            name = "_foreach_" + name
        variant = self.string(kw["variant_test_name"], module, env) if "variant_test_name" in kw else ""
        aten_name = (self.string(kw["aten_name"], module, env) if "aten_name" in kw else None) or name
        op = self.resolve_callable(kw, "op", module, env, _default_op_name(name))
        plain = "." not in name
        inplace = self.resolve_callable(kw, "inplace_variant", module, env,
                                        name + "_" if plain and name + "_" in self.registry.methods else None)
        method = self.resolve_callable(kw, "method_variant", module, env,
                                       name if plain and name in self.registry.methods else None)
        decorators = []
        for key in ("decorators", "skips"):
            if key in kw:
                self.collect_decorators(kw[key], module, env, decorators, set())
        self.opinfos.append({
            "name": name, "variant": variant or "", "aten_name": aten_name, "op": op, "inplace": inplace,
            "method": method, "file": module.rel, "line": call.lineno, "mps_decorators": decorators})

    def resolve_callable(self, kw, key, module, env, default):
        if key not in kw:
            return default
        node = kw[key]
        while isinstance(node, ast.Name) and node.id in env and env[node.id][0] == "node":
            node, module, env = env[node.id][1]
        return _callable_name(node, module)

    def collect_decorators(self, node, module, env, out, seen):
        """Every DecorateInfo(..., device_type='mps') reachable from a decorators=/skips= argument: directly, through
        a bound helper argument, or in the body of a module-level function it calls."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id in env and env[sub.id][0] == "node":
                bound = env[sub.id][1]
                self.collect_decorators(bound[0], bound[1], bound[2], out, seen)
            elif isinstance(sub, ast.Call):
                fname = _dotted(sub.func)
                if fname == "DecorateInfo":
                    info = self.decorate_info(sub, module)
                    if info:
                        out.append(info)
                elif fname in module.functions and (module.rel, fname) not in seen:
                    seen.add((module.rel, fname))
                    self.collect_decorators(module.functions[fname], module, {}, out, seen)

    def decorate_info(self, call, module):
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        device = kw.get("device_type")
        if not (isinstance(device, ast.Constant) and device.value == "mps"):
            cls = call.args[1] if len(call.args) > 1 else kw.get("cls_name")
            # TestConsistency runs on MPS only, so its DecorateInfos concern MPS whatever their device_type says.
            if not (device is None and isinstance(cls, ast.Constant) and cls.value == "TestConsistency"):
                return None
        self.mps_decorators_seen.add((module.rel, call.lineno))
        args = list(call.args) + [None] * 3
        decorator = args[0] if args[0] is not None else kw.get("decorators")
        cls = args[1] if args[1] is not None else kw.get("cls_name")
        test = args[2] if args[2] is not None else kw.get("test_name")
        dtypes = kw.get("dtypes")
        skip_message = None
        if isinstance(decorator, ast.Call) and decorator.args and isinstance(decorator.args[0], ast.Constant):
            skip_message = decorator.args[0].value
        deco_name = _dotted(decorator.func if isinstance(decorator, ast.Call) else decorator) or ast.unparse(decorator)
        return {
            "decorator": deco_name.split(".")[-1],
            "cls": cls.value if isinstance(cls, ast.Constant) else None,
            "test": test.value if isinstance(test, ast.Constant) else None,
            "dtypes": ast.unparse(dtypes) if dtypes is not None else None,
            "device": device.value if isinstance(device, ast.Constant) else None,
            "active_if": ast.unparse(kw["active_if"]) if "active_if" in kw else None,
            "file": module.rel, "line": call.lineno,
            "reason": sandbox.clean(sandbox.comment_on(module.comments, call.lineno, call.end_lineno)
                                   or sandbox.comment_above(module.comments, call.lineno, 0, adjacent=True)
                                   or (skip_message or "")),
        }

    def stray_mps_decorators(self):
        """DecorateInfo(..., device_type='mps') in the parsed files that no op_db OpInfo reaches (python
        references, foreach databases, unused helpers): (file, line)."""
        stray = []
        for rel, module in sorted(self.modules.items()):
            for node in ast.walk(module.tree):
                if isinstance(node, ast.Call) and _dotted(node.func) == "DecorateInfo":
                    device = {k.arg: k.value for k in node.keywords}.get("device_type")
                    if (isinstance(device, ast.Constant) and device.value == "mps"
                            and (rel, node.lineno) not in self.mps_decorators_seen):
                        stray.append((rel, node.lineno))
        return stray


def parse(root, registry):
    """-> (the database as opinfo_db.py writes it plus where each entry is and its MPS decorators, the parser)."""
    parser = Parser(root, registry)
    opinfos = parser.run()
    return opinfos, parser


def to_db(opinfos, release):
    rows = [{k: op[k] for k in ("name", "variant", "aten_name", "op", "inplace", "method")} | {"dtypes": None}
            for op in opinfos]
    return {"torch": release, "source": "static AST parse of the release's common_methods_invocations.py and "
            "opinfo/definitions/*.py by tools/expectations/opinfo_static.py (no live torch; dtypes not known)",
            "opinfos": rows}


def compare(static_db, live_db, registry):
    """Agreement of a static parse with a live dump: keys, fields, and the ATen operators each key maps to."""
    s_key, _ = aten_map.index_opinfos(static_db)
    l_key, _ = aten_map.index_opinfos(live_db)
    both = sorted(s_key.keys() & l_key.keys())
    fields = {f: 0 for f in ("aten_name", "op", "inplace")}
    same_map, differ = 0, []
    for k in both:
        s, l = s_key[k][0], l_key[k][0]
        for f in fields:
            fields[f] += s.get(f) == l.get(f)
        sm = sorted(o for o, _ in aten_map.map_opinfo(s, registry)[0])
        lm = sorted(o for o, _ in aten_map.map_opinfo(l, registry)[0])
        if sm == lm:
            same_map += 1
        else:
            differ.append((k, sm, lm))
    return {"live": len(l_key), "static": len(s_key), "both": len(both),
            "only_live": sorted(l_key.keys() - s_key.keys()), "only_static": sorted(s_key.keys() - l_key.keys()),
            "fields": fields, "same_mapping": same_map, "mapping_differs": differ}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--source", required=True, help="root of the release's source (holds torch/testing/_internal)")
    p.add_argument("--registry", required=True, help="the release's native_functions.yaml")
    p.add_argument("--extra", help="the release's mps_extra_registrations.tsv")
    p.add_argument("--release", default="", help="the release, written into the JSON")
    p.add_argument("-o", "--out", help="write the database here")
    p.add_argument("--compare", help="a live dump (opinfo_db.py) to check the static parse against")
    opts = p.parse_args()
    registry = aten_map.Registry(opts.registry, opts.extra)
    opinfos, _ = parse(opts.source, registry)
    db = to_db(opinfos, opts.release)
    if opts.out:
        with open(opts.out, "w", encoding="utf-8") as f:
            json.dump(db, f, indent=0, sort_keys=True)
            f.write("\n")
        print(f"{len(opinfos)} OpInfos parsed from {opts.source} -> {opts.out}")
    if opts.compare:
        r = compare(db, aten_map.load_opinfo_db(opts.compare), registry)
        print(f"keys: {r['static']} static, {r['live']} live, {r['both']} in both")
        print(f"  only live ({len(r['only_live'])}): {' '.join(r['only_live'])}")
        print(f"  only static ({len(r['only_static'])}): {' '.join(r['only_static'])}")
        for f, n in r["fields"].items():
            print(f"field {f}: {n}/{r['both']} agree")
        print(f"ATen mapping: {r['same_mapping']}/{r['both']} keys map to the same operators "
              f"({100.0 * r['same_mapping'] / max(r['both'], 1):.1f}%)")
        for k, s, l in r["mapping_differs"]:
            print(f"  {k}: static {s or '-'} live {l or '-'}")


if __name__ == "__main__":
    main()
