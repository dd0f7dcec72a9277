#!/usr/bin/env python3
"""Checks `mps-audit registry` against PyTorch's own answers, with the torch and torchgen of this Python.

  check_registry.py torchgen BINARY RELEASE_DIR [--key MPS]
      The native set and the operator set of `mps-audit registry --native-functions RELEASE_DIR` must equal what
      torchgen's BackendIndex says (structured delegates resolved). Needs a torchgen of the release's major.minor.
  check_registry.py live BINARY [--key CPU]
      The live classification of `mps-audit registry` must agree, for every operator both processes know, with
      torch._C._dispatch_has_kernel_for_dispatch_key (see live_dispatcher.py). Needs the libtorch the binary links.
      A Python process registers more kernels than libtorch alone (Python meta kernels, libtorch_python's own
      registrations); a difference counts as explained only where the kernel Python sees was registered from such
      a place (a .py file, /dev/null, or torch/csrc/), and each explained one is printed.

Exit 0: agree; 1: disagree (the differences are printed); 77: this Python cannot check this (skipped).
"""
import argparse
import json
import os
import re
import subprocess
import sys

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))


def run_binary(binary, *args):
    out = subprocess.run([binary, "registry", "--format", "json", *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def major_minor(version):
    m = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def oracle(script, *args):
    out = subprocess.run([sys.executable, os.path.join(HERE, script), *args], check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout)


def check_torchgen(args):
    try:
        import torch
        import torchgen  # noqa: F401
    except ImportError as e:
        print(f"skipped: this Python has no torch/torchgen ({e})")
        return SKIP
    release = os.path.basename(os.path.normpath(args.release))
    want = major_minor(release.replace("pytorch-", ""))
    if want != major_minor(torch.__version__):
        print(f"skipped: torchgen {torch.__version__} cannot stand in for {release}")
        return SKIP
    expected = oracle("torchgen_registry.py", os.path.join(args.release, "native_functions.yaml"),
                      os.path.join(args.release, "tags.yaml"), "--key", args.key)
    # torchgen knows nothing of hand registrations: compare the YAML alone.
    ours = run_binary(args.binary, "--native-functions", args.release, "--extra-registrations", os.devnull, "--key",
                      args.key)
    our_ops = {o["name"] for o in ours["ops"]}
    our_native = {o["name"] for o in ours["ops"] if o["status"] == "native"}
    problems = []
    for label, a, b in (("operators", our_ops, set(expected["ops"])),
                        ("native for " + args.key, our_native, set(expected["native"]))):
        for name in sorted(a - b):
            problems.append(f"{label}: mps-audit has {name}, torchgen does not")
        for name in sorted(b - a):
            problems.append(f"{label}: torchgen has {name}, mps-audit does not")
    print(f"{release}, key {args.key}: torchgen {expected['torchgen']} lists {len(expected['ops'])} operators, "
          f"{len(expected['native'])} native; mps-audit {len(our_ops)}, {len(our_native)}")
    for p in problems:
        print("MISMATCH", p)
    return 1 if problems else 0


def deciding_registration(dump, key, status):
    """Where the kernel that gives Python's status was registered, from torch._C._dispatch_dump."""
    prefixes = [f"{key}:"] if status == "native" else [
        f"{alias}[alias]:" for alias in ("CompositeExplicitAutogradNonFunctional", "CompositeExplicitAutograd",
                                         "CompositeImplicitAutogradNestedTensor", "CompositeImplicitAutograd")]
    for line in dump.splitlines():
        if any(line.startswith(p) for p in prefixes):
            m = re.search(r"registered at (.*?)(?::\d+)? ::", line)
            if m:
                return m.group(1)
    return ""


def python_layer(location):
    return location.endswith(".py") or location.startswith("/dev/null") or "torch/csrc/" in location


def check_live(args):
    try:
        import torch
    except ImportError as e:
        print(f"skipped: this Python has no torch ({e})")
        return SKIP
    ours = run_binary(args.binary, "--key", args.key)
    linked = ours["source"]["torch_version"]
    if major_minor(linked) != major_minor(torch.__version__):
        print(f"skipped: the binary links libtorch {linked}, this Python has torch {torch.__version__}")
        return SKIP
    expected = oracle("live_dispatcher.py", "--key", args.key)["ops"]
    our = {o["name"]: o["status"] for o in ours["ops"]}
    rank = {"native": 0, "cpu_fallback": 0, "composite_explicit": 1, "composite_implicit": 2, "none": 3}
    problems, explained = [], []
    for name in sorted(set(our) & set(expected)):
        if our[name] == expected[name]:
            continue
        where = deciding_registration(torch._C._dispatch_dump(name), args.key, expected[name])
        line = f"{name}: mps-audit {our[name]}, Python {expected[name]} (registered at {where or '?'})"
        if rank[expected[name]] < rank[our[name]] and python_layer(where):
            explained.append(line)
        else:
            problems.append(line)
    missing = sorted(set(our) - set(expected))
    print(f"key {args.key}: libtorch {linked}; {len(our)} operators in mps-audit, {len(expected)} in Python, "
          f"{len(set(our) & set(expected))} compared; {len(explained)} differences from Python-layer "
          f"registrations, {len(problems)} unexplained; {len(missing)} only in mps-audit")
    for e in explained:
        print("explained", e)
    for name in missing:
        problems.append(f"{name}: in the binary's dispatcher but not in Python's")
    for p in problems:
        print("MISMATCH", p)
    return 1 if problems else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    t = sub.add_parser("torchgen")
    t.add_argument("binary")
    t.add_argument("release")
    t.add_argument("--key", default="MPS")
    l = sub.add_parser("live")
    l.add_argument("binary")
    l.add_argument("--key", default="CPU")
    args = ap.parse_args()
    return check_torchgen(args) if args.mode == "torchgen" else check_live(args)


if __name__ == "__main__":
    sys.exit(main())
