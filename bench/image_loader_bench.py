"""Loading images alone (issue 18's benchmark 1): the trainer's data=image_folder loader
(bench/loader_bench/loader_bench.cpp --image-folder) against torchvision's ImageFolder +
DataLoader (bench/peers/image_loader_peer.py) on the same JPEG folder: decode to RGB,
RandomResizedCrop(64) + RandomHorizontalFlip, normalise with ImageNet's mean and std, collate,
batch 128, shuffled, for each worker count in --workers; nothing done with the batches. Also the
ceiling: the trainer's decoder alone on one thread over the same files (--decode-only), and how
close the loader comes to that rate times the cores its threads use (target: 80 %).

The folder is made once from the real Fashion-MNIST (Debian's dataset-fashion-mnist): three
images as the R, G and B planes, enlarged to --side x --side, JPEG quality 90, ten class folders.
Each repetition runs every (workers, case) once in an order rotated from one repetition to the
next; ratios are taken within a repetition. samples/s = samples / seconds over epochs >= 1 (epoch
0 is warm-up: page cache, worker start-up). Writes a markdown table and the raw runs (JSON) to
--out; --summary appends one JSON line per ratio (bench/suite.sh's format).

  bench/image_loader_bench.py --loader-bench build/debian/bench/loader_bench \\
      --python ~/.cache/trainer/venv-torch-2.11.0/bin/python --folder /tmp/jpeg160 --out result.md
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import time
from typing import List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))

MAKE_FOLDER = r"""
import gzip, os, struct, sys
from PIL import Image
out, count, side, idx = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
classes = ["tshirt_top", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle_boot"]
with gzip.open(os.path.join(idx, "train-images-idx3-ubyte.gz"), "rb") as f:
    _, n, rows, cols = struct.unpack(">IIII", f.read(16))
    data = f.read((count + 2) * rows * cols)
with gzip.open(os.path.join(idx, "train-labels-idx1-ubyte.gz"), "rb") as f:
    f.read(8)
    labels = f.read(count)
def plane(i):
    return Image.frombytes("L", (cols, rows), data[i * rows * cols:(i + 1) * rows * cols]).resize((side, side), Image.BILINEAR)
for c in classes:
    os.makedirs(os.path.join(out, c), exist_ok=True)
for i in range(count):
    image = Image.merge("RGB", [plane(i), plane(i + 1), plane(i + 2)])
    image.save(os.path.join(out, classes[labels[i]], f"{i:05d}.jpg"), quality=90)
"""


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


CASES = ["trainer image_folder loader", "torchvision ImageFolder + DataLoader"]


def run(case: str, workers: int, opts, rep: int) -> dict:
    if case == CASES[0]:
        argv = [opts.loader_bench, "--image-folder", opts.folder, "--image-size", str(opts.image_size), "--workers",
                str(workers), "--epochs", str(opts.epochs), "--threads", str(opts.threads)]
    elif case == CASES[1]:
        argv = [opts.python, os.path.join(HERE, "peers", "image_loader_peer.py"), "--root", opts.folder,
                "--image-size", str(opts.image_size), "--workers", str(workers), "--epochs", str(opts.epochs),
                "--threads", str(opts.threads)]
    else:  # the decoder alone, one thread
        argv = [opts.loader_bench, "--image-folder", opts.folder, "--decode-only", "--epochs", str(opts.epochs)]
    record = {"case": case, "workers": workers, "rep": rep, "load_before": load(), "argv": argv}
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    record.update(rc=proc.returncode, wall_s=time.perf_counter() - start, load_after=load())
    epochs = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    record["epochs"] = epochs
    later = [e for e in epochs if e["epoch"] >= 1] or epochs
    seconds = sum(e["seconds"] for e in later)
    record["samples_per_s"] = sum(e["samples"] for e in later) / seconds if seconds > 0 else None
    if proc.returncode != 0 or len(epochs) != opts.epochs:
        record["error"] = (proc.stderr or proc.stdout)[-2000:]
    return record


def med(xs) -> Optional[float]:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def same_rep(records: List[dict], case: str, workers: Optional[int], rep: int) -> Optional[float]:
    for r in records:
        if r["case"] == case and (workers is None or r["workers"] == workers) and r["rep"] == rep and "error" not in r:
            return r["samples_per_s"]
    return None


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--loader-bench", required=True, help="the built bench/loader_bench program")
    p.add_argument("--python", required=True, help="a Python with torch, torchvision and Pillow")
    p.add_argument("--folder", required=True, help="the JPEG folder; made when it does not exist")
    p.add_argument("--images", type=int, default=5000, help="images in a folder made here")
    p.add_argument("--side", type=int, default=160, help="their side in pixels")
    p.add_argument("--idx", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--workers", default="0,1,2")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--out", required=True)
    p.add_argument("--summary")
    opts = p.parse_args()
    if not os.path.isdir(opts.folder):
        subprocess.run([opts.python, "-c", MAKE_FOLDER, opts.folder, str(opts.images), str(opts.side), opts.idx],
                       check=True)
    worker_counts = [int(w) for w in opts.workers.split(",") if w]
    jobs = [(w, c) for w in worker_counts for c in CASES] + [(0, "decoder alone (one thread)")]
    started = datetime.datetime.now(datetime.timezone.utc)
    start_load = load()
    records: List[dict] = []
    for rep in range(opts.reps):
        shift = rep % len(jobs)
        for workers, case in jobs[shift:] + jobs[:shift]:
            r = run(case, workers, opts, rep)
            records.append(r)
            status = "FAILED" if "error" in r else f"{r['samples_per_s']:,.0f} samples/s"
            print(f"rep {rep} workers {workers} {case}: {status}, load {r['load_before']}", flush=True)
            if "error" in r:
                print(r["error"], flush=True)
    files = sum(len(fs) for _, _, fs in os.walk(opts.folder))
    lines = [f"image loader benchmark {started:%Y-%m-%d %H:%M} UTC: {files} JPEG files of {opts.side} x {opts.side} "
             f"RGB (quality 90) -> RandomResizedCrop({opts.image_size}) + flip + normalise, batch 128; "
             f"{opts.epochs} epochs x {opts.reps} reps, cores {os.cpu_count()}, load average at start {start_load}, "
             f"at end {load()}", "",
             "| workers | trainer samples/s | torchvision samples/s | trainer / torchvision | trainer / (decoder "
             "ceiling x threads) |", "|---:|---:|---:|---:|---:|"]
    summary = []
    for w in worker_counts:
        ours = med([same_rep(records, CASES[0], w, rep) for rep in range(opts.reps)])
        peer = med([same_rep(records, CASES[1], w, rep) for rep in range(opts.reps)])
        ratios = [a / b for a, b in ((same_rep(records, CASES[0], w, rep), same_rep(records, CASES[1], w, rep))
                                     for rep in range(opts.reps)) if a and b]
        ceilings = [a / (b * max(1, w)) for a, b in ((same_rep(records, CASES[0], w, rep),
                                                       same_rep(records, "decoder alone (one thread)", None, rep))
                                                      for rep in range(opts.reps)) if a and b]
        ratio = "n/a" if not ratios else f"{med(ratios):.2f}" + (
            f" ({min(ratios):.2f}-{max(ratios):.2f})" if len(ratios) > 1 else "")
        ceiling = "n/a" if not ceilings else f"{100 * med(ceilings):.0f} %"
        lines.append(f"| {w} | {'n/a' if ours is None else f'{ours:,.0f}'} | "
                     f"{'n/a' if peer is None else f'{peer:,.0f}'} | {ratio} | {ceiling} |")
        summary.append({"bench": "image_loader", "row": f"{w} workers: trainer / torchvision ImageFolder",
                        "measure": "samples/s", "ratio": med(ratios), "runs": len(ratios), "better": "higher",
                        "target": 2.0})
    decode = med([same_rep(records, "decoder alone (one thread)", None, rep) for rep in range(opts.reps)])
    text = "\n".join(lines) + (
        f"\n\ndecoder alone, one thread: {decode:,.0f} images/s. medians over repetitions; ratios per repetition, "
        "median (range); the ceiling column divides by the decoder's rate times max(1, workers).\n")
    print("\n" + text)
    with open(opts.out, "w") as f:
        f.write(text + "\nraw runs (JSON, one a line):\n" + "".join(json.dumps(r) + "\n" for r in records))
    if opts.summary:
        with open(opts.summary, "a") as f:
            for line in summary:
                f.write(json.dumps(line) + "\n")
    return 1 if any("error" in r for r in records) else 0


if __name__ == "__main__":
    raise SystemExit(main())
