# What extract.py and opinfo_static.py need to read PyTorch's test sources without importing them: a stand-in for
# `torch` whose dtypes are label strings, the dtype helpers of common_dtype.py, the source's comments, and macOS
# versions as the lists compare them.
import ast
import io
import re
import tokenize

# torch.<attribute> -> the label the data files use (torch's own name without "torch.", aliases resolved).
DTYPE_ALIASES = {
    "half": "float16", "float": "float32", "double": "float64", "cfloat": "complex64", "cdouble": "complex128",
    "chalf": "complex32", "long": "int64", "int": "int32", "short": "int16",
}
DTYPE_NAMES = {
    "float16", "float32", "float64", "bfloat16", "complex32", "complex64", "complex128", "int8", "int16", "int32",
    "int64", "uint8", "uint16", "uint32", "uint64", "bool", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "qint8", "quint8", "qint32", "quint4x2", "quint2x4",
}
# The abbreviations of 1.13.1's ALLOWLIST_OP (test_mps.py's dtype_abbrs).
ABBREVIATIONS = {"f16": "float16", "f32": "float32", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
                 "b8": "bool", "f64": "float64", "i8": "int8", "c64": "complex64", "c128": "complex128",
                 "bf16": "bfloat16", "c32": "complex32"}


def dtype_label(value):
    """A dtype as the lists write it (torch.half, 'torch.float16', 'f16') -> its label, or None when it is none."""
    if not isinstance(value, str):
        return None
    name = value[len("torch."):] if value.startswith("torch.") else value
    name = DTYPE_ALIASES.get(name, ABBREVIATIONS.get(name, name))
    return name if name in DTYPE_NAMES else None


class _Namespace:
    """An attribute bag: torch.backends.mps and the like."""

    def __init__(self, **attrs):
        self.__dict__.update(attrs)


class FakeTorch:
    """`torch` as the lists use it: torch.<dtype> is the dtype's label; torch.backends.mps answers the macOS checks
    for the version under evaluation. Any other attribute raises AttributeError, so an unforeseen use is seen."""

    def __init__(self, macos):
        def is_macos13_or_newer(minor=0):
            return macos >= 13 + minor / 10

        def is_macos_or_newer(major, minor):
            return macos >= major + minor / 10

        self.backends = _Namespace(mps=_Namespace(
            is_available=lambda: True, is_macos13_or_newer=is_macos13_or_newer, is_macos_or_newer=is_macos_or_newer))

    def __getattr__(self, name):
        label = dtype_label(name)
        if label is None:
            raise AttributeError(f"torch.{name} is not a dtype the sandbox knows")
        return label


_FLOATING = ("float32", "float64")
_INTEGRAL = ("uint8", "int8", "int16", "int32", "int64")
_COMPLEX = ("complex64", "complex128")
_FLOAT8 = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")


def _and(base):
    return lambda *extra: tuple(base) + tuple(extra)


# common_dtype.py's helpers, over labels.
DTYPE_HELPERS = {
    "empty_types": lambda: (),
    "floating_types": lambda: _FLOATING,
    "floating_types_and_half": lambda: _FLOATING + ("float16",),
    "floating_types_and": _and(_FLOATING),
    "floating_and_complex_types": lambda: _FLOATING + _COMPLEX,
    "floating_and_complex_types_and": _and(_FLOATING + _COMPLEX),
    "double_types": lambda: ("float64", "complex128"),
    "integral_types": lambda: _INTEGRAL,
    "integral_types_and": _and(_INTEGRAL),
    "all_types": lambda: _FLOATING + _INTEGRAL,
    "all_types_and": _and(_FLOATING + _INTEGRAL),
    "complex_types": lambda: _COMPLEX,
    "complex_types_and": _and(_COMPLEX),
    "all_types_and_complex": lambda: _FLOATING + _INTEGRAL + _COMPLEX,
    "all_types_and_complex_and": _and(_FLOATING + _INTEGRAL + _COMPLEX),
    "all_types_and_half": lambda: _FLOATING + _INTEGRAL + ("float16",),
    "float8_types": lambda: _FLOAT8,
    "float8_types_and": _and(_FLOAT8),
    "all_types_complex_float8_and": _and(_FLOATING + _INTEGRAL + _COMPLEX + _FLOAT8),
    "custom_types": lambda *extra: tuple(extra),
}


