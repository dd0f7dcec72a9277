"""Records every ATen call a PyTorch program makes, for `mps-audit model --calls` to replay on a target.

    mps-audit record -o calls.pt -- python3 train.py ARGS...      (runs the program unchanged)

    import mps_audit_record                                        (in a notebook; `mps-audit record --module-path`
    with mps_audit_record.recording("calls.pt"):                    prints the folder to put on sys.path)
        train_one_step()

Each call is kept with its operator overload, its arguments by schema name (small tensors with their values; above
--max-numel elements, their shape, dtype, strides and value range, enough to rebuild valid inputs), the phase it ran in
(forward, loss, backward, optimizer) and the first line of the program's own code it came from. Identical calls
(operator, tensor shapes, dtypes and strides, other arguments) are kept once with their count and time. The file is
written in a form libtorch reads without Python (torch::jit::pickle_load): see docs/model.md.

Note [Two recorders]
The native recorder (libmps_audit_recorder, built with mps-audit: recorder/recorder.cc) observes the dispatcher from
C++, at about a microsecond a call, and changes nothing of what the program does. It must be built against the very
libtorch this Python's torch loads: beside it, libmps_audit_recorder.json names that libtorch's libc10, and it is used
only where that is the libc10 this process has loaded. Elsewhere (a torch wheel other than the one mps-audit was built
against), this module records with a TorchDispatchMode of its own, in Python, tens of microseconds a call, and says so
in one line. Both keep the same calls the same way; MPS_AUDIT_RECORDER=python chooses the Python one.

Note [Sites]
A call's site is the first frame, from the call outwards, of the program's own code: a file under its folder (the
script's, or pytest's rootdir), never the standard library, site-packages or torch (a deepcopy inside the program's
code is the program's line that called copy.deepcopy, not copy.py). Where no frame is the program's, the site is the
one its caller set (a test's own line), else "(outside the program)".
"""
import argparse
import json
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


def load(f):
    """torch.load of a calls file or a journal's record (a path or a file object): the recorder's own files, whose
    tagged values torch 2.6 and later refuse to load by default (weights_only)."""
    try:
        return torch.load(f, weights_only=False)
    except TypeError:  # a torch without weights_only
        return torch.load(f)


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
    """What makes two calls the same call (Note [Distinct calls] in recorder/call_values.cc): tensors by shape, dtype and
    strides, floating-point numbers by kind (NaN, an infinity, a whole number by value, another positive or negative
    number), other values by value."""
    if isinstance(v, torch.Tensor):
        return ("T", tuple(v.shape), str(v.dtype), tuple(v.stride()) if v.layout == torch.strided else ())
    if isinstance(v, (list, tuple)):
        return tuple(signature(x) for x in v)
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return repr(v)
        return ("f", v) if v == int(v) else ("f", v > 0)
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


def _library_folders():
    """The standard library's folders: never a program's own code (Note [Sites])."""
    import sysconfig
    paths = sysconfig.get_paths()
    return tuple(sorted({os.path.abspath(paths[k]) + os.sep for k in ("stdlib", "platstdlib") if paths.get(k)}))


_LIBRARY = _library_folders()
NO_SITE = "(outside the program)"


class Sites:
    """Where calls are made (Note [Sites]): `where(frame)` walks from `frame` outwards to the program's own code."""

    def __init__(self, base):
        self.base = os.path.abspath(base) + os.sep
        self.frames = {}  # code object -> (the program's own, phase or None, its file)
        self.sources = {}  # "train.py:42" -> the line's text
        self.default = None  # the site when no frame is the program's (the plugin sets a test's own line)

    def own(self, path, raw):
        if raw.startswith("<"):
            return not raw.startswith("<frozen")  # -c CODE is "<string>"
        if path in OWN_FILES or path.startswith(_TORCH_DIR) or path.startswith(_LIBRARY):
            return False
        parts = path.split(os.sep)
        if "site-packages" in parts or "dist-packages" in parts:
            return False
        return path.startswith(self.base)

    def where(self, f):
        """The phase (None when the frames do not tell) and site of a call made from frame `f`, and the site's code."""
        phase = None
        while f is not None:
            code = f.f_code
            known = self.frames.get(code)
            if known is None:
                raw = code.co_filename
                path = raw if raw.startswith("<") else os.path.abspath(raw)
                hint = next((p for prefix, names, p in _PHASES
                             if path.startswith(prefix) and (names is None or code.co_name in names)), None)
                known = self.frames[code] = (self.own(path, raw), hint, path)
            if phase is None and known[1]:
                phase = known[1]
            if known[0]:
                site = "{}:{}".format(self.short(known[2]), f.f_lineno)
                if site not in self.sources:
                    self.sources[site] = linecache.getline(code.co_filename, f.f_lineno).strip()
                return phase, site, self.sources[site]
            f = f.f_back
        return phase, self.default or NO_SITE, ""

    def short(self, path):
        """A file of the program relative to its folder ("train.py", "models/net.py"), others whole."""
        return path[len(self.base):] if path.startswith(self.base) else path


