#!/usr/bin/env python3
# Turns PyTorch's own MPS test expectations (test_mps.py / common_mps.py lists, OpInfo DecorateInfos) into
# data/pytorch-X/mps_expectations.tsv by ATen operator, for the C++ reader; data/README.md has each release's command.
"""Extracts one release's MPS test expectations into an mps-audit-expectations/1 TSV.

The lists are evaluated, not pattern-matched: each modifier function (mps_ops_modifier, mps_ops_grad_modifier,
mps_ops_error_inputs_modifier) runs in a sandbox where torch.<dtype> is a label and MACOS_VERSION takes each macOS
version a condition of the source turns on (plus 13.0, 14.0, 15.0, 26.0 and the floor 12.3), over stand-in
OpInfos for every key; the DecorateInfos it adds say which list entry applies where. 1.13.1's class
TestConsistency (ALLOWLIST_OP, ALLOWLIST_OP_GRAD, BLOCKLIST) is read the same way, without versions."""
import argparse
import ast
import copy
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aten_map  # noqa: E402
import opinfo_static  # noqa: E402
import sandbox  # noqa: E402

FORMAT = "mps-audit-expectations/1"
COLUMNS = ("operator", "dtypes", "kind", "scope", "macos", "list", "opinfo", "mapping", "source", "reason")
MODIFIERS = {"mps_ops_modifier": "forward", "mps_ops_grad_modifier": "gradient",
             "mps_ops_error_inputs_modifier": "error_inputs"}
DTYPE_ORDER = ["float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool",
               "complex64", "complex128", "complex32"]
# The dtypes a gradient test can run in; a class-wide DecorateInfo names others only for the forward test.
GRAD_DTYPES = {"float32", "float16", "bfloat16", "complex64", "complex32"}

# Comment keywords, most telling first: the first group with a hit decides the kind.
KEYWORDS = [
    ("crash", ("crash", "hang", "segfault")),
    ("flaky", ("flaky",)),
    ("not_a_bug", ("random", "undefined", "nondetermin", "uninitialized")),
    ("wrong", ("wrong result", "accuracy", "precision", "mismatch", "incorrect", "numerical", "correctness",
               "not close")),
    ("unimplemented", ("not supported", "unsupported", "not implemented", "no support", "unimplemented",
                       "does not support", "not currently implemented", "not currently supported", "missing",
                       "lack of implementation", "not been enabled", "notimplementederror")),
    ("error", ("error", "raises", "exception", "fails")),
]


def keyword_kind(reason):
    """The kind a comment's keywords name, or None."""
    text = reason.lower()
    for kind, words in KEYWORDS:
        if any(w in text for w in words):
            return kind
    return None


def list_kind(list_name, scope, decorator, reason):
    """The kind of a list entry: lists with a fixed meaning decide it; the others default by list, unless a
    comment keyword says otherwise."""
    if list_name.startswith("UNIMPLEMENTED_XFAILLIST") or list_name.startswith("global:") \
            or list_name.endswith("(not in it)"):
        return "unimplemented"
    if list_name in ("UNDEFINED_XFAILLIST", "EMPTY_OPS_SKIPLIST"):
        return "not_a_bug"
    if list_name.startswith("SKIPLIST") or decorator == "skip":
        default = "crash"
    elif list_name.startswith("ON_MPS_XFAILLIST") or list_name.startswith("MACOS_"):
        default = "wrong"
    elif scope in ("gradient", "error_inputs"):
        default = "error"
    else:
        default = "wrong"
    return keyword_kind(reason) or default


class Entry:
    """One entry of a list (or one OpInfo a rule reaches): what it says for which dtypes on which macOS versions.
    conditions: scope -> dtype label ('*' for every dtype) -> the macOS points where it applies."""

    def __init__(self, list_name, key, line, reason, mode="key", source_file=None):
        self.list_name, self.key, self.line, self.reason, self.mode = list_name, key, line, reason, mode
        self.source_file = source_file  # None: the lists file
        self.conditions = {}
        self.decorator = "xfail"
        self.kind = None
        self.exclude = {}  # mode 'name' (1.13.1 allow lists): variant key -> dtypes BLOCKLIST takes away

    def add(self, scope, dtypes, point):
        by_dtype = self.conditions.setdefault(scope, {})
        for d in dtypes:
            by_dtype.setdefault(d, set()).add(point)


