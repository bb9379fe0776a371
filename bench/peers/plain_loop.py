"""Plain PyTorch training loop, the 'plain PyTorch' peer of bench/peer_bench.sh: in-memory tensors,
shuffled index batches of 128, Adam (the shipped default), a validation pass and a torch.save
checkpoint (model + optimizer) each epoch, torch.set_num_threads(--threads).
--device cuda: each batch is gathered on the host, pinned and copied with non_blocking=True (what
the trainer's loader does); --precision 16-mixed / bf16-mixed: torch.autocast around the forward
pass and, for fp16, a GradScaler (the trainer's precision=16-mixed does the same).
Prints "first training step done", per epoch "epoch N train S s samples K" (the device
synchronised before the clock is read), and val accuracy."""
import argparse
import os
import time

from fashion import (BATCH, BETAS, LR, START, WEIGHT_DECAY, add_run_options, autocast, build_model, load_train_val,
                     say, synchronize)

import torch
from torch import nn

p = argparse.ArgumentParser()
add_run_options(p)
a = p.parse_args()

torch.set_num_threads(a.threads)
torch.manual_seed(42)
tx, ty, vx, vy = load_train_val(a.root)
device = torch.device(a.device)
model = build_model(a.model).to(device)
opt = torch.optim.Adam(model.parameters(), lr=LR, betas=BETAS, weight_decay=WEIGHT_DECAY)
scaler = torch.amp.GradScaler(a.device, enabled=a.precision == "16-mixed")
loss_fn = nn.CrossEntropyLoss()
os.makedirs(a.out, exist_ok=True)


def to_device(x, y):
    if a.device == "cpu":
        return x, y
    return x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)


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
        x, y = to_device(tx[idx], ty[idx])
        opt.zero_grad(set_to_none=True)
        with autocast(a):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        samples += len(idx)
        if first:
            first = False
            synchronize(a)
            say(f"first training step done {time.perf_counter() - START:.3f} s after the script started")
    synchronize(a)
    train_s = time.perf_counter() - t0
    model.eval()
    correct = total = 0
    with torch.no_grad(), autocast(a):
        for i, (x, y) in enumerate(zip(vx.split(BATCH), vy.split(BATCH))):
            if a.limit_val_batches and i >= a.limit_val_batches:
                break
            x, y = to_device(x, y)
            correct += (model(x).argmax(1) == y).sum()
            total += len(y)
    torch.save({"epoch": epoch, "model": model.state_dict(), "optimizer": opt.state_dict()},
               os.path.join(a.out, f"epoch_{epoch:03d}.pt"))
    say(f"epoch {epoch} train {train_s:.4f} s samples {samples} val/acc {float(correct) / max(total, 1):.4f}")
