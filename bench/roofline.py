"""Issue 22's roofline: how much of the CPU training step its arithmetic accounts for.

bench/roofline/roofline.cpp times, with the trainer's LibTorch and threads, every matrix product
and convolution a training step of model=mlp and model=cnn runs, at their own shapes (forward,
input gradient where autograd computes one, weight gradient), and a 1024^3 product and a square
convolution for reference. The sum of those times is the step's floor: what the step would take
if nothing but its arithmetic ran, at the speed this machine reaches on those shapes.

`trainer fit` (Fashion-MNIST, batch 128, default settings; validation off) is run alongside, once
per variant (--variant "label:ENV=VALUE ..."; the defaults always run). From its metrics.csv: the
step time (1 / batches_per_sec, the median over logging intervals after the first) and the FLOP/s
of its own counter (flops_per_sec: 3x the forward's matrix products and convolutions).

Reported per model: floor / step (the share of the step its arithmetic needs), and the trainer's
FLOP/s over the achievable FLOP/s at the model's shapes (the floor's). Kernels and fits are
interleaved, repetition by repetition.

Then where the rest of the step goes: the model's forward + backward in plain ATen (no optimizer,
no data, the trainer's OpenBLAS setting) at its real shapes and at tiny ones (the same operators
on a few numbers: LibTorch's own per-operator cost, which no runner can remove); and each Linear
layer's products through oneDNN beside the BLAS at::mm uses.

  bench/roofline.py --roofline build/debian/bench/roofline --trainer build/debian/trainer [--reps 5] [--out F]
"""
import argparse
import csv
import datetime
import os
import statistics
import subprocess
import sys
import tempfile

from report_out import emit

# Which timed kernels one training step of each model runs.
STEP_KERNELS = {
    "mlp": lambda name: name.startswith("mlp"),
    "cnn": lambda name: name.startswith(("cnnfc", "cnn1-", "cnn2-")),
}
FIT_ARGS = {"mlp": ["trainer.max_epochs=1"],
            "cnn": ["model=cnn", "trainer.max_epochs=1", "trainer.limit_train_batches=120"]}