def labels(value):
    """A list's value -> dtype labels: None (every dtype) -> ['*']; unknown names are kept as written."""
    if value is None:
        return ["*"]
    out = []
    for v in value:
        out.append(sandbox.dtype_label(v) or str(v).replace("torch.", ""))
    return out


# --- 2.x: the modifier functions -------------------------------------------------------------------------------

class Tagged:
    """A list entry's value as the sandbox sees it: the value, and which list literal, key and lines it came from."""

    def __init__(self, list_name, key, line, end, value):
        self.list_name, self.key, self.line, self.end, self.value = list_name, key, line, end, value


class FakeDecorateInfo:
    """DecorateInfo as the modifier functions call it: keeps what says which entry applied, and how."""

    def __init__(self, decorators, cls_name=None, test_name=None, *, device_type=None, dtypes=None,
                 active_if=True, _line=None):
        self.decorator, self.dtypes, self.line = decorators, dtypes, _line


def _skip(reason=""):
    return ("skip", reason)


class FakeUnittest:
    """unittest as the modifiers use it: expectedFailure and skip(...) (or bare skip) become markers."""

    expectedFailure = "xfail"
    skip = staticmethod(_skip)


def decorator_type(d):
    return "xfail" if d == "xfail" else "skip"


class FakeOp:
    """An OpInfo stand-in whose key is `key`; the error-inputs modifier skips OpInfos without error inputs, so it
    has some."""

    def __init__(self, key):
        self.name, self.variant_test_name = key, ""
        self.decorators = ()
        self.error_inputs_func = True