class Recording:
    """What a recording in Python has seen so far (Note [Two recorders]); `save()` writes it."""

    native = False

    def __init__(self, path, max_numel=DEFAULT_MAX_NUMEL, program=None, base=None):
        self.path = path
        # (test id, phase of the test: setup, call, teardown) of the calls made now, or None: a test suite's recording
        # (python/mps_audit.py) keeps each call's tests as "tests": {test: {setup|call|teardown: {site: calls}}}.
        self.context = None
        self.base = os.path.abspath(base or os.getcwd())  # sites are named relative to it
        self.sites = Sites(self.base)
        self.sources = self.sites.sources
        self.max_numel = max_numel
        self.program = list(program or [])
        self.calls = []
        self.index = {}  # signature -> position in self.calls
        self.dropped = Counter()  # "aten::op: reason" -> calls
        self.total = 0
        self.started = time.perf_counter()

    @property
    def distinct(self):
        return len(self.calls)

    def where(self):
        """The phase of the current call and its site (Note [Sites]): (phase, "file:line")."""
        phase, site, _ = self.sites.where(sys._getframe(1))
        return phase or "forward", site

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


# --- the native recorder (Note [Two recorders]) -----------------------------------------------------------------

_NATIVE = None  # (library, None) or (None, why), found once


def _loaded_c10():
    """The libc10 this process has loaded (with torch), as a real path; None where it cannot be told."""
    if sys.platform.startswith("linux"):
        try:
            with open("/proc/self/maps") as f:
                for line in f:
                    path = line.rsplit(None, 1)[-1] if "/" in line else ""
                    if os.path.basename(path).startswith("libc10.") and ".so" in path:
                        return os.path.realpath(path)
        except OSError:
            return None
        return None
    candidate = os.path.join(os.path.dirname(os.path.abspath(torch.__file__)), "lib", "libc10.dylib")
    return os.path.realpath(candidate) if os.path.exists(candidate) else None


def _library_candidates(binary=None):
    """Where the library may be: $MPS_AUDIT_RECORDER_LIBRARY alone where set; else beside the mps-audit binary that
    replays (`binary`, $MPS_AUDIT_BINARY: a build folder), beside this module (an install), the source tree's build/."""
    given = os.environ.get("MPS_AUDIT_RECORDER_LIBRARY")
    if given:
        return [given]
    here = os.path.dirname(_THIS_FILE)
    names = ("libmps_audit_recorder.so", "libmps_audit_recorder.dylib")
    folders = [os.path.dirname(os.path.abspath(b)) for b in (binary, os.environ.get("MPS_AUDIT_BINARY")) if b]
    folders += [here, os.path.join(os.path.dirname(here), "build")]
    seen = []
    for path in (os.path.join(f, n) for f in folders for n in names):
        if path not in seen:
            seen.append(path)
    return seen


def _built_for_this_torch(path):
    """None where the library at `path` was built against the libtorch this process has loaded, else why not."""
    sidecar = os.path.splitext(path)[0] + ".json"
    try:
        with open(sidecar) as f:
            built = json.load(f)
    except (OSError, ValueError) as e:
        return "{} is unreadable ({})".format(sidecar, e)
    loaded = _loaded_c10()
    wanted = os.path.realpath(built.get("c10", ""))
    if loaded != wanted:
        return "it was built against libtorch {} ({}), and this Python's torch {} loads {}".format(
            built.get("torch", "?"), wanted, torch.__version__, loaded or "a libc10 that cannot be told")
    return None


def native_library(binary=None):
    """The native recorder's library, loaded: (library, None), or (None, why it is not used). The first candidate
    (_library_candidates) built against this process's libtorch; decided once a process."""
    global _NATIVE
    if _NATIVE is not None:
        return _NATIVE
    if os.environ.get("MPS_AUDIT_RECORDER", "").lower() == "python":
        _NATIVE = (None, "MPS_AUDIT_RECORDER=python")
        return _NATIVE
    found = [c for c in _library_candidates(binary) if os.path.exists(c)]
    if not found:
        _NATIVE = (None, "no libmps_audit_recorder beside mps-audit")
        return _NATIVE
    why = {path: _built_for_this_torch(path) for path in found}
    matching = [path for path in found if why[path] is None]
    if not matching:
        _NATIVE = (None, why[found[0]])
        return _NATIVE
    path = matching[0]
    import ctypes
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        _NATIVE = (None, "{} does not load: {}".format(path, e))
        return _NATIVE
    c_char_p, c_int, c_int64, c_double = ctypes.c_char_p, ctypes.c_int, ctypes.c_int64, ctypes.c_double
    lib.SITE_FN = ctypes.CFUNCTYPE(None, c_int)
    lib.mpsa_torch_version.restype = c_char_p
    lib.mpsa_error.restype = c_char_p
    lib.mpsa_answer.argtypes = [c_char_p, c_char_p, c_char_p]
    lib.mpsa_start.argtypes = [c_int, c_int64, lib.SITE_FN]
    lib.mpsa_set_context.argtypes = [c_char_p, c_char_p]
    lib.mpsa_total.restype = lib.mpsa_distinct.restype = c_int64
    lib.mpsa_delta.argtypes = [c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)]
    lib.mpsa_save.argtypes = [c_char_p, c_char_p, c_char_p, c_double]
    lib.mpsa_free.argtypes = [ctypes.c_void_p]
    _NATIVE = (lib, None)
    return _NATIVE


