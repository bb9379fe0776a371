"""The webdataset library's side of bench/webdataset_bench.py: webdataset.WebDataset over the
same tar shards (shard order shuffled, a shuffle buffer of the same size), images decoded with
Pillow to RGB, then the transforms `trainer fit data=webdataset data.augment=imagenet
data.image_size=S` applies (RandomResizedCrop(S), RandomHorizontalFlip(), ToTensor(), Normalize
with ImageNet's mean and std), batched by DataLoader (batch 128, the same number of workers:
processes here, threads in the trainer; webdataset splits the shards between them). Nothing is
done with the batches. Each epoch prints {"epoch": N, "seconds": S, "samples": K, "batches": B,
"open_seconds": O}, S from iter(loader) to the last batch, O the time to build the pipeline."""
import argparse
import json
import time

opened = time.perf_counter()
import torch  # noqa: E402
import webdataset as wds  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402
from torchvision import transforms  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--shards", required=True, help="a brace pattern, as data.shards")
p.add_argument("--workers", type=int, default=0)
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--threads", type=int, default=0)
p.add_argument("--image-size", type=int, default=64)
p.add_argument("--batch", type=int, default=128)
p.add_argument("--shuffle-buffer", type=int, default=1000)
a = p.parse_args()
if a.threads > 0:
    torch.set_num_threads(a.threads)

steps = transforms.Compose([
    transforms.RandomResizedCrop(a.image_size),
    transforms.RandomHorizontalFlip(),
    transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
])
dataset = (wds.WebDataset(a.shards, shardshuffle=100, nodesplitter=wds.single_node_only, empty_check=False)
           .shuffle(a.shuffle_buffer)
           .decode("pilrgb")
           .to_tuple("jpg", "cls")
           .map_tuple(steps, int))
loader = DataLoader(dataset, batch_size=a.batch, num_workers=a.workers, persistent_workers=a.workers > 0)
open_seconds = time.perf_counter() - opened
for epoch in range(a.epochs):
    start = time.perf_counter()
    samples = batches = 0
    for inputs, targets in loader:
        samples += targets.shape[0]
        batches += 1
    print(json.dumps({"epoch": epoch, "seconds": time.perf_counter() - start, "samples": samples,
                      "batches": batches, "open_seconds": open_seconds}), flush=True)
