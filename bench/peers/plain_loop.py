"""Plain PyTorch training loop, the 'plain PyTorch' peer of bench/peer_bench.sh: in-memory tensors,
shuffled index batches of 128, Adam (the shipped default), a validation pass and a torch.save
checkpoint (model + optimizer) each epoch, torch.set_num_threads(--threads).
Prints "first training step done", per epoch "epoch N train S s samples K", and val accuracy."""
import argparse
import os
import time

from fashion import BATCH, BETAS, LR, START, WEIGHT_DECAY, build_model, load_train_val, say

import torch
from torch import nn

p = argparse.ArgumentParser()
p.add_argument("--model", default="mlp")
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--threads", type=int, required=True)
p.add_argument("--root", required=True)
p.add_argument("--out", required=True)
p.add_argument("--limit-train-batches", type=int, default=0)
p.add_argument("--limit-val-batches", type=int, default=0)
a = p.parse_args()

torch.set_num_threads(a.threads)
torch.manual_seed(42)
tx, ty, vx, vy = load_train_val(a.root)
model = build_model(a.model)
opt = torch.optim.Adam(model.parameters(), lr=LR, betas=BETAS, weight_decay=WEIGHT_DECAY)
loss_fn = nn.CrossEntropyLoss()
os.makedirs(a.out, exist_ok=True)
first = True
for epoch in range(a.epochs):
    model.train()
    t0 = time.perf_counter()
    order = torch.randperm(len(tx))
    batches = order.split(BATCH)
    if a.limit_train_batches:
        batches = batches[:a.limit_train_batches]
    samples = 0
    for idx in batches:
        x, y = tx[idx], ty[idx]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        samples += len(idx)
        if first:
            first = False
            say(f"first training step done {time.perf_counter() - START:.3f} s after the script started")
    train_s = time.perf_counter() - t0
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for i, (x, y) in enumerate(zip(vx.split(BATCH), vy.split(BATCH))):
            if a.limit_val_batches and i >= a.limit_val_batches:
                break
            correct += (model(x).argmax(1) == y).sum()
            total += len(y)
    torch.save({"epoch": epoch, "model": model.state_dict(), "optimizer": opt.state_dict()},
               os.path.join(a.out, f"epoch_{epoch:03d}.pt"))
    say(f"epoch {epoch} train {train_s:.4f} s samples {samples} val/acc {float(correct) / max(total, 1):.4f}")
