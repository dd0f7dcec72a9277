"""A transformer layer's forward and backward pass, and an optimizer step, as a project's model tests make them."""
import pytest

torch = pytest.importorskip("torch")


def test_transformer_layer():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True)
    x = torch.randn(2, 10, 32, requires_grad=True)
    out = layer(x)
    out.sum().backward()
    assert out.shape == x.shape and x.grad is not None


def test_optimizer_step(batch):
    model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss = torch.nn.functional.cross_entropy(model(batch), torch.arange(8) % 4)
    loss.backward()
    before = [p.detach().clone() for p in model.parameters()]
    opt.step()
    assert any(not torch.equal(b, p) for b, p in zip(before, model.parameters()))
