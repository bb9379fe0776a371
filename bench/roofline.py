"""Issue 22's roofline: how much of the CPU training step its arithmetic accounts for.

bench/roofline/roofline.cpp times, with the trainer's LibTorch and threads, every matrix product
and convolution a training step of model=mlp and model=cnn needs, at their own shapes (forward,
input gradient where autograd computes one, weight gradient), and 1024^3 products and a square
convolution for reference. The sum of those times is the step's floor: what it would take if
nothing but its arithmetic ran, at the speed this machine reaches on those shapes. `trainer fit`
(Fashion-MNIST, batch 128, default settings) reports its FLOP/s (metrics.csv's flops_per_sec,
from the trainer's own FLOP counter: 3x the forward's products and convolutions). The achieved
share is the trainer's FLOP/s over the floor's FLOP/s (the same FLOP count over both times).

  bench/roofline.py --roofline build/debian/bench/roofline --trainer build/debian/trainer [--reps 3] [--out F]
"""
import argparse
import csv
import datetime
import os
import statistics
import subprocess
import sys
import tempfile

# Which timed kernels one training step of each model runs.
STEP_KERNELS = {
    "mlp": lambda name: name.startswith("mlp"),
    "cnn": lambda name: name.startswith("cnnfc") or name.startswith("cnn1") or name.startswith("cnn2"),
}
FIT_ARGS = {"mlp": ["trainer.max_epochs=1"],
            "cnn": ["model=cnn", "trainer.max_epochs=1", "trainer.limit_train_batches=120"]}


def kernels(binary, reps):
    rows = {}
    for line in subprocess.run([binary, "--reps", str(reps)], check=True, capture_output=True,
                               text=True).stdout.splitlines():
        parts = line.split()
        if parts[0] == "info":
            info = " ".join(parts[1:])
            continue
        rows[parts[1]] = (float(parts[2]), float(parts[3]))
    return info, rows


def trainer_flops(trainer, model, work):
    run_dir = os.path.join(work, model)
    subprocess.run(["rm", "-rf", run_dir], check=True)
    subprocess.run([trainer, "fit", "trainer.enable_progress_bar=false", "trainer.limit_val_batches=0",
                    "trainer.num_sanity_val_steps=0", "trainer.log_every_n_steps=20", "hydra.run.dir=" + run_dir]
                   + FIT_ARGS[model], check=True, capture_output=True, cwd=work)
    with open(os.path.join(run_dir, "metrics.csv")) as f:
        values = [float(r["flops_per_sec"]) for r in csv.DictReader(f) if r.get("flops_per_sec")]
    return statistics.median(values[1:] or values)  # the first interval holds the warm-up


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roofline", required=True)
    ap.add_argument("--trainer", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--kernel-reps", type=int, default=50)
    ap.add_argument("--out")
    args = ap.parse_args()
    args.trainer = os.path.abspath(args.trainer)
    runs = []
    fits = {m: [] for m in STEP_KERNELS}
    with tempfile.TemporaryDirectory() as work:
        for _ in range(args.reps):
            info, rows = kernels(args.roofline, args.kernel_reps)
            runs.append(rows)
            for model in STEP_KERNELS:
                fits[model].append(trainer_flops(args.trainer, model, work))
    names = list(runs[0])
    med = {n: statistics.median(r[n][1] for r in runs) for n in names}
    gflops = {n: runs[0][n][0] / med[n] / 1e9 for n in names}
    lines = ["# Roofline of the CPU training step (%s)" % datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), "",
             "LibTorch %s; %d runs, interleaved with the fits; kernel times are medians of %d calls, then the median "
             "over runs." % (info, args.reps, args.kernel_reps), "",
             "| kernel | GFLOP/s |", "|---|---:|"]
    lines += ["| %s | %.1f |" % (n, gflops[n]) for n in names]
    lines += ["", "| model | step floor (ms) | floor GFLOP/s | trainer GFLOP/s (median [min-max]) | achieved share |",
              "|---|---:|---:|---:|---:|"]
    for model, selected in STEP_KERNELS.items():
        step_names = [n for n in names if selected(n)]
        floor_s = sum(med[n] for n in step_names)
        flops = sum(runs[0][n][0] for n in step_names)
        floor_gflops = flops / floor_s / 1e9
        achieved = [v / 1e9 for v in fits[model]]
        lines.append("| %s | %.2f | %.1f | %.1f [%.1f-%.1f] | %.0f %% |" % (
            model, floor_s * 1e3, floor_gflops, statistics.median(achieved), min(achieved), max(achieved),
            100 * statistics.median(achieved) / floor_gflops))
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