class NativeRecording:
    """A recording by the native recorder (Note [Two recorders]), with the surface of Recording that the command and
    the pytest plugin use. One at a time in a process."""

    native = True

    def __init__(self, lib, path, max_numel=DEFAULT_MAX_NUMEL, program=None, base=None, suite=False):
        self.lib, self.path, self.max_numel, self.suite = lib, path, max_numel, suite
        self.program = list(program or [])
        self.base = os.path.abspath(base or os.getcwd())
        self.sites = Sites(self.base)
        self.sources = self.sites.sources
        self._context = None
        self._site_fn = lib.SITE_FN(self._site)  # kept: the library calls it
        self.started = time.perf_counter()

    def _site(self, backward):
        try:
            phase, site, code = self.sites.where(sys._getframe(1))
        except Exception:  # recording must never change what the program does
            phase, site, code = None, NO_SITE, ""
        self.lib.mpsa_answer((phase or "").encode(), site.encode(), code.encode())

    def _check(self, rc):
        if rc != 0:
            raise RuntimeError("the native recorder: " + self.lib.mpsa_error().decode(errors="replace"))

    def start(self):
        self._check(self.lib.mpsa_reset())
        self._check(self.lib.mpsa_start(1 if self.suite else 0, self.max_numel, self._site_fn))
        self.started = time.perf_counter()

    def stop(self):
        self._check(self.lib.mpsa_stop())

    @property
    def context(self):
        return self._context

    @context.setter
    def context(self, value):
        self._context = value
        test, when = value if value else (None, None)
        self.lib.mpsa_set_context(test.encode() if test else None, when.encode() if when else None)

    @property
    def total(self):
        return self.lib.mpsa_total()

    @property
    def distinct(self):
        return self.lib.mpsa_distinct()

    def delta(self, test):
        """What changed since the last delta (recorder.h mpsa_delta), as torch.load-able bytes."""
        import ctypes
        out, size = ctypes.c_void_p(), ctypes.c_size_t()
        self._check(self.lib.mpsa_delta(test.encode() if test else None, ctypes.byref(out), ctypes.byref(size)))
        try:
            return ctypes.string_at(out, size.value)
        finally:
            self.lib.mpsa_free(out)

    def save(self, error=None):
        self._check(self.lib.mpsa_save(self.path.encode(), json.dumps(self.program).encode(),
                                       (error or "").encode(), time.perf_counter() - self.started))


def new_recording(path, max_numel=DEFAULT_MAX_NUMEL, program=None, base=None, suite=False, say=None, binary=None):
    """A recording by the native recorder where it matches this torch, else by this module's (Note [Two recorders]);
    `say(line)` is told which, once, when it is this module's. `binary`: the mps-audit binary that will replay."""
    lib, why = native_library(binary)
    if lib is not None:
        return NativeRecording(lib, path, max_numel, program, base, suite)
    if say is not None and not why.startswith("MPS_AUDIT_RECORDER"):
        say("mps-audit: recording in Python, tens of microseconds a call: the native recorder is not used here: " + why)
    return Recording(path, max_numel, program, base)


class recording:
    """`with recording("calls.pt"):` records the ATen calls of the block, and writes the file when it ends, also when
    it raises (then marked incomplete, with the error)."""

    def __init__(self, path, max_numel=DEFAULT_MAX_NUMEL, program=None, base=None, say=None):
        self.recording = new_recording(path, max_numel, program, base, say=say)
        self.mode = None if self.recording.native else _Recorder(self.recording)

    def __enter__(self):
        if self.mode is None:
            self.recording.start()
        else:
            self.mode.__enter__()
        return self.recording

    def __exit__(self, kind, value, tb):
        if self.mode is None:
            self.recording.stop()
        else:
            self.mode.__exit__(kind, value, tb)
        error = None
        if kind is not None and not (kind is SystemExit and value.code in (None, 0)):
            error = "{}: {}".format(kind.__name__, value).strip()
        self.recording.save(error)
        return False


def summary_line(rec):
    return "recorded {} calls ({} distinct{}) in {:.1f} s to {}".format(
        rec.total, rec.distinct, "" if rec.native else ", in Python", time.perf_counter() - rec.started, rec.path)


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
    ctx = recording(opts.out, opts.max_numel, program, base, say=lambda line: sys.stderr.write(line + "\n"))
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
