#!/usr/bin/env python3
# The MPS DecorateInfos of the OpInfos (opinfo_static.py reads them) for extract.py: which tests they reach on MPS.
import ast
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox  # noqa: E402
from entries import Entry, evaluate, labels  # noqa: E402

# The dtypes a gradient test can run in; a class-wide DecorateInfo names others only for the forward test.
GRAD_DTYPES = {"float32", "float16", "bfloat16", "complex64", "complex32"}


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
                dtypes = labels(evaluate(ast.parse(d["dtypes"], mode="eval").body)) if d["dtypes"] else ["*"]
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
