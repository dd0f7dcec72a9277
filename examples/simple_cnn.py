#!/usr/bin/python3
"""Writes the classic Mac PyTorch tutorial's SimpleCNN as TorchScript, for `mps-audit model` (docs/model.md).

Usage: /usr/bin/python3 examples/simple_cnn.py OUT.pt   (any Python with torch; Debian's python3-torch will do)
The model takes 3x32x32 images (CIFAR-10) and gives 10 class scores.
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class SimpleCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc1 = nn.Linear(32 * 8 * 8, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: simple_cnn.py OUT.pt")
    torch.manual_seed(0)
    torch.jit.script(SimpleCNN()).save(sys.argv[1])
