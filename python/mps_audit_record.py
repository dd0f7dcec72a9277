"""Records every ATen call a PyTorch program makes, for `mps-audit model --calls` to replay on a target.

    mps-audit record -o calls.pt -- python3 train.py ARGS...      (runs the program unchanged)

    import mps_audit_record                                        (in a notebook; `mps-audit record --module-path`
    with mps_audit_record.recording("calls.pt"):                    prints the folder to put on sys.path)
        train_one_step()

Needs nothing but torch (1.13 or 2.x). Each call is kept with its operator overload, its arguments by schema name
(small tensors with their values; above --max-numel elements, their shape, dtype, strides and value range, enough
to rebuild valid inputs), the phase it ran in (forward, loss, backward, optimizer) and the first line of the
program's own code it came from. Identical calls (operator, tensor shapes, dtypes and strides, other arguments) are
kept once with their count and time. The file is written with torch.save in a form libtorch reads without Python
(torch::jit::pickle_load): see docs/model.md.
"""
import argparse
import linecache
import math
import os
import pickle
import runpy
import sys
import time
import traceback
from collections import Counter

try:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
except ImportError as e:
    if __name__ != "__main__":
        raise
    sys.stderr.write("error: {} cannot import torch ({}): record with the Python that runs the program\n".format(
        sys.executable, e))
    sys.exit(2)

FORMAT = "mps-audit-calls/1"
DEFAULT_MAX_NUMEL = 4096

# What torch.save and libtorch's reader both handle.
SAVED_DTYPES = {torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32, torch.int16,
                torch.int8, torch.uint8, torch.bool, torch.complex64, torch.complex128}


class BatchedPickler(pickle._Pickler):
    """Writes every list and dict with APPENDS and SETITEMS, and big ints as 8-byte LONG1: libtorch's unpickler
    (torch::jit::pickle_load, at least in 1.13) knows no APPEND or SETITEM, which Python's pickler uses for a list
    or dict of one item, and reads LONG1 of 8 bytes only."""

    def save_long(self, obj):
        if -2**31 <= obj < 2**31:
            return pickle._Pickler.save_long(self, obj)
        self.write(pickle.LONG1 + b"\x08" + obj.to_bytes(8, "little", signed=True))

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[int] = save_long

    def _batch_appends(self, items, *rest):
        items = list(items)
        if items:
            self.write(pickle.MARK)
            for x in items:
                self.save(x)
            self.write(pickle.APPENDS)

    def _batch_setitems(self, items, *rest):
        items = list(items)
        if items:
            self.write(pickle.MARK)
            for k, v in items:
                self.save(k)
                self.save(v)
            self.write(pickle.SETITEMS)


class PickleModule:
    """What torch.save needs of a pickle module."""
    Pickler = BatchedPickler
    Unpickler = pickle.Unpickler
    dump = staticmethod(pickle.dump)
    dumps = staticmethod(pickle.dumps)
    load = staticmethod(pickle.load)
    loads = staticmethod(pickle.loads)
    __name__ = "pickle"


def save(obj, path):
    """torch.save in the form libtorch's reader takes."""
    torch.save(obj, path, pickle_module=PickleModule)


class Drop(Exception):
    """A value libtorch could not read back as the operator needs it; the call is counted, not kept."""


def dtype_label(dt):
    return str(dt).replace("torch.", "")


def flat_tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from flat_tensors(v)


def plain_tensor(v):
    """The tensor's values as a plain CPU tensor of its own, or Drop."""
    if v.layout != torch.strided or v.is_quantized or v.is_sparse:
        raise Drop("sparse or quantized tensor")
    if getattr(v, "names", None) and any(n is not None for n in v.names):
        raise Drop("named tensor")
    if v.dtype not in SAVED_DTYPES:
        raise Drop("tensor of dtype " + dtype_label(v.dtype))
    t = v.detach()
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    return t


