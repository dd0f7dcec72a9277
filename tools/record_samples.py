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
import sys
import time
import warnings
from collections import Counter

sys.path.append(os.path.dirname(os.path.abspath(__file__)))  # tools/expecttest.py, when no expecttest is installed
# The program recorder's encoding of a call's arguments, its pickler and its signatures: one format for both.
sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from mps_audit_record import Drop, dtype_label, encode, flat_tensors, save, signature

FORMAT = "mps-audit-samples/1"
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16, torch.int8,
          torch.uint8, torch.bool, torch.complex64]
GRAD_DTYPES = {torch.float32, torch.float16, torch.bfloat16, torch.complex64}


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
        for t in flat_tensors(v):
            if t.device.type != "cpu":
                raise Drop("tensor not on the cpu")
            if t.numel() > self.max_numel:
                raise Drop("big tensor")
        return encode(v)

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
        sig = (name, label, tuple(sorted((k, signature(v)) for k, v in named.items())))
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
    save({"format": FORMAT, "torch": torch.__version__.split("+")[0], "calls": state.calls}, opts.out)

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
