"""Shared by the Python peers of bench/peer_bench.sh: Fashion-MNIST read straight from Debian's
gzipped IDX files into memory, the train/val split, and the models of src/models/ (same layers as
the shipped configs/model/{mlp,cnn}.yaml; PyTorch's default init, not the trainer's)."""
import gzip
import os
import struct
import time

import torch
from torch import nn

START = time.perf_counter()
MEAN, STD = 0.2860, 0.3530  # configs/data/fashion_mnist.yaml normalize
BATCH = 128                 # configs/data/fashion_mnist.yaml batch_size
VAL_FRACTION = 0.1          # configs/data/fashion_mnist.yaml val_fraction
LR, BETAS, WEIGHT_DECAY = 1.0e-3, (0.9, 0.999), 0.0  # configs/optimizer/adam.yaml (the default)


def read_idx(path: str) -> torch.Tensor:
    with gzip.open(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        raise SystemExit(f"{path}: not an unsigned-byte IDX file")
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return torch.frombuffer(bytearray(data[4 + 4 * ndim:]), dtype=torch.uint8).reshape(dims)


def load_train_val(root: str, seed: int = 42):
    """(train_x, train_y, val_x, val_y): normalised float32 images [N, 1, 28, 28], int64 labels."""
    images = read_idx(os.path.join(root, "train-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(root, "train-labels-idx1-ubyte.gz")).long()
    x = ((images.float() / 255.0 - MEAN) / STD).unsqueeze(1).contiguous()
    n_val = int(round(len(x) * VAL_FRACTION))
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(seed))
    train, val = order[n_val:], order[:n_val]
    return x[train].contiguous(), labels[train].contiguous(), x[val].contiguous(), labels[val].contiguous()


def build_model(name: str) -> nn.Module:
    if name == "mlp":  # configs/model/mlp.yaml: 784-256-128-10, dropout 0.2 (src/models/mlp.cpp)
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(inplace=True), nn.Dropout(0.2),
                             nn.Linear(256, 128), nn.ReLU(inplace=True), nn.Dropout(0.2), nn.Linear(128, 10))
    if name == "cnn":  # configs/model/cnn.yaml: channels [32, 64], hidden 128, dropout 0.25 (src/models/cnn.cpp)
        layers = []
        channels = 1
        for out in (32, 64):
            layers += [nn.Conv2d(channels, out, 3, padding=1, bias=False), nn.BatchNorm2d(out), nn.ReLU(inplace=True),
                       nn.MaxPool2d(2)]
            channels = out
        layers += [nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(inplace=True), nn.Dropout(0.25),
                   nn.Linear(128, 10)]
        return nn.Sequential(*layers)
    raise SystemExit(f"unknown model {name!r} (mlp or cnn)")


def say(text: str) -> None:
    print(text, flush=True)
