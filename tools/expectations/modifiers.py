#!/usr/bin/env python3
# 2.x's lists for extract.py: the modifier functions of common_mps.py (or test_mps.py), run in the sandbox over
# stand-in OpInfos at every macOS point, each DecorateInfo they add traced back to its list entry or rule.
import ast
import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox  # noqa: E402
from entries import Entry, dtype_sort_key, labels  # noqa: E402

MODIFIERS = {"mps_ops_modifier": "forward", "mps_ops_grad_modifier": "gradient",
             "mps_ops_error_inputs_modifier": "error_inputs"}


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
