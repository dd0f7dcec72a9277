# A 2.x-style common_methods_invocations.py for tests/expectations_extract_test.py: OpInfos with MPS DecorateInfos.
import unittest

import torch
from torch.testing._internal.opinfo.core import BinaryUfuncInfo, DecorateInfo, OpInfo, UnaryUfuncInfo


def make_sort_opinfo(variant, skips):
    return OpInfo('sort', variant_test_name=variant, skips=skips)


op_db: list[OpInfo] = [
    UnaryUfuncInfo('abs',
                   skips=(
                       # NotImplementedError: "abs_cpu" not implemented for 'Bool'
                       DecorateInfo(unittest.expectedFailure, 'TestConsistency', device_type='mps',
                                    dtypes=(torch.bool,)),
                       DecorateInfo(unittest.expectedFailure, 'TestCommon', 'test_out', device_type='mps'),
                       DecorateInfo(toleranceOverride({torch.float16: tol(atol=1e-3, rtol=1e-3)}),
                                    'TestConsistency', 'test_output_match', device_type='mps'),
                   )),
    BinaryUfuncInfo('pow',
                    decorators=(
                        # Some cases crash the MPS graph
                        DecorateInfo(unittest.skip("Skipped!"), 'TestConsistency', 'test_output_grad_match',
                                     device_type='mps', dtypes=(torch.float16, torch.int64)),
                        # TestConsistency runs on MPS only: no device_type needed. Mismatch in int64.
                        DecorateInfo(unittest.expectedFailure, 'TestConsistency', 'test_output_match',
                                     dtypes=(torch.int64,)),
                    )),
    *(OpInfo('add', variant_test_name=f'v{n}') for n in (1, 2)),
    make_sort_opinfo('stable', skips=(
        DecorateInfo(unittest.expectedFailure, 'TestConsistency', 'test_output_match', device_type='mps',
                     dtypes=(torch.float32,)),
    )),
]