def sandbox_globals(macos, **extra):
    """The names a list's code may read while evaluated for macOS `macos`."""
    names = {"torch": FakeTorch(macos), "MACOS_VERSION": macos, "product_version": macos, "__builtins__": {
        "None": None, "True": True, "False": False, "set": set, "list": list, "dict": dict, "tuple": tuple,
        "len": len, "sorted": sorted, "isinstance": isinstance, "str": str, "float": float, "int": int}}
    names.update(DTYPE_HELPERS)
    names.update(extra)
    return names


def macos_thresholds(tree):
    """Every macOS version a condition in `tree` can turn on: numbers compared with MACOS_VERSION or
    product_version (for `>` and `<=`, the next minor version), and the arguments of
    torch.backends.mps.is_macos13_or_newer / is_macos_or_newer."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left] + list(node.comparators)
            for op, left, right in zip(node.ops, operands, operands[1:]):
                for var, num, flipped in ((left, right, False), (right, left, True)):
                    if (isinstance(var, ast.Name) and var.id in ("MACOS_VERSION", "product_version")
                            and isinstance(num, ast.Constant) and isinstance(num.value, (int, float))):
                        strict_above = isinstance(op, ast.Gt if not flipped else ast.Lt)
                        at_most = isinstance(op, ast.LtE if not flipped else ast.GtE)
                        value = float(num.value)
                        found.add(round(value + 0.1, 1) if strict_above or at_most else value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if node.func.attr == "is_macos13_or_newer":
                found.add(round(13 + (args[0] if args else 0) / 10, 1))
            elif node.func.attr == "is_macos_or_newer" and len(args) == 2:
                found.add(round(args[0] + args[1] / 10, 1))
    return found


# macOS 12.3 is the oldest MPS ever ran on: the point that stands for "before every threshold".
MACOS_FLOOR = 12.3
MACOS_ALWAYS = (13.0, 14.0, 15.0, 26.0)


def macos_points(tree):
    """The versions to evaluate at: each threshold of the source, 13, 14, 15 and 26, and the floor."""
    return sorted({MACOS_FLOOR, *MACOS_ALWAYS, *macos_thresholds(tree)})


def fmt_version(v):
    return f"{v:.1f}"


def macos_conditions(applies, points):
    """The versions of `points` where something applies -> its conditions, one per contiguous run: '*' for all,
    else '>=a', '<b' or '>=a,<b'. Each point stands for the versions from it up to the next point."""
    runs, start = [], None
    for i, v in enumerate(points):
        if v in applies and start is None:
            start = i
        if start is not None and (v not in applies or i == len(points) - 1):
            end = i if v in applies else i - 1
            runs.append((start, end))
            start = None
    out = []
    for a, b in runs:
        bounds = []
        if a > 0:
            bounds.append(">=" + fmt_version(points[a]))
        if b < len(points) - 1:
            bounds.append("<" + fmt_version(points[b + 1]))
        out.append(",".join(bounds) or "*")
    return out


def comments_by_line(text):
    """line number -> (comment text without '#', whether the comment is the whole line)."""
    out = {}
    lines = text.splitlines()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            line = tok.start[0]
            whole = lines[line - 1].strip().startswith("#")
            out[line] = (tok.string.lstrip("#").strip(), whole)
    return out


_COMMENTED_OUT = re.compile(r"""^['"][^'"]+['"]\s*:""")


def is_prose(comment):
    """A comment that says something, not a commented-out list entry like `# "kthvalue": None,`."""
    return bool(comment) and not _COMMENTED_OUT.match(comment)


def comment_above(comments, line, floor, adjacent=False):
    """The nearest block of whole-line comments above `line`, not above line `floor`: scanning up, code lines are
    passed over until a comment is met (with `adjacent`, the block must end right above `line`), then the block is
    the contiguous comments there. Lines joined by a space."""
    block = []
    n = line - 1
    while n > floor:
        c = comments.get(n)
        if c and c[1] and is_prose(c[0]):
            block.append(c[0])
        elif block or adjacent:
            break
        n -= 1
    return " ".join(reversed(block))


def comment_on(comments, first, last):
    """Comments on the lines `first`..`last` of one entry: trailing ones, and whole-line ones inside the entry."""
    return " ".join(comments[n][0] for n in range(first, last + 1) if n in comments and is_prose(comments[n][0]))


def clean(text):
    return " ".join(text.split())
