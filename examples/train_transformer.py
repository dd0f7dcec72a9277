#!/usr/bin/python3
"""One training step of a transformer encoder layer with AdamW: token embeddings, nn.TransformerEncoderLayer
(4 heads, GELU), mean pooling and a classifier, on a batch of 16 sequences of 64 tokens, for `mps-audit record`
(docs/model.md).

    mps-audit record -o transformer.pt -- /usr/bin/python3 examples/train_transformer.py
    mps-audit model --calls transformer.pt --target mps-emu --emu-release 2.11.0

With --script OUT.pt it writes the same model as TorchScript instead, for `mps-audit model OUT.pt --train`.
"""
import argparse

import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, vocab: int = 1000, dim: int = 128, classes: int = 4) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.encoder = nn.TransformerEncoderLayer(dim, nhead=4, dim_feedforward=256, dropout=0.0,
                                                  activation="gelu", batch_first=True)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.encoder(self.embed(tokens))
        return self.head(x.mean(dim=1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=1)
    p.add_argument("--device", default="cpu", help="where to train (mps on a Mac)")
    p.add_argument("--script", help="write the model as TorchScript to this file and stop")
    opts = p.parse_args()
    torch.manual_seed(0)
    model = Classifier().to(opts.device)
    if opts.script:
        torch.jit.script(model).save(opts.script)
        return
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, 1000, (16, 64), device=opts.device)
    labels = torch.randint(0, 4, (16,), device=opts.device)
    for _ in range(opts.steps):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(tokens), labels)
        loss.backward()
        optimizer.step()
    print("loss {:.4f}".format(loss.item()))


if __name__ == "__main__":
    main()
