#!/usr/bin/python3
"""A small training step for the recorder's tests: a module with a cumsum (which emulated 1.13.1 runs on the CPU,
in the forward pass and again in the backward pass, where its gradient is a cumsum too) and an Adam step.

    cumsum_adam.py            one training step (run it under `mps-audit record`)
    cumsum_adam.py --script OUT.pt   the same module as TorchScript, for `mps-audit model OUT.pt --train`
    cumsum_adam.py --fail     one forward pass, then an exception (a program that fails under the recorder)
"""
import sys

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.fc(x)
        return torch.cumsum(x, dim=1)


torch.manual_seed(0)
net = Net()
if sys.argv[1:2] == ["--script"]:
    torch.jit.script(net).save(sys.argv[2])
    sys.exit(0)
opt = torch.optim.Adam(net.parameters())
x = torch.randn(16, 8)
y = torch.randint(0, 4, (16,))
out = net(x)
if sys.argv[1:2] == ["--fail"]:
    raise RuntimeError("stopped on purpose")
loss = nn.functional.cross_entropy(out, y)
opt.zero_grad()
loss.backward()
opt.step()
