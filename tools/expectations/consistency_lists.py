#!/usr/bin/env python3
# 1.13.1's lists for extract.py: the allow and block lists of class TestConsistency in test/test_mps.py.
import ast
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox  # noqa: E402
from entries import Entry, evaluate, labels  # noqa: E402

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
            value = evaluate(v)
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
            e.add(scope, labels(evaluate(v)), 0.0)
            e.exclude = {key: labs for key, labs in blocked.items()
                         if any(op["name"] + op["variant"] == key for op in by_name.get(k.value, ()))}
            entries.append(e)
    return entries, not_applicable
