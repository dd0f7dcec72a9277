#!/usr/bin/env python3
# Records the ATen calls that PyTorch's own OpInfo sample inputs make (forward, and backward through autograd), with
# their arguments by schema name, into a file libtorch reads without Python (torch::jit::pickle_load).
#
# Usage (see docs/inputs.md):
#   PYTHONPATH=tools /usr/bin/python3 tools/record_samples.py --out data/pytorch-1.13.1/samples.pt
# Works with torch 1.13 and 2.x. `torch.testing._internal` imports `expecttest`; tools/expecttest.py stands in for
# it when the package is not installed.
import argparse
import json
import os
import pickle
import sys
import time
import warnings
from collections import Counter, defaultdict

sys.path.append(os.path.dirname(os.path.abspath(__file__)))  # tools/expecttest.py, when no expecttest is installed

import torch
from torch.utils._python_dispatch import TorchDispatchMode

FORMAT = "mps-audit-samples/1"
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16, torch.int8,
          torch.uint8, torch.bool, torch.complex64]
# What torch.save and libtorch's reader both handle (not complex32, quantized or unsigned dtypes beyond uint8).
SAVED_DTYPES = set(DTYPES) | {torch.float64, torch.complex128}
GRAD_DTYPES = {torch.float32, torch.float16, torch.bfloat16, torch.complex64}


class _BatchedPickler(pickle._Pickler):
    """Writes every list and dict with APPENDS and SETITEMS, and big ints as 8-byte LONG1: libtorch's unpickler
    (torch::jit::pickle_load, at least in 1.13) knows no APPEND or SETITEM, which Python's pickler uses for a list
    or dict of one item, and reads LONG1 of 8 bytes only."""

    def save_long(self, obj):  # libtorch reads LONG1 of 8 bytes only
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


class _PickleModule:
    """What torch.save needs of a pickle module."""
    Pickler = _BatchedPickler
    Unpickler = pickle.Unpickler
    dump = staticmethod(pickle.dump)
    dumps = staticmethod(pickle.dumps)
    load = staticmethod(pickle.load)
    loads = staticmethod(pickle.loads)
    __name__ = "pickle"


class Drop(Exception):
    """A value libtorch could not read back as the operator needs it; the call is dropped and counted."""


def dtype_label(dt):
    return str(dt).replace("torch.", "")


def flat_tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from flat_tensors(v)


class Recorder(TorchDispatchMode):
    """Records each ATen call it sees: up to `per_key` distinct calls per (overload, dtype label)."""

    def __init__(self, state):
        super().__init__()
        self.state = state
        self.default_dtype = None
        self.source = ""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        try:
            self.state.record(func, args, kwargs, self.default_dtype, self.source)
        except Exception as e:  # recording must never change what the sample does
            self.state.dropped["recorder error: " + type(e).__name__] += 1
        return func(*args, **kwargs)


class State:
    def __init__(self, per_key, max_numel):
        self.per_key = per_key
        self.max_numel = max_numel
        self.calls = []
        self.seen = set()
        self.count = Counter()  # (op, dtype) -> calls kept
        self.dropped = Counter()

    def encode(self, v):
        if isinstance(v, int) and not isinstance(v, bool) and not -2**63 <= v < 2**63:
            raise Drop("int beyond int64")
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, torch.Tensor):
            if v.layout != torch.strided or v.is_quantized or v.is_sparse:
                raise Drop("sparse or quantized tensor")
            if v.device.type != "cpu":
                raise Drop("tensor not on the cpu")
            if getattr(v, "names", None) and any(n is not None for n in v.names):
                raise Drop("named tensor")
            if v.dtype not in SAVED_DTYPES:
                raise Drop("tensor of dtype " + dtype_label(v.dtype))
            if v.numel() > self.max_numel:
                raise Drop("big tensor")
            t = v.detach()
            if t.is_conj():
                t = t.resolve_conj()
            if t.is_neg():
                t = t.resolve_neg()
            return t.clone()  # the op may write it afterwards
        if isinstance(v, (list, tuple)):
            return [self.encode(x) for x in v]
        if isinstance(v, complex):
            return {"complex": [v.real, v.imag]}
        if isinstance(v, torch.dtype):
            return {"dtype": dtype_label(v)}
        if isinstance(v, torch.layout):
            return {"layout": str(v).replace("torch.", "")}
        if isinstance(v, torch.device):
            return {"device": v.type}
        if isinstance(v, torch.memory_format):
            return {"memory_format": str(v).replace("torch.", "")}
        raise Drop("value of type " + type(v).__name__)

    @staticmethod
    def signature(v):
        if isinstance(v, torch.Tensor):
            return ("T", tuple(v.shape), str(v.dtype), tuple(v.stride()))
        if isinstance(v, (list, tuple)):
            return tuple(State.signature(x) for x in v)
        if isinstance(v, float) and v != v:
            return "nan"
        return repr(v)

    def record(self, func, args, kwargs, default_dtype, source):
        schema = func._schema
        name = schema.name + ("." + schema.overload_name if schema.overload_name else "")
        named = {}
        positional = [a for a in schema.arguments if not a.kwarg_only]
        if len(args) > len(positional):
            self.dropped["more positional arguments than the schema"] += 1
            return
        for a, v in zip(positional, args):
            named[a.name] = v
        named.update(kwargs)
        label = None
        for v in named.values():
            for t in flat_tensors(v):
                label = dtype_label(t.dtype)
                break
            if label:
                break
        if label is None and isinstance(named.get("dtype"), torch.dtype):
            label = dtype_label(named["dtype"])
        if label is None:
            label = dtype_label(default_dtype)
        key = (name, label)
        if self.count[key] >= self.per_key:
            return
        sig = (name, label, tuple(sorted((k, self.signature(v)) for k, v in named.items())))
        if sig in self.seen:
            return
        try:
            encoded = {k: self.encode(v) for k, v in named.items()}
        except Drop as d:
            self.dropped[str(d)] += 1
            return
        self.seen.add(sig)
        self.count[key] += 1
        self.calls.append({"op": name, "dtype": label, "source": source, "args": encoded})