def kernels(binary, reps):
    rows, info, notes = {}, "", []
    out = subprocess.run([binary, "--reps", str(reps)], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if parts[0] == "info":
            info = " ".join(parts[1:])
        elif parts[0] == "note":
            notes.append(" ".join(parts[1:]))
        else:
            rows[parts[1]] = (float(parts[2]), float(parts[3]))
    return info, rows, notes


def fit(trainer, model, env, work):
    run_dir = os.path.join(work, model)
    subprocess.run(["rm", "-rf", run_dir], check=True)
    subprocess.run([trainer, "fit", "trainer.enable_progress_bar=false", "trainer.limit_val_batches=0",
                    "trainer.num_sanity_val_steps=0", "trainer.log_every_n_steps=20", "test_after_fit=false",
                    "hydra.run.dir=" + run_dir] + FIT_ARGS[model],
                   check=True, capture_output=True, cwd=work, env=dict(os.environ, **env))
    with open(os.path.join(run_dir, "metrics.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r.get("batches_per_sec")]
    rows = rows[1:] or rows  # the first interval holds the warm-up
    step = statistics.median(1.0 / float(r["batches_per_sec"]) for r in rows)
    flops = statistics.median(float(r["flops_per_sec"]) for r in rows)
    return step, flops


def parse_variant(text):
    label, _, assignments = text.partition(":")
    return label, dict(a.split("=", 1) for a in assignments.split())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roofline", required=True)
    ap.add_argument("--trainer", required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--kernel-reps", type=int, default=50)
    ap.add_argument("--variant", action="append", default=[], help='"label:ENV=VALUE ..." (the defaults always run)')
    ap.add_argument("--out")
    args = ap.parse_args()
    args.trainer = os.path.abspath(args.trainer)
    variants = [("defaults", {})] + [parse_variant(v) for v in args.variant]
    runs = []
    fits = {(m, label): [] for m in STEP_KERNELS for label, _ in variants}
    with tempfile.TemporaryDirectory() as work:
        for _ in range(args.reps):
            info, rows, notes = kernels(args.roofline, args.kernel_reps)
            runs.append(rows)
            for model in STEP_KERNELS:
                for label, env in variants:
                    fits[(model, label)].append(fit(args.trainer, model, env, work))
    names = list(runs[0])
    seconds = {n: statistics.median(r[n][1] for r in runs) for n in names}
    flops = {n: runs[0][n][0] for n in names}
    lines = ["# Roofline of the CPU training step (%s)" % datetime.datetime.now(datetime.timezone.utc).strftime(
                 "%Y-%m-%d %H:%M UTC"), "",
             "LibTorch: %s. %d repetitions, kernels and fits interleaved; a kernel's time is the median of %d calls, "
             "then the median over repetitions." % (info, args.reps, args.kernel_reps), "",
             "| kernel | ms | GFLOP/s |", "|---|---:|---:|"]
    lines += ["| %s | %.3f | %.1f |" % (n, seconds[n] * 1e3, flops[n] / seconds[n] / 1e9) for n in names
              if not n.startswith(("onednn-", "graph-"))]
    lines += ["", "| model | trainer | step floor (ms) | trainer step (ms), median [range] | floor / step | "
              "achievable GFLOP/s at the model's shapes | trainer GFLOP/s (its counter) | trainer / achievable |",
              "|---|---|---:|---:|---:|---:|---:|---:|"]
    for model, selected in STEP_KERNELS.items():
        step_names = [n for n in names if selected(n)]
        floor = sum(seconds[n] for n in step_names)
        achievable = sum(flops[n] for n in step_names) / floor / 1e9
        for label, _ in variants:
            steps = [s for s, _ in fits[(model, label)]]
            counted = statistics.median(f for _, f in fits[(model, label)]) / 1e9
            step = statistics.median(steps)
            lines.append("| %s | %s | %.2f | %.2f [%.2f-%.2f] | %.0f %% | %.1f | %.1f | %.0f %% |" % (
                model, label, floor * 1e3, step * 1e3, min(steps) * 1e3, max(steps) * 1e3, 100 * floor / step,
                achievable, counted, 100 * counted / achievable))
    lines += ["", "Where the rest goes. Forward + backward in plain ATen (autograd; no optimizer, no data; %s), at the "
              "model's shapes and at tiny ones (the same operators on a few numbers):" % next(
                  (n.split(": ", 1)[1] for n in notes if n.startswith("graph rows:")), "-"), "",
              "| model | step floor (ms) | forward + backward, plain ATen (ms) | same operators, tiny shapes (ms) | "
              "trainer step (ms) | trainer step - plain ATen graph (ms) |", "|---|---:|---:|---:|---:|---:|"]
    for model, selected in STEP_KERNELS.items():
        floor = sum(seconds[n] for n in names if selected(n))
        step = statistics.median(s for s, _ in fits[(model, "defaults")])
        graph, tiny = seconds.get("graph-" + model), seconds.get("graph-%s-tiny" % model)
        if graph is not None and tiny is not None:
            lines.append("| %s | %.2f | %.2f | %.2f | %.2f | %.2f |" % (
                model, floor * 1e3, graph * 1e3, tiny * 1e3, step * 1e3, (step - graph) * 1e3))
    lines += ["", "Linear layers: the BLAS at::mm uses against oneDNN (at::mkldnn_linear and its gradients; the "
              "forward with the input already in oneDNN's layout, and with the conversions a model of dense tensors "
              "pays):", "", "| product | BLAS (ms) | oneDNN (ms) | oneDNN with conversions (ms) | oneDNN / BLAS |",
              "|---|---:|---:|---:|---:|"]
    for n in names:
        if n.startswith("onednn-") and not n.endswith("+conversions"):
            blas = n[len("onednn-"):]
            conv = seconds.get(n.replace("-forward", "-forward+conversions")) if n.endswith("-forward") else None
            if blas in seconds:
                lines.append("| %s | %.3f | %.3f | %s | %.2f |" % (
                    blas, seconds[blas] * 1e3, seconds[n] * 1e3, "%.3f" % (conv * 1e3) if conv else "-",
                    seconds[n] / seconds[blas]))
    lines += ["", "Notes from the kernel program:"] + ["- " + n for n in notes]
    text = "\n".join(lines)
    emit(text, args.out)


if __name__ == "__main__":
    sys.exit(main())