def encode(v, max_numel=None):
    """A call's argument as libtorch reads it back (probe/recorded_samples.cc). With `max_numel`, a bigger tensor is
    described ({"tensor": {shape, strides, dtype, low, high}}) instead of kept; without, it is Drop."""
    if isinstance(v, int) and not isinstance(v, bool) and not -2**63 <= v < 2**63:
        raise Drop("int beyond int64")
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, torch.Tensor):
        t = plain_tensor(v)
        if t.numel() > (max_numel if max_numel is not None else float("inf")):
            return {"tensor": describe(t)}
        return t.to("cpu").clone()  # the operator may write it afterwards
    if isinstance(v, (list, tuple)):
        return [encode(x, max_numel) for x in v]
    if isinstance(v, complex):
        return {"complex": [v.real, v.imag]}
    if isinstance(v, torch.dtype):
        return {"dtype": dtype_label(v)}
    if isinstance(v, torch.layout):
        return {"layout": str(v).replace("torch.", "")}
    if isinstance(v, torch.device):
        # The device the program chose is where its calls ran; a replay runs them on the CPU and on the target.
        return {"device": "cpu"}
    if isinstance(v, torch.memory_format):
        return {"memory_format": str(v).replace("torch.", "")}
    raise Drop("value of type " + type(v).__name__)


def describe(t):
    """A big tensor without its values: enough to make one the operator takes (index bounds, class labels)."""
    low = high = 0.0
    if t.numel():
        if t.is_complex():
            t = torch.view_as_real(t)
        low, high = t.min().item(), t.max().item()
        # The finite values' range; only a tensor with an infinity or a NaN pays for picking them out.
        if t.is_floating_point() and not (math.isfinite(low) and math.isfinite(high)):
            finite = t[torch.isfinite(t)]
            low, high = (finite.min().item(), finite.max().item()) if finite.numel() else (0.0, 0.0)
    return {"shape": list(t.shape), "strides": list(t.stride()), "dtype": dtype_label(t.dtype),
            "low": float(low), "high": float(high)}


def signature(v):
    """What makes two calls the same call: tensors by shape, dtype and strides, other values by value."""
    if isinstance(v, torch.Tensor):
        return ("T", tuple(v.shape), str(v.dtype), tuple(v.stride()) if v.layout == torch.strided else ())
    if isinstance(v, (list, tuple)):
        return tuple(signature(x) for x in v)
    if isinstance(v, float) and v != v:
        return "nan"
    return repr(v)


def nbytes(value):
    return sum(t.numel() * t.element_size() for t in flat_tensors(value))


def named_arguments(func, args, kwargs):
    schema = func._schema
    positional = [a for a in schema.arguments if not a.kwarg_only]
    if len(args) > len(positional):
        raise Drop("more positional arguments than the schema")
    named = {a.name: v for a, v in zip(positional, args)}
    named.update(kwargs)
    return named


def call_dtype(named, default_dtype):
    """The dtype a call is probed in: its first tensor's, else its dtype argument's, else the default dtype."""
    for v in named.values():
        for t in flat_tensors(v):
            return dtype_label(t.dtype)
    if isinstance(named.get("dtype"), torch.dtype):
        return dtype_label(named["dtype"])
    return dtype_label(default_dtype)


_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_THIS_FILE = os.path.abspath(__file__)
# The recorder's own files (the pytest plugin adds its own): never a call's site.
OWN_FILES = {_THIS_FILE}
# A frame of these files (and, where named, these functions) means the call was made for that phase; the innermost
# such frame decides. Only autograd's entry points mean backward: its profiler's record_function, which
# Optimizer.zero_grad and step enter, does not.
_PHASES = (
    (os.path.join(_TORCH_DIR, "optim") + os.sep, None, "optimizer"),
    (os.path.join(_TORCH_DIR, "autograd") + os.sep, {"backward", "grad", "_engine_run_backward"}, "backward"),
    (os.path.join(_TORCH_DIR, "nn", "modules", "loss.py"), None, "loss"),
)