def supported_dtypes(op):
    for attr in ("supported_dtypes",):
        f = getattr(op, attr, None)
        if f:
            try:
                return set(f("cpu"))
            except TypeError:
                pass
    return set(getattr(op, "dtypes", ()))


def backward_dtypes(op):
    if not getattr(op, "supports_autograd", False):
        return set()
    f = getattr(op, "supported_backward_dtypes", None)
    if f:
        try:
            return set(f("cpu"))
        except TypeError:
            pass
    return set(getattr(op, "backward_dtypes", ()) or ())


def run_sample(op, sample, backward):
    out = op(sample.input, *sample.args, **sample.kwargs)
    if not backward:
        return
    outs = [t for t in flat_tensors(out if isinstance(out, (list, tuple)) else [out])
            if t.requires_grad and (t.is_floating_point() or t.is_complex())]
    inputs = [t for t in flat_tensors([sample.input, list(sample.args), list(sample.kwargs.values())])
              if t.requires_grad]
    if outs and inputs:
        grads = [torch.randn_like(t) for t in outs]
        torch.autograd.grad(outs, inputs, grad_outputs=grads, allow_unused=True)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", required=True, help="the recordings file to write (e.g. data/pytorch-1.13.1/samples.pt)")
    p.add_argument("--manifest", help="the JSON manifest to write (default: OUT with .json for .pt)")
    p.add_argument("--samples-per-op", type=int, default=3, help="OpInfo samples run per OpInfo and dtype")
    p.add_argument("--calls-per-key", type=int, default=3, help="distinct calls kept per (overload, dtype label)")
    p.add_argument("--max-numel", type=int, default=20000, help="calls with a bigger tensor are dropped")
    p.add_argument("--ops", help="comma-separated OpInfo names to run (default: all)")
    opts = p.parse_args()

    from torch.testing._internal.common_methods_invocations import op_db

    torch.manual_seed(0)
    warnings.simplefilter("ignore")  # deprecation notices of the operators the samples run
    state = State(opts.calls_per_key, opts.max_numel)
    recorder = Recorder(state)
    wanted = set(opts.ops.split(",")) if opts.ops else None
    opinfo_errors = Counter()
    opinfos = 0
    start = time.time()
    for op in op_db:
        full = op.name + ("." + op.variant_test_name if op.variant_test_name else "")
        if wanted and op.name not in wanted and full not in wanted:
            continue
        opinfos += 1
        supported = supported_dtypes(op)
        grads = backward_dtypes(op)
        for dt in DTYPES:
            if dt not in supported:
                continue
            backward = dt in grads and dt in GRAD_DTYPES
            try:
                samples = []
                for s in op.sample_inputs("cpu", dt, requires_grad=backward):
                    samples.append(s)
                    if len(samples) >= opts.samples_per_op:
                        break
            except Exception as e:
                opinfo_errors["sample_inputs raised " + type(e).__name__] += 1
                continue
            recorder.default_dtype = dt
            recorder.source = full
            for s in samples:
                try:
                    with recorder:
                        run_sample(op, s, backward)
                except Exception as e:
                    opinfo_errors["sample raised " + type(e).__name__] += 1
    torch.save({"format": FORMAT, "torch": torch.__version__.split("+")[0], "calls": state.calls}, opts.out,
               pickle_module=_PickleModule)

    manifest = {
        "format": FORMAT,
        "torch": torch.__version__,
        "command": " ".join(["tools/record_samples.py"] + sys.argv[1:]),
        "opinfos": opinfos,
        "ops": len({c["op"] for c in state.calls}),
        "op_dtypes": len(state.count),
        "calls": len(state.calls),
        "dropped": dict(sorted(state.dropped.items())),
        "opinfo_errors": dict(sorted(opinfo_errors.items())),
        "seconds": round(time.time() - start),
    }
    path = opts.manifest or os.path.splitext(opts.out)[0] + ".json"
    with open(path, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps({k: manifest[k] for k in ("ops", "op_dtypes", "calls", "seconds")}))


if __name__ == "__main__":
    main()
