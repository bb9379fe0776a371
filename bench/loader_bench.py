"""Data loading alone: the trainer's BatchLoader (bench/loader_bench/loader_bench.cpp) against
PyTorch's DataLoader (bench/peers/loader_peer.py) over the same in-memory Fashion-MNIST training
split (uint8, 54,000 images), batch 128, shuffled, each batch normalised to float32 in the worker,
nothing done with the batches; for each worker count in --workers, with the same intra-op threads
in the consuming process. PyTorch is run twice: fetching sample by sample (TensorDataset +
default_collate, as users write it) and a batch at a time (__getitems__, the trainer's way).

Each repetition runs every (workers, case) once in an order rotated from one repetition to the
next; ratios are taken within a repetition. samples/s = samples / seconds over epochs >= 1 (epoch
0 is warm-up: page faults, worker start-up). Writes a markdown table and every run's raw numbers
(JSON, one a line) to --out; --summary appends one JSON line per ratio (bench/suite.sh).
Python standard library only.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import time
from typing import List, Optional


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


CASES = [("trainer BatchLoader", "ours", None), ("PyTorch DataLoader, per-sample fetch", "torch", "sample"),
         ("PyTorch DataLoader, batched fetch", "torch", "batch")]


def run(case, workers: int, opts, rep: int) -> dict:
    name, kind, fetch = case
    if kind == "ours":
        argv = [opts.loader_bench, "--root", opts.root, "--workers", str(workers), "--epochs", str(opts.epochs),
                "--threads", str(opts.threads)]
    else:
        argv = [opts.python, os.path.join(opts.peers, "loader_peer.py"), "--root", opts.root, "--workers",
                str(workers), "--epochs", str(opts.epochs), "--threads", str(opts.threads), "--fetch", fetch]
    record = {"case": name, "workers": workers, "rep": rep, "load_before": load(), "argv": argv}
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    record.update(rc=proc.returncode, wall_s=time.perf_counter() - start, load_after=load())
    epochs = []
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            epochs.append(json.loads(line))
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


def ratios(records: List[dict], workers: int, name: str) -> List[float]:
    out = []
    for r in records:
        if r["case"] != name or r["workers"] != workers or "error" in r:
            continue
        ours = [x for x in records if x["case"] == CASES[0][0] and x["workers"] == workers and x["rep"] == r["rep"]
                and "error" not in x]
        if ours and ours[0]["samples_per_s"] and r["samples_per_s"]:
            out.append(ours[0]["samples_per_s"] / r["samples_per_s"])
    return out


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--loader-bench", required=True, help="the built bench/loader_bench program")
    p.add_argument("--python", required=True, help="a Python with torch")
    p.add_argument("--peers", required=True, help="bench/peers")
    p.add_argument("--root", required=True)
    p.add_argument("--workers", default="0,1,2")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--out", required=True)
    p.add_argument("--summary")
    opts = p.parse_args()
    worker_counts = [int(w) for w in opts.workers.split(",") if w]
    jobs = [(w, c) for w in worker_counts for c in CASES]
    started = datetime.datetime.now(datetime.timezone.utc)
    start_load = load()
    records: List[dict] = []
    for rep in range(opts.reps):
        shift = rep % len(jobs)
        for workers, case in jobs[shift:] + jobs[:shift]:
            r = run(case, workers, opts, rep)
            records.append(r)
            status = "FAILED" if "error" in r else f"{r['samples_per_s']:,.0f} samples/s"
            print(f"rep {rep} workers {workers} {case[0]}: {status}, load {r['load_before']}", flush=True)
            if "error" in r:
                print(r["error"], flush=True)
    lines = [f"loader benchmark {started:%Y-%m-%d %H:%M} UTC, {opts.epochs} epochs x {opts.reps} reps, "
             f"{opts.threads} intra-op threads in the consumer, cores {os.cpu_count()}, load average at start "
             f"{start_load}, at end {load()}", "",
             "| workers | loader | samples/s | trainer / this (samples/s) |", "|---:|---|---:|---:|"]
    for w in worker_counts:
        for name, _, _ in CASES:
            runs = [r for r in records if r["case"] == name and r["workers"] == w and "error" not in r]
            rs = ratios(records, w, name)
            ratio = "" if name == CASES[0][0] else (
                "n/a" if not rs else f"{med(rs):.2f}" + (f" ({min(rs):.2f}-{max(rs):.2f})" if len(rs) > 1 else ""))
            rate = med([r["samples_per_s"] for r in runs])
            lines.append(f"| {w} | {name} | {'n/a' if rate is None else f'{rate:,.0f}'} | {ratio} |")
    text = "\n".join(lines) + "\n\nmedians over repetitions; ratio = trainer's samples/s / this row's, per " \
                              "repetition, median (range)\n"
    print("\n" + text)
    with open(opts.out, "w") as f:
        f.write(text + "\nraw runs (JSON, one a line):\n" + "".join(json.dumps(r) + "\n" for r in records))
    if opts.summary:
        with open(opts.summary, "a") as f:
            for w in worker_counts:
                for name, _, _ in CASES[1:]:
                    rs = ratios(records, w, name)
                    f.write(json.dumps({"bench": "loader", "row": f"{w} workers: trainer / {name}",
                                        "measure": "samples/s", "ratio": med(rs), "runs": len(rs),
                                        "better": "higher", "target": 1.0}) + "\n")
    return 1 if any("error" in r for r in records) else 0


if __name__ == "__main__":
    raise SystemExit(main())
