#!/usr/bin/python3
"""One training step of the classic Mac PyTorch tutorial's SimpleCNN: CrossEntropyLoss and Adam on a batch of
64 3x32x32 images (CIFAR-10's shape), written as people write it, for `mps-audit record` (docs/model.md).

    mps-audit record -o cnn.pt -- /usr/bin/python3 examples/train_simple_cnn.py
    mps-audit model --calls cnn.pt --target mps-emu --emu-release 1.13.1

Any Python with torch will do (Debian's python3-torch, or a wheel). --steps N runs N steps (for timing).
"""
import argparse
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simple_cnn import SimpleCNN  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=1)
    p.add_argument("--device", default="cpu", help="where to train (mps on a Mac)")
    opts = p.parse_args()
    torch.manual_seed(0)
    model = SimpleCNN().to(opts.device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images = torch.randn(64, 3, 32, 32, device=opts.device)
    labels = torch.randint(0, 10, (64,), device=opts.device)
    for _ in range(opts.steps):
        optimizer.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()
    print("loss {:.4f}".format(loss.item()))


if __name__ == "__main__":
    main()
