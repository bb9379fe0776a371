"""PyTorch's side of bench/loader_bench.py: torch.utils.data.DataLoader over Fashion-MNIST's
training split held in memory as uint8 (as the trainer holds it), batch 128, shuffle, the same
number of workers (processes here, threads in the trainer; persistent_workers=True so epochs
after the first do not fork again), each batch normalised to float32 (x/255 - mean)/std inside
the collate function, i.e. in the worker, as the trainer's loader normalises in its worker.
Nothing is done with the batches. Two ways to fetch a batch:
  --fetch sample  TensorDataset: 128 __getitem__ calls, default_collate stacks them (what
                  DataLoader(TensorDataset(...)) does, as users write it)
  --fetch batch   a dataset with __getitems__: one index gather per batch (the trainer's way)
Each epoch prints one JSON line {"epoch": N, "seconds": S, "samples": K, "batches": B}, S from
iter(loader) to the last batch."""
import argparse
import json
import time

from fashion import BATCH, MEAN, STD, load_train_val

import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset
from torch.utils.data import default_collate

p = argparse.ArgumentParser()
p.add_argument("--root", required=True)
p.add_argument("--workers", type=int, default=0)
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--threads", type=int, default=0)
p.add_argument("--fetch", choices=["sample", "batch"], default="sample")
a = p.parse_args()


def normalise(x: torch.Tensor) -> torch.Tensor:
    return (x.float().div_(255.0).sub_(MEAN)).div_(STD)


def collate_samples(samples):
    x, y = default_collate(samples)
    return normalise(x), y


class BatchedDataset(Dataset):
    """Rows gathered a whole batch at a time (DataLoader calls __getitems__ with the batch's indices)."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __getitems__(self, indices):
        idx = torch.as_tensor(indices)
        return self.x[idx], self.y[idx]


def collate_batch(batch):
    x, y = batch
    return normalise(x), y


if a.threads:
    torch.set_num_threads(a.threads)
torch.manual_seed(42)
tx, ty, _, _ = load_train_val(a.root, normalise=False)
dataset, collate = (TensorDataset(tx, ty), collate_samples) if a.fetch == "sample" else \
    (BatchedDataset(tx, ty), collate_batch)
loader = DataLoader(dataset, batch_size=BATCH, shuffle=True, num_workers=a.workers, collate_fn=collate,
                    persistent_workers=a.workers > 0)
for epoch in range(a.epochs):
    t0 = time.perf_counter()
    samples = batches = 0
    for x, y in loader:
        samples += len(y)
        batches += 1
    print(json.dumps({"epoch": epoch, "seconds": time.perf_counter() - t0, "samples": samples, "batches": batches}),
          flush=True)