def _list_target(stmt):
    """The list a statement fills with a literal: X = {...}, X: T = {...}, X.update({...}) -> (X, literal)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id, stmt.value
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id, stmt.value
    if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "update"
            and isinstance(stmt.value.func.value, ast.Name) and len(stmt.value.args) == 1):
        return stmt.value.func.value.id, stmt.value.args[0]
    return None, None


def _string_keys(literal):
    """(key, line, last line of its value) for each string key of a dict or element of a set literal."""
    if isinstance(literal, ast.Dict):
        return [(k.value, k.lineno, v.end_lineno) for k, v in zip(literal.keys, literal.values)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    if isinstance(literal, ast.Set):
        return [(e.value, e.lineno, e.end_lineno) for e in literal.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


class ListLiterals:
    """Every list literal of a function: name -> [(key, line, end line, literal's first line)], and where each
    literal's statement starts."""

    def __init__(self, fn):
        self.entries = {}
        self.spans = []  # (first line, last line, first line of the statement)
        for stmt in ast.walk(fn):
            name, literal = _list_target(stmt)
            if name and isinstance(literal, (ast.Dict, ast.Set)):
                self.spans.append((literal.lineno, literal.end_lineno, stmt.lineno))
                for key, line, end in _string_keys(literal):
                    self.entries.setdefault(name, []).append((key, line, end, literal.lineno))

    def reason(self, comments, line, end):
        """An entry's comment: on its lines, else the nearest comment block above it inside its literal, else the
        comments right above the statement that fills the list (`# FFT ... added in MacOS 14` over an update)."""
        for first, last, stmt_line in self.spans:
            if first <= line <= last:
                return (sandbox.comment_on(comments, line, end) or sandbox.comment_above(comments, line, first)
                        or sandbox.comment_above(comments, stmt_line, 0, adjacent=True))
        return sandbox.comment_on(comments, line, end)

    def all_keys(self):
        return {k for entries in self.entries.values() for k, _, _, _ in entries}


class _Tagger(ast.NodeTransformer):
    """Rewrites a modifier function for the sandbox: list literals' values become _tag(...) calls (a set becomes
    a dict of them), DecorateInfo calls learn their line, annotations go (they name types the sandbox lacks)."""

    def visit_FunctionDef(self, node):
        for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            a.annotation = None
        node.returns = None
        self.generic_visit(node)
        return node

    def visit_AnnAssign(self, node):
        self.generic_visit(node)
        if node.value is None:
            return None
        return ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)

    def generic_visit(self, node):
        name, literal = _list_target(node) if isinstance(node, ast.stmt) else (None, None)
        if name and isinstance(literal, (ast.Dict, ast.Set)):
            if isinstance(literal, ast.Set):
                keys = [e for e in literal.elts if isinstance(e, ast.Constant)]
                values = [ast.Constant(None) for _ in keys]
            else:
                keys, values = literal.keys, literal.values
            new_values = []
            for k, v in zip(keys, values):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    end = v.end_lineno if getattr(v, "end_lineno", None) else k.end_lineno
                    v = ast.Call(func=ast.Name("_tag", ast.Load()),
                                 args=[ast.Constant(name), ast.Constant(k.value), ast.Constant(k.lineno),
                                       ast.Constant(end), v],
                                 keywords=[])
                new_values.append(v)
            tagged = ast.Dict(keys=list(keys), values=new_values)
            if isinstance(literal, ast.Set):
                tagged = ast.copy_location(tagged, literal)
                if isinstance(node, ast.Expr):
                    node.value.args[0] = tagged
                else:
                    node.value = tagged
            else:
                literal.values = new_values
        return super().generic_visit(node)

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "DecorateInfo":
            node.keywords.append(ast.keyword(arg="_line", value=ast.Constant(node.lineno)))
        return node


def find_functions(tree, names):
    """name -> the FunctionDef of that name with the longest body (2.11 defines a stub of each for machines
    without MPS beside the real one)."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in names:
            if node.name not in found or len(ast.dump(node)) > len(ast.dump(found[node.name])):
                found[node.name] = node
    return found


class Site:
    """Where the loop adds a DecorateInfo that no list literal's value reaches: the key tests around it, the line
    that stands for it (the innermost `if` that tests the key, else its statement) and the lines whose comments
    may say why (its statement, then each enclosing `if`, innermost first)."""

    def __init__(self, stmt, enclosing):
        self.member_of = self.excluded_by = None
        self.line = stmt.lineno
        self.comment_lines = [stmt.lineno] + [node.lineno for node in enclosing]
        for node in enclosing:
            for sub in ast.walk(node.test):
                if (isinstance(sub, ast.Compare) and isinstance(sub.left, ast.Name) and sub.left.id == "key"
                        and len(sub.ops) == 1 and isinstance(sub.comparators[0], ast.Name)):
                    target = sub.comparators[0].id
                    if self.line == stmt.lineno and target != "xfail_exclusion":
                        self.line = node.lineno
                    if isinstance(sub.ops[0], ast.In) and self.member_of is None:
                        self.member_of = target
                    elif isinstance(sub.ops[0], ast.NotIn) and self.excluded_by is None \
                            and target != "xfail_exclusion":
                        self.excluded_by = target

    def reason(self, comments):
        for line in self.comment_lines:
            found = sandbox.comment_above(comments, line, 0, adjacent=True)
            if found:
                return found
        return ""


def decorate_sites(fn):
    """DecorateInfo line -> Site, for the DecorateInfos of the function's loop over the ops."""
    sites = {}

    def walk(stmts, enclosing):
        for stmt in stmts:
            if isinstance(stmt, ast.If):
                walk(stmt.body, [stmt] + enclosing)
                walk(stmt.orelse, enclosing)
            elif isinstance(stmt, (ast.For, ast.While, ast.With)):
                walk(stmt.body, enclosing)
            else:
                for node in ast.walk(stmt):
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                            and node.func.id == "DecorateInfo":
                        sites[node.lineno] = Site(stmt, enclosing)
    for stmt in fn.body:
        if isinstance(stmt, ast.For):
            walk(stmt.body, [])
    return sites


class ModifierReader:
    """Runs one modifier function over stand-in OpInfos at every macOS point and collects its entries."""

    def __init__(self, fn, scope, text, rel, db_keys):
        self.fn, self.scope, self.rel = fn, scope, rel
        self.comments = sandbox.comments_by_line(text)
        self.literals = ListLiterals(fn)
        self.sites = decorate_sites(fn)
        self.points = sandbox.macos_points(fn)
        self.db_keys = db_keys
        self.keys = sorted(self.literals.all_keys() | set(db_keys))
        tree = ast.Module(body=[_Tagger().visit(copy.deepcopy(fn))], type_ignores=[])
        self.code = compile(ast.fix_missing_locations(tree), rel, "exec")
        self.entries = {}      # (list, key, line) -> Entry
        self.rule_hits = {}    # site line -> {(scope, point): {key: [labels]}}
        self.rule_decorator = {}

    def run(self):
        params = [a.arg for a in self.fn.args.args + self.fn.args.kwonlyargs]
        for sparse in ([False, True] if "sparse" in params else [False]):
            for point in self.points:
                self.run_once(point, sparse)
        return self

    def run_once(self, point, sparse):
        names = sandbox.sandbox_globals(point, DecorateInfo=FakeDecorateInfo, unittest=FakeUnittest,
                                        _tag=Tagged)
        exec(self.code, names)
        ops = [FakeOp(k) for k in self.keys]
        result = names[self.fn.name](ops, sparse=True) if sparse else names[self.fn.name](ops)
        for op in (result if result is not None else ops):
            for d in op.decorators:
                self.record(op.name, d, point, sparse)

    def record(self, key, d, point, sparse):
        """One DecorateInfo the run added to `key`: a list entry's when its dtypes are a tagged value (or, without
        dtypes, when its statement tests `key in LIST`), else a rule's."""
        scope = "sparse" if sparse else self.scope
        dtypes = d.dtypes
        if isinstance(dtypes, Tagged):
            entry = self.entry(dtypes.list_name, dtypes.key, dtypes.line, dtypes.end)
            entry.decorator = decorator_type(d.decorator)
            entry.add(scope, labels(dtypes.value), point)
            return
        site = self.sites.get(d.line)
        if dtypes is None and site is not None and site.member_of in self.literals.entries:
            for k, line, end, _ in self.literals.entries[site.member_of]:
                if k == key:
                    entry = self.entry(site.member_of, k, line, end)
                    entry.decorator = decorator_type(d.decorator)
                    entry.add(scope, ["*"], point)
                    return
        hits = self.rule_hits.setdefault(d.line, {}).setdefault((scope, point), {})
        hits[key] = labels(dtypes)
        self.rule_decorator[d.line] = d.decorator

    def entry(self, list_name, key, line, end):
        ident = (list_name, key, line)
        if ident not in self.entries:
            reason = self.literals.reason(self.comments, line, end)
            self.entries[ident] = Entry(list_name, key, line, sandbox.clean(reason))
        return self.entries[ident]

    def rule_entries(self):
        """The DecorateInfos no list entry made: a rule for every key (operator '*') where it hits every OpInfo
        key at each point it hits any, else one entry per OpInfo key it hits."""
        out = []
        for line, hits in sorted(self.rule_hits.items()):
            site = self.sites.get(line)
            stmt_line = site.line if site else line
            decorator = self.rule_decorator[line]
            reason = site.reason(self.comments) if site else ""
            if not reason and isinstance(decorator, tuple):
                reason = decorator[1]
            everywhere = all(set(self.db_keys) <= set(by_key) for by_key in hits.values())
            if everywhere:
                per_scope = {}
                for (scope, point), by_key in hits.items():
                    for lab in by_key[self.db_keys[0]]:
                        per_scope.setdefault(scope, {}).setdefault(lab, set()).add(point)
                self.sparse_only(per_scope)
                dtype_names = sorted({lab for by in per_scope.values() for lab in by}, key=dtype_sort_key)
                if not dtype_names:
                    continue
                e = Entry("global: " + "/".join(dtype_names), "*", stmt_line, sandbox.clean(reason), mode="global")
                e.conditions = per_scope
                e.decorator = decorator_type(decorator)
                out.append(e)
                continue
            name = f"{site.excluded_by} (not in it)" if site and site.excluded_by else f"rule at line {stmt_line}"
            by_entry = {}
            for (scope, point), by_key in hits.items():
                for key, labs in by_key.items():
                    if key not in self.db_keys:
                        continue  # a key only a list names is no OpInfo: the rule never meets it
                    if key not in by_entry:
                        by_entry[key] = Entry(name, key, stmt_line, sandbox.clean(reason))
                        by_entry[key].decorator = decorator_type(decorator)
                    by_entry[key].add(scope, labs, point)
            out.extend(by_entry[k] for k in sorted(by_entry))
        return out

    def sparse_only(self, conditions):
        """Keeps under scope sparse only what the sparse run adds to the plain one (same dtype, same point)."""
        sparse, plain = conditions.get("sparse", {}), conditions.get(self.scope, {})
        for lab in list(sparse):
            sparse[lab] -= plain.get(lab, set()) | plain.get("*", set())
            if not sparse[lab]:
                del sparse[lab]
        if "sparse" in conditions and not sparse:
            del conditions["sparse"]

    def results(self):
        """-> (entries in source order then the rules' entries, literal entries that never applied)."""
        found = sorted(self.entries.values(), key=lambda e: (e.line, e.key)) + self.rule_entries()
        for e in found:
            self.sparse_only(e.conditions)
        used = {e.list_name for e in self.entries.values()}
        never = [(name, key, line) for name, entries in sorted(self.literals.entries.items()) if name in used
                 for key, line, _, _ in entries if (name, key, line) not in self.entries]
        return [e for e in found if e.conditions], never

    def unused_lists(self):
        """List literals no DecorateInfo came from directly (exemption sets such as SUPPORTED_COMPLEX_OPS)."""
        used = {e.list_name for e in self.entries.values()}
        return {name: len(entries) for name, entries in self.literals.entries.items() if name not in used}


def read_modifiers(text, rel, db_keys):
    """A ModifierReader, run, for each modifier function the file defines."""
    tree = ast.parse(text)
    functions = find_functions(tree, MODIFIERS)
    readers = []
    for name in MODIFIERS:
        if name in functions:
            readers.append(ModifierReader(functions[name], MODIFIERS[name], text, rel, db_keys).run())
    return readers


def instantiated_devices(tree):
    """Test class -> the device type its tests are instantiated for (instantiate_device_type_tests(...,
    only_for=...)); empty when the file does not instantiate them (common_mps.py)."""
    out = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "instantiate_device_type_tests" and node.args
                and isinstance(node.args[0], ast.Name)):
            only = {k.arg: k.value for k in node.keywords}.get("only_for")
            if isinstance(only, ast.Constant):
                out[node.args[0].id] = only.value
    return out


