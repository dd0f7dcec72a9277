#!/usr/bin/env python3
# Dumps the OpInfo database of the torch that runs it (torch.testing._internal.common_methods_invocations.op_db):
# for every OpInfo its name, variant, aten_name, the Python operator's name and its in-place and method variants,
# and the dtypes it claims on the CPU. tools/expectations/extract.py maps PyTorch's MPS expectation lists, keyed by
# OpInfo names, to ATen operators through it. Works with torch 1.13 and 2.x.
#
#   PYTHONPATH=tools /usr/bin/python3 tools/expectations/opinfo_db.py -o opinfo_db.json
import argparse
import json
import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # tools/expecttest.py stand-in


def callable_name(f):
    if f is None:
        return None
    name = getattr(f, "__name__", None)
    if not name or name == "<lambda>":
        return None
    return name


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("-o", "--out", required=True)
    opts = p.parse_args()
    warnings.simplefilter("ignore")
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    rows = []
    for op in op_db:
        try:
            dtypes = sorted(str(d).replace("torch.", "") for d in op.supported_dtypes("cpu"))
        except Exception:
            dtypes = sorted(str(d).replace("torch.", "") for d in getattr(op, "dtypes", ()))
        rows.append({
            "name": op.name,
            "variant": op.variant_test_name or "",
            "aten_name": getattr(op, "aten_name", None),
            "op": callable_name(getattr(op, "op", None)),
            "inplace": callable_name(getattr(op, "inplace_variant", None)),
            "method": callable_name(getattr(op, "method_variant", None)),
            "dtypes": dtypes,
        })
    with open(opts.out, "w") as f:
        json.dump({"torch": torch.__version__.split("+")[0], "opinfos": rows}, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"{len(rows)} OpInfos of torch {torch.__version__} -> {opts.out}")


if __name__ == "__main__":
    main()
