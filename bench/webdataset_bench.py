"""Tar shards (issue 19's shard benchmarks), three parts on the same JPEG images:

1. samples/s: the trainer's data=webdataset loader (bench/loader_bench --shards) against the same
   images as a folder (loader_bench --image-folder) and against the webdataset library +
   DataLoader (bench/peers/webdataset_peer.py), each decoding to RGB, RandomResizedCrop(64) +
   flip, normalising, batch 128, shuffle buffer 1000, for each worker count in --workers.
   samples/s over epochs >= 1 (epoch 0 warms the page cache and starts workers).
2. start-up: the time each takes to open its data (loader_bench's and the peer's "open_seconds").
3. peak RSS against the dataset's size: loader_bench --shards, one epoch, 2 workers, over shards
   holding 1x, 4x and 16x --rss-base samples (the images repeated under new keys); the peak
   resident set from wait4(2). Flat means memory is bounded by the buffers, not the dataset.

The images are made once from the real Fashion-MNIST (bench/image_loader_bench.py's folder: three
images as the R, G, B planes, enlarged to --side, JPEG quality 90) and packed into shards of
--per-shard samples in a seeded random order (as shards are usually written), keys
<class>/<file>, each with its .jpg and its .cls. Writes a markdown table and the raw runs to --out.

  bench/webdataset_bench.py --loader-bench build/debian/bench/loader_bench \\
      --python ~/.cache/trainer/venv-torch-2.11.0/bin/python --work /tmp/wds_bench --out result.md
(the peer needs `pip install webdataset` in that Python.)
"""
import argparse
import datetime
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from typing import List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from image_loader_bench import MAKE_FOLDER, load  # noqa: E402

CASES = ["trainer shards", "trainer folder", "webdataset + DataLoader"]


def images_of(folder: str):
    classes = sorted(d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d)))
    out = []
    for label, c in enumerate(classes):
        for name in sorted(os.listdir(os.path.join(folder, c))):
            out.append((c + "/" + os.path.splitext(name)[0], os.path.join(folder, c, name), label))
    return out


def pack(images, out_dir: str, per_shard: int, copies: int = 1) -> str:
    """Shards of the images (each `copies` times, under new keys), in a seeded random order; returns
    the brace pattern."""
    os.makedirs(out_dir, exist_ok=True)
    samples = [(f"{key}_{c}", path, label) for c in range(copies) for key, path, label in images]
    random.Random(0).shuffle(samples)
    shards = (len(samples) + per_shard - 1) // per_shard
    for s in range(shards):
        with tarfile.open(os.path.join(out_dir, f"shard-{s:06d}.tar"), "w", format=tarfile.USTAR_FORMAT) as tar:
            for key, path, label in samples[s * per_shard:(s + 1) * per_shard]:
                with open(path, "rb") as f:
                    data = f.read()
                for ext, payload in (("jpg", data), ("cls", str(label).encode())):
                    info = tarfile.TarInfo(key + "." + ext)
                    info.size = len(payload)
                    tar.addfile(info, io.BytesIO(payload))
    return os.path.join(out_dir, "shard-{%06d..%06d}.tar" % (0, shards - 1))


def run(argv: List[str], record: dict) -> dict:
    record.update(argv=argv, load_before=load())
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    out, err = proc.stdout, proc.stderr
    record.update(rc=proc.returncode, wall_s=time.perf_counter() - start, load_after=load())
    epochs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    record["epochs"] = epochs
    later = [e for e in epochs if e["epoch"] >= 1] or epochs
    seconds = sum(e["seconds"] for e in later)
    record["samples_per_s"] = sum(e["samples"] for e in later) / seconds if seconds > 0 else None
    record["open_seconds"] = epochs[0].get("open_seconds") if epochs else None
    if proc.returncode != 0 or not epochs:
        record["error"] = (err or out)[-2000:]
    return record


