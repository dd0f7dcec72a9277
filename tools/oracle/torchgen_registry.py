#!/usr/bin/env python3
"""Independent oracle for `mps-audit registry --native-functions`: asks torchgen (shipped with every torch
install) which operators a native_functions.yaml defines and which have a kernel for a dispatch key.

Prints JSON: {"torchgen": version, "key": K, "ops": [every NativeFunction, generated ones included],
"native": [ops whose BackendIndex for K has a kernel, structured delegates resolved to their out variant]}.
"""
import argparse
import json
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("native_functions", help="path to native_functions.yaml")
    ap.add_argument("tags", help="path to the tags.yaml of the same release")
    ap.add_argument("--key", default="MPS", help="dispatch key (default MPS)")
    args = ap.parse_args()

    import torchgen
    from torchgen.gen import parse_native_yaml
    from torchgen.model import DispatchKey

    parsed = parse_native_yaml(args.native_functions, args.tags)
    key = DispatchKey.parse(args.key)
    index = parsed.backend_indices.get(key)
    by_name = {f.func.name: f for f in parsed.native_functions}

    def has_kernel(f) -> bool:
        return index is not None and index.has_kernel(f)

    ops, native = [], []
    for f in parsed.native_functions:
        name = f"{f.namespace}::{f.func.name}"
        ops.append(name)
        delegate = by_name.get(f.structured_delegate) if f.structured_delegate else None
        if has_kernel(f) or (delegate is not None and has_kernel(delegate)):
            native.append(name)
    version = getattr(torchgen, "__version__", None)
    if version is None:
        try:
            import torch

            version = torch.__version__
        except ImportError:
            version = "unknown"
    json.dump({"torchgen": version, "key": args.key, "ops": sorted(ops), "native": sorted(native)},
              sys.stdout, indent=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
