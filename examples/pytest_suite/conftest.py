"""Fixtures of the example suite (examples/pytest_suite/, docs/pytest.md): their ATen calls are the setup phase's of
the tests that use them."""
import pytest

torch = pytest.importorskip("torch")


@pytest.fixture
def batch():
    torch.manual_seed(0)
    return torch.randn(8, 16)
