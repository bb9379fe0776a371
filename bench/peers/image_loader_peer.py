"""torchvision's side of bench/image_loader_bench.py: torchvision.datasets.ImageFolder over the
same JPEG folder, with the transforms `trainer fit data=image_folder data.augment=imagenet
data.image_size=S` applies (RandomResizedCrop(S), RandomHorizontalFlip(), ToTensor(), Normalize
with ImageNet's mean and std; images opened with Pillow, converted to RGB, as ImageFolder does),
DataLoader with batch 128, shuffle, the same number of workers (processes here, threads in the
trainer; persistent_workers=True so epochs after the first do not fork again). Nothing is done
with the batches. Each epoch prints {"epoch": N, "seconds": S, "samples": K, "batches": B}, S from
iter(loader) to the last batch."""
import argparse
import json
import time

import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

p = argparse.ArgumentParser()
p.add_argument("--root", required=True)
p.add_argument("--workers", type=int, default=0)
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--threads", type=int, default=0)
p.add_argument("--image-size", type=int, default=64)
p.add_argument("--batch", type=int, default=128)
a = p.parse_args()
if a.threads > 0:
    torch.set_num_threads(a.threads)

steps = transforms.Compose([
    transforms.RandomResizedCrop(a.image_size),
    transforms.RandomHorizontalFlip(),
    transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
])
folder = datasets.ImageFolder(a.root, transform=steps)
loader = DataLoader(folder, batch_size=a.batch, shuffle=True, num_workers=a.workers,
                    persistent_workers=a.workers > 0)
for epoch in range(a.epochs):
    start = time.perf_counter()
    samples = batches = 0
    for inputs, targets in loader:
        samples += targets.shape[0]
        batches += 1
    print(json.dumps({"epoch": epoch, "seconds": time.perf_counter() - start, "samples": samples,
                      "batches": batches}), flush=True)
