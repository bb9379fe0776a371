"""Issue 18's benchmark 2, "end to end": `model=cnn` and `model=resnet` trained from an image folder,
`trainer fit data=image_folder` against plain PyTorch + torchvision and against PyTorch Lightning 2.6
(bench/peers/image_train_peer.py --mode plain|lightning), interleaved in one run.

Every side trains with the trainer's defaults for data=image_folder (configs/data/image_folder.yaml):
PNGs decoded to RGB (data.channels=3), no resize or crop, ToTensor + ImageNet's Normalize, batch 64,
10 % of train/ held out for validation, test/ tested after the fit; Adam at lr 1e-3; the same
layers (src/models/cnn.cpp, src/models/resnet.cpp); 2 intra-op threads; the loader's workers as the
trainer's data.num_workers=auto picks them (read from the trainer's first run's log, "loader: N
worker thread(s)", and given to the peers' DataLoader; --workers overrides). Each epoch validates
and writes a checkpoint on every side.

Measured: training samples/s of the last epoch (--measure-epoch, default the last; epoch 0 pays
oneDNN's first-call set-up and the workers' start): the trainer's "epoch N done in S s" (training
only, validation excluded) against the peers' "epoch N train S s samples K" (the same span: from
the epoch's start, first batch's wait included, to the end of its last step). Start-up is excluded.
The ratio trainer / peer is taken per repetition (the three programs of one repetition run back
to back, so the machine's load hits all of them); the table gives its median and range. Accuracy:
val/acc of the last epoch and test/acc after the fit on every side (the trainer tests its best
checkpoint by val/acc, the peers the last weights), so the comparison trains the same thing.

The folders (made with --make-trees from the PNG folder of bench/image_folder_bench.py, symlinks):
  --cnn-root     train/<class>/ 600 images a class (6,000: 5,400 train + 600 val), test/ 100 a class
  --resnet-root  train/<class>/ 100 a class (1,000: 900 train + 100 val), test/ 50 a class: a ResNet-18 epoch on 2
                 CPU cores runs at ~32 samples/s, so 6,000 images would take ~3 min an epoch.

  bench/image_train_bench.py --trainer build/debian/trainer \\
      --python ~/.cache/trainer/peer-venv/bin/python --make-trees /tmp/fashion_png \\
      --cnn-root /tmp/fashion_png_small --resnet-root /tmp/fashion_png_resnet \\
      --out bench/results/image_train_$(date -u +%Y-%m-%dT%H%M).md

--python must have torch, torchvision and Lightning 2.6: bench/bench_env.sh's bench_peer_venv makes
one (~/.cache/trainer/peer-venv: Lightning over the torch 2.11 venv). With the defaults (2
repetitions, 2 epochs a run: 6 cnn runs of 15-30 s, 6 resnet runs of 75-85 s on 2 idle cores) about
11 minutes; 16.9 min measured on 2026-11-27 beside another session's build (load 2-4.9).
--models resnet --reps 3 reruns the resnet rows alone.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRAINER_EPOCH = re.compile(r"\]\[trainer\]\[info\] - epoch (\d+) done in ([0-9.]+) s")
TRAINER_VAL = re.compile(r"\]\[trainer\]\[info\] - epoch (\d+) done in [^\n]* val/acc ([0-9.]+)")
TRAINER_DATA = re.compile(r"data: (\d+) train / (\d+) val / (\d+) test samples, batch (\d+); loader: (\d+) worker")
DATA = re.compile(r"data: (\d+) train / (\d+) val / (\d+) test samples")
TRAINER_TEST = re.compile(r"test/acc=([0-9.]+)")
PEER_EPOCH = re.compile(r"epoch (\d+) train ([0-9.]+) s samples (\d+)")
PEER_VAL = re.compile(r"epoch (\d+) val/acc ([0-9.]+)")
PEER_TEST = re.compile(r"test/acc ([0-9.]+)")
FIRST_STEP = re.compile(r"first training step done ([0-9.]+) s after the")
SIDES = ("trainer", "plain", "lightning")
SIDE_NAMES = {"trainer": "trainer", "plain": "plain PyTorch + torchvision", "lightning": "Lightning 2.6"}


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def make_tree(source: str, dest: str, train_per_class: int, test_per_class: int) -> None:
    """dest/{train,test}/<class>/ with the first N files (sorted) of each class, as symlinks."""
    if os.path.isdir(dest):
        return
    for split, n in (("train", train_per_class), ("test", test_per_class)):
        for cls in sorted(os.listdir(os.path.join(source, split))):
            os.makedirs(os.path.join(dest, split, cls))
            for name in sorted(os.listdir(os.path.join(source, split, cls)))[:n]:
                os.symlink(os.path.join(source, split, cls, name), os.path.join(dest, split, cls, name))


def run_side(side: str, model: str, root: str, opts, run_dir: str, workers) -> dict:
    if side == "trainer":
        argv = [opts.trainer, "fit", "data=image_folder", f"data.root={root}", f"model={model}",
                f"trainer.max_epochs={opts.epochs}", f"seed={opts.seed}", f"hydra.run.dir={run_dir}"]
        if opts.workers is not None:
            argv.append(f"data.num_workers={opts.workers}")
    else:
        argv = [opts.python, os.path.join(HERE, "peers", "image_train_peer.py"), "--mode", side, "--model", model,
                "--root", root, "--epochs", str(opts.epochs), "--threads", str(opts.threads),
                "--workers", str(workers), "--seed", str(opts.seed), "--out", run_dir]
    record = {"side": side, "model": model, "load_before": load(), "argv": argv}
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=os.path.dirname(run_dir), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, errors="replace")
    record["wall_s"] = time.perf_counter() - start
    record["rc"] = proc.returncode
    record["load_after"] = load()
    out = proc.stdout + "\n" + proc.stderr
    first = FIRST_STEP.search(out)
    data = DATA.search(out)
    record["split"] = " / ".join(f"{int(x):,}" for x in data.groups()) if data else None
    record["first_step_s"] = float(first.group(1)) if first else None
    if side == "trainer":
        data = TRAINER_DATA.search(out)
        record["train_samples"] = int(data.group(1)) if data else None
        record["workers"] = int(data.group(5)) if data else None
        record["epoch_s"] = {int(m.group(1)): float(m.group(2)) for m in TRAINER_EPOCH.finditer(out)}
        record["epoch_samples"] = {e: record["train_samples"] for e in record["epoch_s"]}
        record["val_acc"] = {int(m.group(1)): float(m.group(2)) for m in TRAINER_VAL.finditer(out)}
        test = TRAINER_TEST.search(out)
    else:
        record["workers"] = workers
        epochs = [(int(m.group(1)), float(m.group(2)), int(m.group(3))) for m in PEER_EPOCH.finditer(out)]
        record["epoch_s"] = {e: s for e, s, _ in epochs}
        record["epoch_samples"] = {e: k for e, _, k in epochs}
        record["val_acc"] = {int(m.group(1)): float(m.group(2)) for m in PEER_VAL.finditer(out)}
        test = PEER_TEST.search(out)
    record["test_acc"] = float(test.group(1)) if test else None
    e = opts.measure_epoch if opts.measure_epoch >= 0 else opts.epochs - 1
    secs, samples = record["epoch_s"].get(e), record["epoch_samples"].get(e)
    record["samples_per_s"] = samples / secs if secs and samples else None
    record["final_val_acc"] = record["val_acc"].get(opts.epochs - 1)
    ok = proc.returncode == 0 and record["samples_per_s"] is not None
    record["error"] = None if ok else out[-3000:]
    print(f"  {model:6s} {side:9s} rc {proc.returncode} epochs {record['epoch_s']} "
          f"samples/s {record['samples_per_s'] and round(record['samples_per_s'], 1)} val/acc {record['final_val_acc']} "
          f"test/acc {record['test_acc']} wall {record['wall_s']:.0f} s load {record['load_after']}", flush=True)
    return record


def median_range(values, fmt="{:.2f}") -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    if len(values) == 1:
        return fmt.format(values[0])
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--trainer", required=True)
    p.add_argument("--python", required=True, help="a Python with torch, torchvision and Lightning 2.6")
    p.add_argument("--cnn-root", required=True)
    p.add_argument("--resnet-root", required=True)
    p.add_argument("--make-trees", metavar="PNG_FOLDER", help="make the roots that do not exist from this folder")
    p.add_argument("--models", default="cnn,resnet")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--measure-epoch", type=int, default=-1, help="the epoch whose samples/s count; -1: the last")
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                   help="the peers' torch.set_num_threads (the trainer's auto: the cores available)")
    p.add_argument("--workers", type=int, default=None,
                   help="loader workers on every side; default: what the trainer's data.num_workers=auto picks")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--workdir", default="/tmp/image_train_bench")
    p.add_argument("--out", required=True)
    opts = p.parse_args()
    opts.trainer = os.path.abspath(opts.trainer)
    started = datetime.datetime.now(datetime.timezone.utc)
    t_start = time.perf_counter()
    if opts.make_trees:
        make_tree(opts.make_trees, opts.cnn_root, 600, 100)
        make_tree(opts.make_trees, opts.resnet_root, 100, 50)
    roots = {"cnn": opts.cnn_root, "resnet": opts.resnet_root}
    models = opts.models.split(",")
    records = {"started": f"{started:%Y-%m-%d %H:%M:%S} UTC", "cores": os.cpu_count(), "load_start": load(),
               "options": vars(opts), "runs": []}
    print(f"load at start: {records['load_start']}", flush=True)
    workdir = os.path.join(opts.workdir, f"{started:%Y%m%dT%H%M%S}")
    os.makedirs(workdir, exist_ok=True)
    workers = opts.workers
    for rep in range(opts.reps):
        for model in models:
            # Alternate which side goes first, so a slow spell does not always hit the same one.
            order = SIDES if rep % 2 == 0 else SIDES[::-1]
            if workers is None:  # the trainer's first run tells the peers what auto gave
                order = SIDES
            for side in order:
                run_dir = os.path.join(workdir, f"{model}_{side}_{rep}", "run")
                os.makedirs(os.path.dirname(run_dir), exist_ok=True)
                record = run_side(side, model, roots[model], opts, run_dir, workers)
                record["rep"] = rep
                records["runs"].append(record)
                if side == "trainer" and workers is None:
                    workers = record["workers"]
                    if workers is None:
                        raise SystemExit("image_train_bench: the trainer's log did not name its loader workers:\n"
                                         + (record["error"] or ""))
                    records["auto_workers"] = workers
    records["load_end"] = load()
    records["wall_s"] = time.perf_counter() - t_start
    runs = records["runs"]

    def pick(model, side, rep=None):
        return [r for r in runs if r["model"] == model and r["side"] == side and (rep is None or r["rep"] == rep)]

    e = opts.measure_epoch if opts.measure_epoch >= 0 else opts.epochs - 1
    lines = [f"image folder end to end {records['started']}: trainer fit data=image_folder against plain PyTorch + "
             f"torchvision and Lightning; {opts.epochs} epochs a run, epoch {e} measured, {opts.reps} repetitions "
             f"(interleaved), batch 64, Adam lr 1e-3, RGB + ImageNet normalisation (the image_folder defaults), "
             f"{opts.threads} threads, {workers} loader workers on every side (the trainer's num_workers=auto); "
             f"cores {records['cores']}, load {records['load_start']} -> {records['load_end']}; "
             f"whole run {records['wall_s'] / 60:.1f} min",
             "",
             "| model | images (train / val / test) | side | samples/s (median, range) | first step (s) "
             "| val/acc | test/acc | trainer / side (median, range) |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    summary = {}
    for model in models:
        for side in SIDES:
            rs = pick(model, side)
            ratios = []
            for rep in range(opts.reps):
                t, s = pick(model, "trainer", rep), pick(model, side, rep)
                if t and s and t[0]["samples_per_s"] and s[0]["samples_per_s"]:
                    ratios.append(t[0]["samples_per_s"] / s[0]["samples_per_s"])
            summary[(model, side)] = ratios
            ratio = "-" if side == "trainer" else f"**{median_range(ratios)}**"
            accs = lambda key: ", ".join("n/a" if r[key] is None else f"{r[key]:.4f}" for r in rs) or "n/a"
            split = next((r["split"] for r in rs if r.get("split")), "n/a")
            lines.append(f"| {model} | {split} | {SIDE_NAMES[side]} | "
                         f"{median_range([r['samples_per_s'] for r in rs], '{:,.1f}')} | "
                         f"{median_range([r['first_step_s'] for r in rs], '{:.1f}')} | {accs('final_val_acc')} | "
                         f"{accs('test_acc')} | {ratio} |")
    lines += ["", "Per repetition (samples/s of the measured epoch; trainer / plain, trainer / Lightning):", ""]
    for model in models:
        for rep in range(opts.reps):
            cells = []
            for side in SIDES:
                r = pick(model, side, rep)
                cells.append(f"{side} {r[0]['samples_per_s']:.1f}" if r and r[0]["samples_per_s"] else f"{side} n/a")
            t = pick(model, "trainer", rep)
            ratios = []
            for side in ("plain", "lightning"):
                s = pick(model, side, rep)
                ok = t and s and t[0]["samples_per_s"] and s[0]["samples_per_s"]
                ratios.append(f"{t[0]['samples_per_s'] / s[0]['samples_per_s']:.2f}" if ok else "n/a")
            lines.append(f"- {model} rep {rep}: {', '.join(cells)}; ratios {ratios[0]}, {ratios[1]}")
    errors = [r for r in runs if r["error"]]
    if errors:
        lines += ["", f"{len(errors)} run(s) failed: " + ", ".join(f"{r['model']} {r['side']} rep {r['rep']}"
                                                                for r in errors)]
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    with open(opts.out, "w") as f:
        f.write(text + "\nraw (JSON):\n" + json.dumps(records, indent=1, default=str) + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
