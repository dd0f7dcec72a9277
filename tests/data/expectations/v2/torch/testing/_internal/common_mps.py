# A 2.x-style common_mps.py for tests/expectations_extract_test.py: the shapes extract.py must read, small.
import unittest
from typing import Optional

import torch

from .common_utils import MACOS_VERSION
from .opinfo.core import DecorateInfo


if torch.backends.mps.is_available():

    def mps_ops_modifier(ops, device_type="mps", xfail_exclusion: Optional[list[str]] = None, sparse: bool = False):
        if xfail_exclusion is None:
            xfail_exclusion = []

        # Supported complex OPS
        SUPPORTED_COMPLEX_OPS = {
            "abs",
            "add",
        }

        MACOS_BEFORE_14_4_XFAILLIST = {
            # These ops work fine in 14.4 but fail in 14.2 or 13.x
            "sort": [torch.complex64],
        }

        MACOS_AFTER_13_1_XFAILLIST = {
            "mul": [torch.uint8],  # inconsistency errors between cpu and mps
        }

        # Those ops are not expected to work
        UNIMPLEMENTED_XFAILLIST: dict[str, Optional[list]] = {
            # Failures due to lack of op implementation on MPS backend
            "pow": [torch.bool],
            # "kthvalue": None,
            "abs": [torch.half, torch.uint8],
            "scatter_reduceamax": [torch.int32, torch.int64]
            if MACOS_VERSION < 15.0
            else [torch.int64],
            "nn.functional.foo": None,
            "H": None,
            "mulempty": [],
        }
        UNIMPLEMENTED_XFAILLIST_SPARSE: dict[str, Optional[list]] = {
            "add": None,
        }

        if MACOS_VERSION < 15.0:
            # Quantile needs macOS 15
            UNIMPLEMENTED_XFAILLIST.update({"quantile": None})
        if sparse:
            UNIMPLEMENTED_XFAILLIST.update(UNIMPLEMENTED_XFAILLIST_SPARSE)

        UNDEFINED_XFAILLIST = {
            "rand_like": [torch.float16, torch.float32],  # random results
        }

        ON_MPS_XFAILLIST = {
            # Exception: Caused by something on MPS
            "mul": [torch.int64],
            "add": [torch.bool],
            "masked.quantile": [torch.float16],  # wrong results on MPS
            "linalg.sort": None,  # hangs on MPS
        }

        EMPTY_OPS_SKIPLIST = {
            "empty": None,
        }

        SKIPLIST = {
            "nn.functional.conv3d": None,
        }

        def addDecorator(op, d) -> None:
            if device_type is not None:
                d.device_type = device_type
            op.decorators = op.decorators + (d,)

        for op in ops:
            key = op.name + op.variant_test_name
            addDecorator(op, DecorateInfo(unittest.expectedFailure, dtypes=[torch.double, torch.cdouble]))
            if sparse:
                # Skipped due to MPS not supporting complex128 tensors
                addDecorator(op, DecorateInfo(unittest.skip("Skipped"), dtypes=[torch.complex128]))
            if key in EMPTY_OPS_SKIPLIST:
                addDecorator(op, DecorateInfo(unittest.skip("Skipping empty ops."), dtypes=EMPTY_OPS_SKIPLIST[key]))
            if key in SKIPLIST:
                addDecorator(op, DecorateInfo(unittest.skip("Skipped!"), dtypes=SKIPLIST[key]))
            for xfaillist in [UNIMPLEMENTED_XFAILLIST, UNDEFINED_XFAILLIST, ON_MPS_XFAILLIST]:
                if key in xfaillist and key not in xfail_exclusion:
                    addDecorator(op, DecorateInfo(unittest.expectedFailure, dtypes=xfaillist[key]))
            if key in MACOS_BEFORE_14_4_XFAILLIST and key not in xfail_exclusion and (MACOS_VERSION < 14.4):
                addDecorator(op, DecorateInfo(unittest.expectedFailure, dtypes=MACOS_BEFORE_14_4_XFAILLIST[key]))
            if key in MACOS_AFTER_13_1_XFAILLIST and torch.backends.mps.is_macos13_or_newer(2):
                addDecorator(op, DecorateInfo(unittest.expectedFailure, dtypes=MACOS_AFTER_13_1_XFAILLIST[key]))
            # If ops is not supported for complex types, expect it to fail
            if key not in SUPPORTED_COMPLEX_OPS:
                addDecorator(op, DecorateInfo(unittest.expectedFailure, dtypes=[torch.complex32, torch.complex64]))
        return ops

    def mps_ops_grad_modifier(ops):
        XFAILLIST_GRAD = {
            # precision issues
            "pow": [torch.float16],
            "abs": None,  # derivative for abs raises on MPS
        }

        def addDecorator(op, d) -> None:
            op.decorators = op.decorators + (d,)

        for op in ops:
            key = op.name + op.variant_test_name
            if key in XFAILLIST_GRAD:
                addDecorator(op, DecorateInfo(unittest.expectedFailure, dtypes=XFAILLIST_GRAD[key]))
        return ops

    def mps_ops_error_inputs_modifier(ops):
        XFAILLIST = {
            # Exceptions are not raised
            "mul",
            # unsupported float64 dtype
            "sort",
        }

        def addDecorator(op, d) -> None:
            op.decorators = op.decorators + (d,)

        for op in ops:
            key = op.name + op.variant_test_name
            if key in XFAILLIST:
                addDecorator(op, DecorateInfo(unittest.expectedFailure))
        return ops

else:

    def mps_ops_modifier(ops, device_type="mps", xfail_exclusion=None, sparse=False):
        return ops