# --- 1.13.1: class TestConsistency -----------------------------------------------------------------------------

BLOCKLIST_GROUPS = [("doesn't know about variants", None), ("hard crash", "crash"), ("hang", "crash"),
                    ("not working", "error"), ("flaky", "flaky")]


# A BLOCKLIST comment of 1.13.1 over the entries that crash or hang only when the forward pass runs with
# requires_grad=True or the backward runs (test/test_mps.py:7542).
GRADIENT_ONLY = "forward when requires_grad=True or running backward"
DIFFERENTIABLE = {"float32", "float16", "bfloat16", "float64", "complex64", "complex32", "complex128"}


def _class_dicts(tree, cls_name, names):
    """The dict literals a class body assigns to `names`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls_name:
            return {s.targets[0].id: s.value for s in node.body
                    if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                    and s.targets[0].id in names and isinstance(s.value, ast.Dict)}
    return {}


def _evaluate(node):
    """An expression of the source (a dtype list, a helper call) in the sandbox."""
    return eval(compile(ast.Expression(node), "<list>", "eval"), sandbox.sandbox_globals(0.0))


def blocklist_group(comments, line, floor):
    """The group comment above a BLOCKLIST entry ('Functions that hang', ...): its text and the kind it gives."""
    n = line - 1
    while n > floor:
        c = comments.get(n)
        if c and c[1]:
            for words, kind in BLOCKLIST_GROUPS:
                if words in c[0]:
                    return c[0], kind
        n -= 1
    return "", None


def read_test_consistency(text, by_name):
    """1.13.1's BLOCKLIST (scope forward) and ALLOWLIST_OP / ALLOWLIST_OP_GRAD (kind passes, keyed by op.name)
    -> (entries, not-applicable notes)."""
    tree = ast.parse(text)
    comments = sandbox.comments_by_line(text)
    dicts = _class_dicts(tree, "TestConsistency", {"ALLOWLIST_OP", "ALLOWLIST_OP_GRAD", "BLOCKLIST"})
    entries, not_applicable = [], []
    blocked = {}
    block = dicts.get("BLOCKLIST")
    if block is not None:
        for k, v in zip(block.keys, block.values):
            value = _evaluate(v)
            reason = sandbox.comment_on(comments, k.lineno, v.end_lineno) or sandbox.comment_above(
                comments, k.lineno, block.lineno)
            group, kind = blocklist_group(comments, k.lineno, block.lineno)
            if group and group not in reason:
                reason = f"{group}: {reason}" if reason else group
            blocked[k.value] = set(labels(value))
            e = Entry("BLOCKLIST", k.value, k.lineno, sandbox.clean(reason))
            if kind is None:
                not_applicable.append(("BLOCKLIST", k.value, f"'{group}': the allow list's name-wide entry "
                                       "would have run this variant, so it is blocked, not known to fail"))
                continue
            e.kind = kind
            dtypes = labels(value)
            if GRADIENT_ONLY in reason:
                # Only a floating-point tensor can require grad: those dtypes fail in the gradient test, the others
                # (which cannot) in the forward one.
                grad = [d for d in dtypes if d in DIFFERENTIABLE]
                if grad:
                    e.add("gradient", grad, 0.0)
                dtypes = [d for d in dtypes if d not in DIFFERENTIABLE]
                if not dtypes:
                    entries.append(e)
                    continue
            e.add("forward", dtypes, 0.0)
            entries.append(e)
    for list_name, scope in (("ALLOWLIST_OP", "forward"), ("ALLOWLIST_OP_GRAD", "gradient")):
        allow = dicts.get(list_name)
        if allow is None:
            continue
        for k, v in zip(allow.keys, allow.values):
            e = Entry(list_name, k.value, k.lineno, "", mode="name")
            e.kind = "passes"
            e.add(scope, labels(_evaluate(v)), 0.0)
            e.exclude = {key: labs for key, labs in blocked.items()
                         if any(op["name"] + op["variant"] == key for op in by_name.get(k.value, ()))}
            entries.append(e)
    return entries, not_applicable


# --- OpInfo DecorateInfos --------------------------------------------------------------------------------------

def decorator_entries(opinfos, stray, devices, points):
    """The xfail/skip DecorateInfos of op_db OpInfos that reach TestConsistency's tests or the error-inputs test
    on MPS -> (entries, not-applicable notes)."""
    entries, not_applicable = [], []
    for op in opinfos:
        key = op["name"] + op["variant"]
        for d in op["mps_decorators"]:
            where = f"{key}@{d['file']}:{d['line']}"
            if d["decorator"] not in ("expectedFailure", "skip"):
                not_applicable.append(("OpInfo decorator", where, f"a {d['decorator']}, not an xfail or skip"))
                continue
            scopes = decorator_scopes(d, devices)
            if isinstance(scopes, str):
                not_applicable.append(("OpInfo decorator", where, scopes))
                continue
            try:
                dtypes = labels(_evaluate(ast.parse(d["dtypes"], mode="eval").body)) if d["dtypes"] else ["*"]
                active = [p for p in points if d["active_if"] is None or eval(
                    d["active_if"], sandbox.sandbox_globals(p))]
            except Exception as exc:  # an expression the sandbox cannot evaluate is reported, not guessed
                not_applicable.append(("OpInfo decorator", where, f"cannot evaluate its dtypes or active_if: {exc}"))
                continue
            e = Entry("OpInfo decorator", key, d["line"], d["reason"], source_file=d["file"])
            e.decorator = "xfail" if d["decorator"] == "expectedFailure" else "skip"
            for scope in scopes:
                labs = dtypes if scope != "gradient" or dtypes == ["*"] else [t for t in dtypes if t in GRAD_DTYPES]
                for p in active:
                    e.add(scope, labs, p)
            if any(e.conditions.get(s) for s in scopes):
                entries.append(e)
            else:
                not_applicable.append(("OpInfo decorator", where, "no dtype its test runs in"))
    for rel, line in stray:
        not_applicable.append(("OpInfo decorator", f"{rel}:{line}", "not on an op_db OpInfo"))
    return entries, not_applicable


def decorator_scopes(d, devices):
    """The scopes a DecorateInfo reaches, or why it reaches none."""
    on_mps = lambda cls: devices.get(cls, "mps") == "mps"  # noqa: E731
    cls, test = d["cls"], d["test"]
    device_mps = d["device"] == "mps"
    if cls == "TestConsistency" or cls is None:
        if device_mps and not on_mps("TestConsistency") and cls == "TestConsistency":
            return "TestConsistency runs as device 'cpu' in this release"
        scopes = []
        if not device_mps or on_mps("TestConsistency"):
            if test in (None, "test_output_match"):
                scopes.append("forward")
            if test in (None, "test_output_grad_match"):
                scopes.append("gradient")
        if cls is None and d["dtypes"] is None and on_mps("TestErrorInputs") and test is None:
            scopes.append("error_inputs")
        return scopes or "no MPS test of TestConsistency or the error-inputs test runs it in this release"
    if cls == "TestErrorInputs" and test in (None, "test_error_inputs"):
        return ["error_inputs"]
    return f"for {cls}" + (f".{test}" if test else "")


# --- rows ------------------------------------------------------------------------------------------------------

def dtype_sort_key(label):
    """Dtypes in the order the data files list them: floating, integral, bool, complex, then others by name."""
    return (DTYPE_ORDER.index(label) if label in DTYPE_ORDER else len(DTYPE_ORDER), label)


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
