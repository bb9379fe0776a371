"""PyTorch Lightning peer of bench/peer_bench.sh: a LightningModule with the same model, Adam,
DataLoaders over in-memory TensorDatasets (batch 128, shuffle, num_workers=0: on 2 CPU cores the
step's intra-op threads take both cores, as the trainer's data.num_workers=auto decides on CPU),
Trainer(max_epochs, accelerator="cpu") with its defaults: checkpointing, CSV logger, progress bar.
--device cuda: Trainer(accelerator="cuda"), DataLoaders with pin_memory=True and min(4, cores)
workers (persistent; as the trainer's num_workers=auto on CUDA; --workers overrides), which
Lightning copies to the GPU with non_blocking=True; --precision goes to Trainer(precision=...).
A callback prints "first training step done" and per epoch "epoch N train S s samples K" (from the
epoch's start to the end of its last training batch, validation excluded; on CUDA the device is
synchronised at the epoch's last batch)."""
import argparse
import time

from fashion import (BATCH, BETAS, LR, START, WEIGHT_DECAY, add_run_options, build_model, default_workers,
                     load_train_val, say, synchronize)

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import lightning as L
from lightning.pytorch.loggers import CSVLogger

p = argparse.ArgumentParser()
add_run_options(p)
a = p.parse_args()


class Module(L.LightningModule):
    def __init__(self, name):
        super().__init__()
        self.net = build_model(name)
        self.loss = nn.CrossEntropyLoss()

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.loss(self.net(x), y)
        self.log("train/loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.log("val/loss", self.loss(logits, y))
        self.log("val/acc", (logits.argmax(1) == y).float().mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=LR, betas=BETAS, weight_decay=WEIGHT_DECAY)


class Timing(L.Callback):
    def __init__(self):
        self.first, self.t0, self.last, self.samples = True, 0.0, 0.0, 0

    def on_train_epoch_start(self, trainer, module):
        self.t0, self.samples = time.perf_counter(), 0

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
        if self.first or batch_idx + 1 >= trainer.num_training_batches:
            synchronize(a)
        self.last = time.perf_counter()
        self.samples += len(batch[1])
        if self.first:
            self.first = False
            say(f"first training step done {self.last - START:.3f} s after the script started")

    def on_train_epoch_end(self, trainer, module):
        say(f"epoch {trainer.current_epoch} train {self.last - self.t0:.4f} s samples {self.samples}")


torch.set_num_threads(a.threads)
L.seed_everything(42)
tx, ty, vx, vy = load_train_val(a.root)
workers = default_workers(a)
loader_options = dict(batch_size=BATCH, num_workers=workers, pin_memory=a.device == "cuda",
                      persistent_workers=workers > 0)
train = DataLoader(TensorDataset(tx, ty), shuffle=True, **loader_options)
val = DataLoader(TensorDataset(vx, vy), **loader_options)
precision = "32-true" if a.precision == "32" else a.precision
trainer = L.Trainer(max_epochs=a.epochs, accelerator=a.device, devices=1, precision=precision, default_root_dir=a.out,
                    logger=CSVLogger(a.out), callbacks=[Timing()],
                    limit_train_batches=a.limit_train_batches or 1.0, limit_val_batches=a.limit_val_batches or 1.0)
trainer.fit(Module(a.model), train, val)
