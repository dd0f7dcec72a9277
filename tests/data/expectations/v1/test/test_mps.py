# A 1.13.1-style test_mps.py for tests/expectations_extract_test.py: class TestConsistency's lists, small.
import torch


class TestConsistency(TestCase):
    ALLOWLIST_OP = {
        'abs': ['f16', 'f32', 'i16', 'u8'],
        'add': ['b8', 'f32', 'u8'],
        'div': ['f32'],
        'nn.functional.pad': ['f32'],
        'amix': ['f32']}

    ALLOWLIST_OP_GRAD = {
        'abs': ['f16', 'f32'],
        'add': ['f32']}

    BLOCKLIST = {
        # Functions that hang
        'masked_fill': [torch.bool, torch.uint8], 'where': [torch.bool],
        # + forward when requires_grad=True or running backward
        'pow': [torch.float16],

        # Functions that hard crash
        'abs': [torch.int16],
        'sort': None,  # moved from section below

        # ALLOW_LIST doesn't know about variants
        'nn.functional.padconstant': None,

        # These were moved from ALLOWLIST to BLOCK as they are not working
        # locally
        'add': ['torch.bool', 'torch.uint8'],

        # Functions that are flaky
        'divno_rounding_mode': None,
        'divtrunc_rounding': None,
        'H': None,
    }


instantiate_device_type_tests(TestConsistency, globals(), only_for="cpu")
