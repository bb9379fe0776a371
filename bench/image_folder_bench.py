"""Issue 18's benchmarks 2 and 3 on the real Fashion-MNIST written out as an image folder:

  start-up   time from the process's start to its first training step on the 70,000 PNG files:
             `trainer fit data=image_folder` (its log's "first training step done N s after the
             process started") against torchvision's ImageFolder scan + DataLoader's first batch
             + one step of the same cnn in PyTorch (from `python` starting, imports included).
  accuracy   the same model=cnn fit from the PNG folder and from the IDX files
             (data=fashion_mnist): test/acc on the 10,000 test images, which should agree within
             0.3 points; and the epoch times of both.

The folder is made once (--folder; about 70,000 files, 60 MB): train/<class>/<n>.png from the
60,000 training images, test/<class>/<n>.png from the 10,000 test images, with Pillow.

  bench/image_folder_bench.py --trainer build/debian/trainer \\
      --python ~/.cache/trainer/venv-torch-2.11.0/bin/python --folder /tmp/fashion_png --out result.md
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import tempfile
import time

MAKE_FOLDER = r"""
import gzip, os, struct, sys
from PIL import Image
out, idx = sys.argv[1], sys.argv[2]
classes = ["tshirt_top", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle_boot"]
for split, prefix in (("train", "train"), ("test", "t10k")):
    with gzip.open(os.path.join(idx, prefix + "-images-idx3-ubyte.gz"), "rb") as f:
        _, n, rows, cols = struct.unpack(">IIII", f.read(16))
        data = f.read()
    with gzip.open(os.path.join(idx, prefix + "-labels-idx1-ubyte.gz"), "rb") as f:
        f.read(8)
        labels = f.read()
    for c in classes:
        os.makedirs(os.path.join(out, split, c), exist_ok=True)
    for i in range(n):
        Image.frombytes("L", (cols, rows), data[i * rows * cols:(i + 1) * rows * cols]).save(
            os.path.join(out, split, classes[labels[i]], f"{i:05d}.png"))
"""

# torchvision's side of the start-up row: from the interpreter's start (the caller times the
# process) to one training step of the same cnn on the first batch.
PEER_FIRST_STEP = r"""
import sys, time
import torch
from torch import nn
from torchvision import datasets, transforms
folder = datasets.ImageFolder(sys.argv[1] + "/train", transform=transforms.Compose([
    transforms.Grayscale(), transforms.ToTensor(), transforms.Normalize([0.286], [0.353])]))
loader = torch.utils.data.DataLoader(folder, batch_size=128, shuffle=True)
model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1),
                      nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(),
                      nn.Linear(128, 10))
optimizer = torch.optim.Adam(model.parameters(), 1e-3)
inputs, targets = next(iter(loader))
loss = nn.functional.cross_entropy(model(inputs), targets)
loss.backward()
optimizer.step()
print("first step", len(folder), flush=True)
"""


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def trainer_fit(opts, data_args, run_dir, extra):
    argv = [opts.trainer, "fit", "model=cnn", f"seed={opts.seed}", "trainer.enable_progress_bar=false",
            f"hydra.run.dir={run_dir}"] + data_args + extra
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - start
    out = proc.stdout + proc.stderr
    first = re.search(r"first training step done ([0-9.]+) s after the process started", out)
    acc = re.search(r"test/acc=([0-9.]+)", proc.stdout)
    epochs = [float(x) for x in re.findall(r"epoch \d+ done in ([0-9.]+) s", out)]
    return {"argv": argv, "rc": proc.returncode, "wall_s": wall, "first_step_s": float(first.group(1)) if first else None,
            "test_acc": float(acc.group(1)) if acc else None, "epoch_s": epochs,
            "error": None if proc.returncode == 0 else out[-2000:]}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--trainer", required=True)
    p.add_argument("--python", required=True, help="a Python with torch, torchvision and Pillow")
    p.add_argument("--folder", required=True, help="the PNG folder; made when it does not exist")
    p.add_argument("--idx", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out", required=True)
    opts = p.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc)
    if not os.path.isdir(opts.folder):
        t = time.perf_counter()
        subprocess.run([opts.python, "-c", MAKE_FOLDER, opts.folder, opts.idx], check=True)
        print(f"wrote the folder in {time.perf_counter() - t:.0f} s", flush=True)
    records = {"load_start": load()}
    png = ["data=image_folder", f"data.root={opts.folder}", "data.channels=1", "data.normalize.mean=[0.286]",
           "data.normalize.std=[0.353]", "data.batch_size=128"]
    idx = ["data=fashion_mnist", f"data.root={opts.idx}"]
    with tempfile.TemporaryDirectory() as tmp:
        # Start-up: both read the file system warm (the folder was just written or read).
        records["trainer_start"] = trainer_fit(opts, png, os.path.join(tmp, "start"),
                                               ["trainer.max_steps=1", "test_after_fit=false"])
        t = time.perf_counter()
        peer = subprocess.run([opts.python, "-c", PEER_FIRST_STEP, opts.folder], capture_output=True, text=True)
        records["torchvision_start"] = {"rc": peer.returncode, "first_step_s": time.perf_counter() - t,
                                        "error": None if peer.returncode == 0 else peer.stderr[-2000:]}
        # Accuracy and epoch times: the same cnn, seed and epochs from PNG files and from IDX.
        records["png_fit"] = trainer_fit(opts, png, os.path.join(tmp, "png"), [f"trainer.max_epochs={opts.epochs}"])
        records["idx_fit"] = trainer_fit(opts, idx, os.path.join(tmp, "idx"), [f"trainer.max_epochs={opts.epochs}"])
    records["load_end"] = load()
    r = records
    ts, ps = r["trainer_start"]["first_step_s"], r["torchvision_start"]["first_step_s"]
    pa, ia = r["png_fit"]["test_acc"], r["idx_fit"]["test_acc"]
    pe, ie = r["png_fit"]["epoch_s"], r["idx_fit"]["epoch_s"]
    fmt = lambda x, f: "n/a" if x is None else f.format(x)
    lines = [f"image folder benchmark {started:%Y-%m-%d %H:%M} UTC: Fashion-MNIST as 70,000 PNG files, model=cnn, "
             f"seed {opts.seed}, {opts.epochs} epochs, cores {os.cpu_count()}, load {r['load_start']} -> {r['load_end']}",
             "", "| row | trainer | peer | ratio |", "|---|---:|---:|---:|",
             f"| start-up: process start to the first training step (s) | {fmt(ts, '{:.2f}')} | "
             f"{fmt(ps, '{:.2f}')} (torchvision ImageFolder + DataLoader + one step) | "
             f"{fmt(ps / ts if ts and ps else None, '{:.1f}x')} |",
             f"| test/acc after {opts.epochs} epochs, from PNG files / from IDX | {fmt(pa, '{:.4f}')} | "
             f"{fmt(ia, '{:.4f}')} (the same fit on IDX) | difference {fmt(abs(pa - ia) * 100 if pa and ia else None, '{:.2f}')} points |",
             f"| epoch time (s), PNG files / IDX in memory | {', '.join(f'{x:.1f}' for x in pe) or 'n/a'} | "
             f"{', '.join(f'{x:.1f}' for x in ie) or 'n/a'} | |"]
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    with open(opts.out, "w") as f:
        f.write(text + "\nraw (JSON):\n" + json.dumps(records, indent=1) + "\n")
    return 0 if all(v.get("error") is None for v in records.values() if isinstance(v, dict)) else 1


if __name__ == "__main__":
    raise SystemExit(main())
