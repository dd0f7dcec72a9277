#!/usr/bin/python3
"""Writes a small TorchScript model whose cumsum PyTorch 1.13.1 does not implement for MPS (it falls back to the
CPU there, forward and backward), for the fallback example of docs/model.md.

Usage: /usr/bin/python3 examples/running_sum.py OUT.pt   (input: N x 16 float32)
"""
import sys

import torch


class RunningSum(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(torch.relu(self.proj(x)), 1)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: running_sum.py OUT.pt")
    torch.manual_seed(0)
    torch.jit.script(RunningSum()).save(sys.argv[1])
