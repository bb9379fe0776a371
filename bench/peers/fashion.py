"""Shared by the Python peers of bench/peer_bench.sh, bench/loader_bench.py and bench/suite.sh:
Fashion-MNIST read straight from Debian's gzipped IDX files into memory, the train/val split, the
models of src/models/ (same layers as the shipped configs/model/{mlp,cnn,resnet}.yaml; PyTorch's
default init, not the trainer's), and the options every peer shares (--device, --precision)."""
import argparse
import contextlib
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


def load_train_val(root: str, seed: int = 42, normalise: bool = True):
    """(train_x, train_y, val_x, val_y): images [N, 1, 28, 28], normalised float32 (or the files'
    uint8 with normalise=False), int64 labels."""
    images = read_idx(os.path.join(root, "train-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(root, "train-labels-idx1-ubyte.gz")).long()
    x = (((images.float() / 255.0 - MEAN) / STD) if normalise else images).unsqueeze(1).contiguous()
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
    if name == "resnet":  # configs/model/resnet.yaml: depth 18, width 64, small-image stem (src/models/resnet.cpp)
        return ResNet18()
    raise SystemExit(f"unknown model {name!r} (mlp, cnn or resnet)")


def build_image_model(name: str, in_channels: int, num_classes: int, size: int = 28) -> nn.Module:
    """build_model's cnn and resnet for images of in_channels x size x size (the trainer's model
    configs say in_channels: null, num_classes: null, "the data's"; bench/peers/image_train_peer.py)."""
    if name == "cnn":
        layers = []
        channels = in_channels
        for out in (32, 64):
            layers += [nn.Conv2d(channels, out, 3, padding=1, bias=False), nn.BatchNorm2d(out), nn.ReLU(inplace=True),
                       nn.MaxPool2d(2)]
            channels = out
            size //= 2
        layers += [nn.Flatten(), nn.Linear(channels * size * size, 128), nn.ReLU(inplace=True), nn.Dropout(0.25),
                   nn.Linear(128, num_classes)]
        return nn.Sequential(*layers)
    if name == "resnet":
        return ResNet18(in_channels=in_channels, num_classes=num_classes)
    raise SystemExit(f"unknown image model {name!r} (cnn or resnet)")


class BasicBlock(nn.Module):
    """Two 3x3 conv-BN layers and a shortcut (1x1 conv + BN where the shape changes)."""

    def __init__(self, cin: int, planes: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or cin != planes:
            self.downsample = nn.Sequential(nn.Conv2d(cin, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = self.bn1(self.conv1(x)).relu_()
        out = self.bn2(self.conv2(out))
        out += x if self.downsample is None else self.downsample(x)
        return out.relu_()


class ResNet18(nn.Module):
    """ResNet-18 with the trainer's small-image stem: a 3x3 stride-1 conv, no max pool; stages of
    2 blocks with 64, 128, 256, 512 channels, global average pool, a linear head."""

    def __init__(self, in_channels: int = 1, width: int = 64, num_classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, width, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        blocks, cin = [], width
        for stage in range(4):
            planes = width << stage
            for i in range(2):
                blocks.append(BasicBlock(cin, planes, 2 if stage > 0 and i == 0 else 1))
                cin = planes
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        out = self.blocks(self.bn1(self.conv1(x)).relu_())
        return self.fc(out.mean((2, 3)))


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The options every training peer takes (bench/peer_bench.py passes them)."""
    p.add_argument("--model", default="mlp")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--root", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--limit-train-batches", type=int, default=0)
    p.add_argument("--limit-val-batches", type=int, default=0)
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--precision", default="32", choices=["32", "16-mixed", "bf16-mixed"])
    p.add_argument("--workers", type=int, default=-1,
                   help="DataLoader workers (Lightning); -1: min(4, cores) on cuda, 0 on cpu (as the trainer's auto)")


def default_workers(a) -> int:
    """The trainer's data.num_workers=auto: min(4 x GPUs, cores) on CUDA (one GPU here), 0 on CPU."""
    if a.workers >= 0:
        return a.workers
    return min(4, len(os.sched_getaffinity(0))) if a.device == "cuda" else 0


def autocast(a):
    """The plain loop's mixed precision: autocast to fp16/bf16 on the device, or nothing."""
    if a.precision == "32":
        return contextlib.nullcontext()
    dtype = torch.float16 if a.precision == "16-mixed" else torch.bfloat16
    return torch.autocast(device_type=a.device, dtype=dtype)


def synchronize(a) -> None:
    """Wait for the device's queued work, so an epoch's time includes its last kernels."""
    if a.device == "cuda":
        torch.cuda.synchronize()


def say(text: str) -> None:
    print(text, flush=True)