class Recording:
    """What a recording has seen so far; `save()` writes it."""

    def __init__(self, path, max_numel=DEFAULT_MAX_NUMEL, program=None, base=None):
        self.path = path
        # (test id, phase of the test: setup, call, teardown) of the calls made now, or None: a test suite's recording
        # (python/mps_audit.py) keeps each call's tests as "tests": {test: {setup|call|teardown: {site: calls}}}.
        self.context = None
        self.base = os.path.abspath(base or os.getcwd())  # sites are named relative to it
        self.max_numel = max_numel
        self.program = list(program or [])
        self.calls = []
        self.index = {}  # signature -> position in self.calls
        self.dropped = Counter()  # "aten::op: reason" -> calls
        self.total = 0
        self.started = time.perf_counter()
        self.frames = {}  # code object -> (inside torch or this file, phase or None, its file)
        self.sources = {}  # "train.py:42" -> the line's text

    def where(self):
        """The phase of the current call and the first frame of the program's own code: (phase, "file:line")."""
        phase = None
        f = sys._getframe(2)
        while f is not None:
            code = f.f_code
            known = self.frames.get(code)
            if known is None:
                path = code.co_filename if code.co_filename.startswith("<") else os.path.abspath(code.co_filename)
                inside = path.startswith(_TORCH_DIR) or path in OWN_FILES or code.co_filename.startswith("<frozen")
                hint = next((p for prefix, names, p in _PHASES
                             if path.startswith(prefix) and (names is None or code.co_name in names)), None)
                known = self.frames[code] = (inside, hint, path)
            if phase is None and known[1]:
                phase = known[1]
            if not known[0]:
                site = "{}:{}".format(self.short(known[2]), f.f_lineno)
                if site not in self.sources:
                    self.sources[site] = linecache.getline(code.co_filename, f.f_lineno).strip()
                return phase or "forward", site
            f = f.f_back
        return phase or "forward", "(torch)"

    def short(self, path):
        """A file of the program relative to its script's folder ("train.py", "models/net.py"), others whole."""
        try:
            rel = os.path.relpath(path, self.base)
        except ValueError:
            return path
        return path if rel.startswith(".." + os.sep) else rel

    def before(self, func, args, kwargs):
        """The call's entry, made on its first sighting (its values are taken before the operator can write them);
        None when it cannot be kept."""
        schema = func._schema
        name = schema.name + ("." + schema.overload_name if schema.overload_name else "")
        if not name.startswith("aten::"):  # the profiler's record_function, which the optimizer enters
            return None
        self.total += 1
        try:
            named = named_arguments(func, args, kwargs)
            key = (name, tuple(sorted((k, signature(v)) for k, v in named.items())))
            pos = self.index.get(key)
            if pos is not None:
                return self.calls[pos]
            encoded = {k: encode(v, self.max_numel) for k, v in named.items()}
        except Drop as d:
            self.dropped["{}: {}".format(name, d)] += 1
            return None
        entry = {"op": name, "dtype": call_dtype(named, torch.get_default_dtype()), "args": encoded, "count": 0,
                 "seconds": 0.0, "in_bytes": nbytes(list(named.values())), "out_bytes": -1, "phases": {},
                 "sites": {}}
        self.index[key] = len(self.calls)
        self.calls.append(entry)
        self.kept(entry, named)
        return entry

    def kept(self, entry, named):
        """Called once for each new distinct call, with its arguments by name (a subclass's hook)."""

    def after(self, entry, out, seconds):
        phase, site = self.where()
        entry["count"] += 1
        entry["seconds"] += seconds
        entry["phases"][phase] = entry["phases"].get(phase, 0) + 1
        at = entry["sites"].setdefault(site, {})
        at[phase] = at.get(phase, 0) + 1
        if self.context is not None:
            test, when = self.context
            made = entry.setdefault("tests", {}).setdefault(test, {}).setdefault(when, {})
            made[site] = made.get(site, 0) + 1
        if entry["out_bytes"] < 0:
            entry["out_bytes"] = nbytes(out if isinstance(out, (list, tuple)) else [out])

    def save(self, error=None):
        save({
            "format": FORMAT,
            "torch": torch.__version__.split("+")[0],
            "program": self.program,
            "complete": error is None,
            "error": error or "",
            "seconds": time.perf_counter() - self.started,
            "total": self.total,
            "max_numel": self.max_numel,
            "dropped": dict(self.dropped),
            "sources": self.sources,
            "calls": self.calls,
        }, self.path)


