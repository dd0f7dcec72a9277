#!/usr/bin/python3
"""Training steps written with today's PyTorch 2.x APIs, for `mps-audit record` (docs/model.md): a causal
self-attention block on F.scaled_dot_product_attention, an nn.TransformerEncoderLayer, mean pooling and a classifier,
the forward pass and the loss under torch.amp.autocast (bfloat16 on the CPU, float16 on MPS), and an AdamW step.
Needs torch 2.x.

    mps-audit record -o attention.pt -- python3 examples/train_attention_amp.py
    mps-audit model --calls attention.pt --target mps-emu
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class Classifier(nn.Module):
    def __init__(self, vocab: int = 1000, dim: int = 64, classes: int = 4) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.attention = CausalSelfAttention(dim, heads=4)
        self.norm = nn.LayerNorm(dim)
        self.encoder = nn.TransformerEncoderLayer(dim, nhead=4, dim_feedforward=128, dropout=0.0,
                                                  activation="gelu", batch_first=True)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        x = x + self.attention(self.norm(x))
        x = self.encoder(x)
        return self.head(x.mean(dim=1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=1)
    p.add_argument("--device", default="cpu", help="where to train (mps on a Mac)")
    opts = p.parse_args()
    torch.manual_seed(0)
    model = Classifier().to(opts.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, 1000, (8, 32), device=opts.device)
    labels = torch.randint(0, 4, (8,), device=opts.device)
    amp_dtype = torch.bfloat16 if opts.device == "cpu" else torch.float16
    for _ in range(opts.steps):
        optimizer.zero_grad()
        with torch.amp.autocast(device_type=opts.device, dtype=amp_dtype):
            logits = model(tokens)
            loss = F.cross_entropy(logits.float(), labels)
        loss.backward()
        optimizer.step()
    print("loss {:.4f}".format(loss.item()))


if __name__ == "__main__":
    main()
