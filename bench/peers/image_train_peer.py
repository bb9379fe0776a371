"""The Python peers of bench/image_train_bench.py: `model=cnn` or `model=resnet` trained from an image
folder the way `trainer fit data=image_folder data.root=ROOT model=...` trains it with its defaults,
in plain PyTorch (--mode plain) or PyTorch Lightning 2.6 (--mode lightning).

What is the same as the trainer's defaults (configs/data/image_folder.yaml, configs/model/*.yaml,
configs/optimizer/adam.yaml):
  data      torchvision's ImageFolder over ROOT/train (ROOT/test for the test after fit), its
            default loader (Pillow, converted to RGB: the trainer's data.channels=3), no resize or
            crop (data.augment=none without data.image_size), ToTensor + Normalize with ImageNet's
            mean and std (data.normalize), data.val_fraction=0.1 of train/ held out (seeded:
            the same count, not the same images as the trainer's split), batch 64 shuffled.
  loader    DataLoader with --workers worker processes (the trainer's data.num_workers=auto, which
            it logs: "loader: N worker thread(s)"), persistent_workers=True (kinder to the peers than
            PyTorch's default, which forks the workers again every epoch; the trainer's threads live
            for the whole fit), pin_memory off (CPU).
  model     fashion.build_image_model: the layers of src/models/cnn.cpp and src/models/resnet.cpp
            (ResNet-18, small-image stem), in_channels 3, 10 classes; PyTorch's default init.
  optimizer Adam, lr 1e-3, betas (0.9, 0.999), weight decay 0; cross entropy.
  threads   torch.set_num_threads(--threads): the trainer's "2 intra-op threads (cores available)".
  each epoch a validation pass and a checkpoint (plain: torch.save of model + optimizer; Lightning:
            its default ModelCheckpoint); after the fit, the test split.

Prints "first training step done", per epoch "epoch N train S s samples K" (from the epoch's start,
the first batch's wait included, to the end of its last training step; validation excluded: what
the trainer's "epoch N done in S s" covers), then "val/acc X" per epoch and "test/acc X".

  python bench/peers/image_train_peer.py --mode plain --model cnn --root /tmp/fashion_png_small \\
      --epochs 2 --threads 2 --workers 2 --out /tmp/peer_out
"""
import argparse
import os
import time

from fashion import BETAS, LR, START, WEIGHT_DECAY, build_image_model, say

import torch
from torch import nn
from torch.utils.data import DataLoader, Subset
from torchvision import datasets, transforms

IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]  # configs/data/image_folder.yaml
BATCH = 64            # configs/data/image_folder.yaml batch_size
VAL_FRACTION = 0.1    # configs/data/image_folder.yaml val_fraction

p = argparse.ArgumentParser()
p.add_argument("--mode", required=True, choices=["plain", "lightning"])
p.add_argument("--model", required=True, choices=["cnn", "resnet"])
p.add_argument("--root", required=True, help="a folder with train/<class>/ and test/<class>/")
p.add_argument("--epochs", type=int, default=2)
p.add_argument("--threads", type=int, required=True)
p.add_argument("--workers", type=int, required=True)
p.add_argument("--seed", type=int, default=42)
p.add_argument("--out", required=True)
a = p.parse_args()

torch.set_num_threads(a.threads)
torch.manual_seed(a.seed)
transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD)])
pool = datasets.ImageFolder(os.path.join(a.root, "train"), transform=transform)
test_set = datasets.ImageFolder(os.path.join(a.root, "test"), transform=transform)
n_val = int(round(len(pool) * VAL_FRACTION))
order = torch.randperm(len(pool), generator=torch.Generator().manual_seed(a.seed)).tolist()
train_set, val_set = Subset(pool, sorted(order[n_val:])), Subset(pool, sorted(order[:n_val]))
loader_options = dict(batch_size=BATCH, num_workers=a.workers, persistent_workers=a.workers > 0)
train_loader = DataLoader(train_set, shuffle=True, **loader_options)
val_loader = DataLoader(val_set, **loader_options)
test_loader = DataLoader(test_set, **loader_options)
say(f"data: {len(train_set)} train / {len(val_set)} val / {len(test_set)} test samples, batch {BATCH}, "
    f"{len(pool.classes)} classes, {a.workers} DataLoader workers, {torch.get_num_threads()} threads")
net = build_image_model(a.model, 3, len(pool.classes))
loss_fn = nn.CrossEntropyLoss()
os.makedirs(a.out, exist_ok=True)


def accuracy(model, loader) -> float:
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += int((model(x).argmax(1) == y).sum())
            total += len(y)
    return correct / max(total, 1)


if a.mode == "plain":
    opt = torch.optim.Adam(net.parameters(), lr=LR, betas=BETAS, weight_decay=WEIGHT_DECAY)
    first = True
    for epoch in range(a.epochs):
        net.train()
        t0 = time.perf_counter()
        samples = 0
        for x, y in train_loader:
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(net(x), y)
            loss.backward()
            opt.step()
            samples += len(y)
            if first:
                first = False
                say(f"first training step done {time.perf_counter() - START:.3f} s after the script started")
        train_s = time.perf_counter() - t0
        say(f"epoch {epoch} train {train_s:.4f} s samples {samples}")
        say(f"epoch {epoch} val/acc {accuracy(net, val_loader):.4f}")
        torch.save({"epoch": epoch, "model": net.state_dict(), "optimizer": opt.state_dict()},
                   os.path.join(a.out, f"epoch_{epoch:03d}.pt"))
    say(f"test/acc {accuracy(net, test_loader):.4f}")
else:
    import lightning as L
    from lightning.pytorch.loggers import CSVLogger

    class Module(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = net

        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = loss_fn(self.net(x), y)
            self.log("train/loss", loss)
            return loss

        def _eval(self, batch, prefix):
            x, y = batch
            logits = self.net(x)
            self.log(f"{prefix}/loss", loss_fn(logits, y))
            self.log(f"{prefix}/acc", (logits.argmax(1) == y).float().mean())

        def validation_step(self, batch, batch_idx):
            self._eval(batch, "val")

        def test_step(self, batch, batch_idx):
            self._eval(batch, "test")

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=LR, betas=BETAS, weight_decay=WEIGHT_DECAY)

    class Timing(L.Callback):
        def __init__(self):
            self.first, self.t0, self.last, self.samples = True, 0.0, 0.0, 0

        def on_train_epoch_start(self, trainer, module):
            self.t0, self.samples = time.perf_counter(), 0

        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
            self.last = time.perf_counter()
            self.samples += len(batch[1])
            if self.first:
                self.first = False
                say(f"first training step done {self.last - START:.3f} s after the script started")

        def on_train_epoch_end(self, trainer, module):
            say(f"epoch {trainer.current_epoch} train {self.last - self.t0:.4f} s samples {self.samples}")
            # Lightning 2 runs the epoch-end validation before this hook: its metrics are in.
            if "val/acc" in trainer.callback_metrics:
                say(f"epoch {trainer.current_epoch} val/acc {float(trainer.callback_metrics['val/acc']):.4f}")

    L.seed_everything(a.seed)
    trainer = L.Trainer(max_epochs=a.epochs, accelerator="cpu", devices=1, default_root_dir=a.out,
                        logger=CSVLogger(a.out), callbacks=[Timing()])
    module = Module()
    trainer.fit(module, train_loader, val_loader)
    result = trainer.test(module, test_loader, verbose=False)
    say(f"test/acc {result[0]['test/acc']:.4f}")
