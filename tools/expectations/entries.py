#!/usr/bin/env python3
# What extract.py's readers make of a list entry: an Entry (its dtypes and macOS points per scope), the kind its list
# and comment give it, dtype labels and their order, and an expression of the source evaluated in the sandbox.
import ast
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox  # noqa: E402

DTYPE_ORDER = ["float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool",
               "complex64", "complex128", "complex32"]

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




def dtype_sort_key(label):
    """Dtypes in the order the data files list them: floating, integral, bool, complex, then others by name."""
    return (DTYPE_ORDER.index(label) if label in DTYPE_ORDER else len(DTYPE_ORDER), label)


def evaluate(node):
    """An expression of the source (a dtype list, a helper call) in the sandbox."""
    return eval(compile(ast.Expression(node), "<list>", "eval"), sandbox.sandbox_globals(0.0))
