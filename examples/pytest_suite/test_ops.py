"""Single operators, each a test, as a project's own unit tests call them. `pytest --mps-audit` names, per emulated
release, the tests whose calls MPS lacks: on PyTorch 1.13.1 cumsum and erfinv fall back to the CPU; on every shipped
release mode falls back and float64 is refused."""
import pytest

torch = pytest.importorskip("torch")


def running_sum(x):
    return torch.cumsum(x, dim=1)


def test_cumsum(batch):
    out = running_sum(batch)
    assert torch.allclose(out[:, -1], batch.sum(dim=1), atol=1e-5)


@pytest.mark.mps_audit(allow=["aten::cumsum"])
def test_cumsum_allowed(batch):
    assert running_sum(batch).shape == batch.shape


def test_erfinv():
    p = torch.linspace(-0.9, 0.9, 19)
    assert torch.allclose(torch.erf(torch.erfinv(p)), p, atol=1e-5)


def test_mode():
    labels = torch.tensor([[1, 2, 2, 3], [4, 4, 1, 4]], dtype=torch.float32)
    values, _ = torch.mode(labels, dim=1)
    assert values.tolist() == [2.0, 4.0]


def test_float64_solve():
    a = torch.eye(4, dtype=torch.float64) * 2
    x = a @ torch.ones(4, dtype=torch.float64)
    assert x.sum().item() == 8.0


def test_no_torch():
    assert sorted({3, 1, 2}) == [1, 2, 3]


@pytest.mark.skip(reason="shows that a skipped test makes no calls")
def test_skipped():
    torch.cumsum(torch.ones(3), dim=0)
