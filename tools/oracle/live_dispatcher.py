#!/usr/bin/env python3
"""Independent oracle for `mps-audit registry` (live): classifies every operator of the dispatcher that the
running torch has loaded, for one dispatch key, with PyTorch's own Python bindings
(torch._C._dispatch_has_kernel_for_dispatch_key and _dispatch_is_included_in_alias), following the
dispatcher's resolution order (OperatorEntry::computeDispatchTableEntryWithDebug).

Prints JSON: {"torch": version, "key": K, "ops": {"aten::add.Tensor": "native", ...}}.
"""
import argparse
import json
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--key", default="MPS", help="dispatch key (default MPS)")
    args = ap.parse_args()

    import torch

    C = torch._C
    key = getattr(C.DispatchKey, args.key)
    aliases = [
        ("CompositeExplicitAutogradNonFunctional", "composite_explicit"),
        ("CompositeExplicitAutograd", "composite_explicit"),
        ("CompositeImplicitAutogradNestedTensor", "composite_implicit"),
        ("CompositeImplicitAutograd", "composite_implicit"),
    ]
    aliases = [(getattr(C.DispatchKey, a), a, s) for a, s in aliases if hasattr(C.DispatchKey, a)]

    def status(name: str) -> str:
        if C._dispatch_has_kernel_for_dispatch_key(name, key):
            return "native"
        for alias, alias_name, verdict in aliases:
            if C._dispatch_is_included_in_alias(key, alias) and C._dispatch_has_kernel_for_dispatch_key(
                    name, alias_name):
                return verdict
        return "none"

    ops = {}
    for name in C._dispatch_get_registrations_for_dispatch_key(""):
        ops[name] = status(name)
    json.dump({"torch": torch.__version__, "key": args.key, "ops": ops}, sys.stdout, indent=0, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