def peak_rss_run(argv: List[str]) -> dict:
    """Runs argv and returns its peak RSS (MiB) from wait4, and its epochs."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errors)
        out = proc.stdout.read().decode()
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage (Popen has not reaped it)
        proc.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        err = errors.read().decode(errors="replace")
    epochs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    r = {"argv": argv, "rc": os.waitstatus_to_exitcode(status), "peak_rss_mib": usage.ru_maxrss / 1024,
         "wall_s": time.perf_counter() - start, "epochs": epochs}
    if r["rc"] != 0:
        r["error"] = err[-2000:]
    return r


def med(xs) -> Optional[float]:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--loader-bench", required=True)
    p.add_argument("--python", required=True, help="a Python with torch, torchvision, Pillow and webdataset")
    p.add_argument("--work", required=True, help="folder for the images and shards; reused when present")
    p.add_argument("--images", type=int, default=5000)
    p.add_argument("--side", type=int, default=160)
    p.add_argument("--per-shard", type=int, default=500)
    p.add_argument("--idx", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--workers", default="0,1,2")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--rss-base", type=int, default=2500, help="samples of the 1x dataset of part 3")
    p.add_argument("--out", required=True)
    p.add_argument("--summary")
    opts = p.parse_args()
    folder = os.path.join(opts.work, "folder")
    if not os.path.isdir(folder):
        subprocess.run([opts.python, "-c", MAKE_FOLDER, folder, str(opts.images), str(opts.side), opts.idx], check=True)
    images = images_of(folder)
    pattern = pack(images, os.path.join(opts.work, "shards"), opts.per_shard)
    started = datetime.datetime.now(datetime.timezone.utc)
    start_load = load()
    common = ["--image-size", "64", "--epochs", str(opts.epochs), "--threads", str(opts.threads)]
    worker_counts = [int(w) for w in opts.workers.split(",") if w]
    jobs = [(w, c) for w in worker_counts for c in CASES]
    records: List[dict] = []
    for rep in range(opts.reps):
        shift = rep % len(jobs)
        for workers, case in jobs[shift:] + jobs[:shift]:
            if case == CASES[0]:
                argv = [opts.loader_bench, "--shards", pattern, "--workers", str(workers)] + common
            elif case == CASES[1]:
                argv = [opts.loader_bench, "--image-folder", folder, "--workers", str(workers)] + common
            else:
                argv = [opts.python, os.path.join(HERE, "peers", "webdataset_peer.py"), "--shards", pattern,
                        "--workers", str(workers)] + common
            r = run(argv, {"case": case, "workers": workers, "rep": rep})
            records.append(r)
            status = "FAILED" if "error" in r else f"{r['samples_per_s']:,.0f} samples/s, open {r['open_seconds']:.3f} s"
            print(f"rep {rep} workers {workers} {case}: {status}, load {r['load_before']}", flush=True)
            if "error" in r:
                print(r["error"], flush=True)

    def rate(case, w, rep):
        for r in records:
            if r["case"] == case and r["workers"] == w and r["rep"] == rep and "error" not in r:
                return r["samples_per_s"]
        return None

    def ratio_text(a_case, b_case, w):
        ratios = [a / b for a, b in ((rate(a_case, w, k), rate(b_case, w, k)) for k in range(opts.reps)) if a and b]
        text = "n/a" if not ratios else f"{med(ratios):.2f}" + (
            f" ({min(ratios):.2f}-{max(ratios):.2f})" if len(ratios) > 1 else "")
        return text, med(ratios), len(ratios)

    lines = [f"tar shard benchmark {started:%Y-%m-%d %H:%M} UTC: {len(images)} JPEG images of {opts.side} x "
             f"{opts.side} RGB in {len(os.listdir(os.path.join(opts.work, 'shards')))} shards of {opts.per_shard} -> "
             f"RandomResizedCrop(64) + flip + normalise, batch 128, shuffle buffer 1000; {opts.epochs} epochs x "
             f"{opts.reps} reps, cores {os.cpu_count()}, load average at start {start_load}, at end {load()}", "",
             "| workers | shards samples/s | folder samples/s | webdataset samples/s | shards / folder | "
             "shards / webdataset |", "|---:|---:|---:|---:|---:|---:|"]
    summary = []
    for w in worker_counts:
        rates = [med([rate(c, w, k) for k in range(opts.reps)]) for c in CASES]
        vs_folder, vf, nf = ratio_text(CASES[0], CASES[1], w)
        vs_peer, vp, np_ = ratio_text(CASES[0], CASES[2], w)
        lines.append(f"| {w} | " + " | ".join("n/a" if x is None else f"{x:,.0f}" for x in rates) +
                     f" | {vs_folder} | {vs_peer} |")
        summary.append({"bench": "webdataset", "row": f"{w} workers: trainer shards / folder", "measure": "samples/s",
                        "ratio": vf, "runs": nf, "better": "higher", "target": 1.0})
        summary.append({"bench": "webdataset", "row": f"{w} workers: trainer shards / webdataset + DataLoader",
                        "measure": "samples/s", "ratio": vp, "runs": np_, "better": "higher", "target": 2.0})
    opens = {c: med([r["open_seconds"] for r in records if r["case"] == c and "error" not in r]) for c in CASES}
    lines += ["", "start-up (opening the data, median): " +
              ", ".join(f"{c} {'n/a' if v is None else f'{v:.3f} s'}" for c, v in opens.items())]

    # 3. Peak RSS against the dataset's size.
    lines += ["", "| dataset | samples | shard bytes | peak RSS (2 workers, 1 epoch) | samples/s |",
              "|---:|---:|---:|---:|---:|"]
    rss_records = []
    base = images[:opts.rss_base]
    for mult in (1, 4, 16):
        out_dir = os.path.join(opts.work, f"rss{mult}")
        rss_pattern = pack(base, out_dir, opts.per_shard, copies=mult)
        size = sum(os.path.getsize(os.path.join(out_dir, f)) for f in os.listdir(out_dir))
        r = peak_rss_run([opts.loader_bench, "--shards", rss_pattern, "--workers", "2", "--epochs", "1"] + common[:2] +
                         ["--threads", str(opts.threads)])
        r.update(mult=mult, samples=len(base) * mult, bytes=size)
        rss_records.append(r)
        e = r["epochs"][0] if r["epochs"] else None
        speed = "n/a" if not e else f"{e['samples'] / e['seconds']:,.0f}"
        lines.append(f"| {mult}x | {len(base) * mult:,} | {size / 2**20:,.0f} MiB | {r['peak_rss_mib']:,.0f} MiB | "
                     f"{speed} |")
        print(f"rss {mult}x: {r['peak_rss_mib']:.0f} MiB over {size / 2**20:.0f} MiB of shards", flush=True)
        if "error" in r:
            print(r["error"], flush=True)
    if len(rss_records) == 3 and all("error" not in r for r in rss_records):
        summary.append({"bench": "webdataset", "row": "peak RSS, 16x dataset / 1x dataset", "measure": "MiB",
                        "ratio": rss_records[2]["peak_rss_mib"] / rss_records[0]["peak_rss_mib"], "runs": 1,
                        "better": "lower", "target": 1.1})
    text = "\n".join(lines) + "\n\nmedians over repetitions; ratios per repetition, median (range).\n"
    print("\n" + text)
    with open(opts.out, "w") as f:
        f.write(text + "\nraw runs (JSON, one a line):\n" +
                "".join(json.dumps(r) + "\n" for r in records + rss_records))
    if opts.summary:
        with open(opts.summary, "a") as f:
            for line in summary:
                f.write(json.dumps(line) + "\n")
    return 1 if any("error" in r for r in records + rss_records) else 0


if __name__ == "__main__":
    raise SystemExit(main())