class _Recorder(TorchDispatchMode):
    def __init__(self, recording):
        super().__init__()
        self.recording = recording

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        rec = self.recording
        try:
            entry = rec.before(func, args, kwargs)
        except Exception as e:  # recording must never change what the program does
            rec.dropped["{}: recorder error {}".format(func, type(e).__name__)] += 1
            entry = None
        start = time.perf_counter()
        out = func(*args, **kwargs)
        seconds = time.perf_counter() - start
        if entry is not None:
            try:
                rec.after(entry, out, seconds)
            except Exception as e:
                rec.dropped["{}: recorder error {}".format(func, type(e).__name__)] += 1
        return out


class recording:
    """`with recording("calls.pt"):` records the ATen calls of the block, and writes the file when it ends, also when
    it raises (then marked incomplete, with the error)."""

    def __init__(self, path, max_numel=DEFAULT_MAX_NUMEL, program=None, base=None):
        self.recording = Recording(path, max_numel, program, base)
        self.mode = _Recorder(self.recording)

    def __enter__(self):
        self.mode.__enter__()
        return self.recording

    def __exit__(self, kind, value, tb):
        self.mode.__exit__(kind, value, tb)
        error = None
        if kind is not None and not (kind is SystemExit and value.code in (None, 0)):
            error = "{}: {}".format(kind.__name__, value).strip()
        self.recording.save(error)
        return False


def summary_line(rec):
    ops = len({c["op"] for c in rec.calls})
    dropped = sum(rec.dropped.values())
    return "recorded {} calls ({} distinct, {} operators{}) in {:.1f} s to {}".format(
        rec.total, len(rec.calls), ops, ", {} not kept".format(dropped) if dropped else "",
        time.perf_counter() - rec.started, rec.path)


def main(argv=None):
    p = argparse.ArgumentParser(prog="mps-audit record", description="Records the ATen calls of a Python program.")
    p.add_argument("-o", "--out", required=True, help="the calls file to write")
    p.add_argument("--max-numel", type=int, default=DEFAULT_MAX_NUMEL,
                   help="tensors with more elements are kept as shape, dtype, strides and value range")
    p.add_argument("-m", dest="module", help="run a module (python -m MODULE)")
    p.add_argument("-c", dest="code", help="run a program given as a string")
    p.add_argument("program", nargs=argparse.REMAINDER, help="the script and its arguments")
    opts = p.parse_args(argv)
    rest = [a for a in opts.program if a != "--"] if opts.program[:1] == ["--"] else opts.program
    if opts.module is None and opts.code is None and not rest:
        p.error("no program to run")
    if opts.module:
        sys.argv = [opts.module] + rest
        sys.path.insert(0, os.getcwd())
        run = lambda: runpy.run_module(opts.module, run_name="__main__", alter_sys=True)  # noqa: E731
    elif opts.code is not None:
        sys.argv = ["-c"] + rest
        run = lambda: exec(compile(opts.code, "<string>", "exec"), {"__name__": "__main__"})  # noqa: E731
    else:
        script = rest[0]
        if not os.path.exists(script):
            sys.stderr.write("error: {}: no such file\n".format(script))
            return 2
        sys.argv = list(rest)
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        run = lambda: runpy.run_path(script, run_name="__main__")  # noqa: E731
    program = [os.path.basename(sys.executable)] + (["-m", opts.module] if opts.module else
                                                     ["-c", opts.code] if opts.code is not None else []) + rest
    status = 0
    base = os.path.dirname(os.path.abspath(rest[0])) if opts.module is None and opts.code is None else os.getcwd()
    ctx = recording(opts.out, opts.max_numel, program, base)
    try:
        with ctx:
            run()
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException as e:
        # The program's traceback as Python would print it: from its own first frame, not the recorder's.
        tb = e.__traceback__
        while tb is not None and (os.path.abspath(tb.tb_frame.f_code.co_filename) == _THIS_FILE or
                                  tb.tb_frame.f_code.co_filename.startswith("<frozen")):
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb)
        status = 1
    rec = ctx.recording
    line = summary_line(rec)
    if status:
        line += "; incomplete: the program exited with {}".format(status)
    sys.stderr.write(line + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
