"""CPU mixed precision (issue 22, point 4): `trainer fit precision=bf16-mixed` against `precision=32`
for model=mlp and model=cnn on Fashion-MNIST, speed and accuracy after the same steps. Run through
bench/cpu_precision.sh. (The cnn on channels-last was measured by hand: BENCHMARKS.md, "The cnn's
other half".)

bfloat16 pays on CPUs with AVX512-BF16 or AMX (oneDNN's bfloat16 kernels); without them ATen
converts to and from float32 around float32 arithmetic. The report names the CPU's flags so the
figures are read against the hardware they came from.

Per (model, variant), --reps runs interleaved (the order rotates each repetition). From each run's
metrics.csv: the step time (1 / batches_per_sec, median over the logging intervals after the
first) and the last val/acc (the same number of training steps for every variant).

  bench/cpu_precision.py --trainer build/debian/trainer [--reps 3] [--out F]
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

VARIANTS = [("mlp", "32", []), ("mlp", "bf16-mixed", []), ("cnn", "32", []), ("cnn", "bf16-mixed", [])]
MODEL_ARGS = {"mlp": ["model=mlp", "trainer.max_epochs=1"],
              "cnn": ["model=cnn", "trainer.max_epochs=1", "trainer.limit_train_batches=120"]}


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                return [x for x in ("avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile") if x in flags]
    return []


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def fit(trainer, model, precision, extra, work):
    run_dir = os.path.join(work, "run")
    subprocess.run(["rm", "-rf", run_dir], check=True)
    argv = [trainer, "fit", "precision=" + precision, "trainer.enable_progress_bar=false",
            "trainer.log_every_n_steps=20", "test_after_fit=false", "hydra.run.dir=" + run_dir] + \
        MODEL_ARGS[model] + extra
    done = subprocess.run(argv, capture_output=True, text=True, cwd=work)
    if done.returncode != 0:
        return None, None, (done.stderr or done.stdout).strip().splitlines()[-1:]
    with open(os.path.join(run_dir, "metrics.csv")) as f:
        rows = list(csv.DictReader(f))
    timed = [r for r in rows if r.get("batches_per_sec")]
    timed = timed[1:] or timed  # the first interval holds the warm-up
    step = statistics.median(1.0 / float(r["batches_per_sec"]) for r in timed)
    accs = [float(r["val/acc"]) for r in rows if r.get("val/acc")]
    return step, accs[-1] if accs else None, []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trainer", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    trainer = os.path.abspath(args.trainer)
    results = {v[:2]: [] for v in VARIANTS}
    errors = {}
    with tempfile.TemporaryDirectory() as work:
        for rep in range(args.reps):
            shift = rep % len(VARIANTS)
            for model, precision, extra in VARIANTS[shift:] + VARIANTS[:shift]:
                step, acc, error = fit(trainer, model, precision, extra, work)
                if error:
                    errors[(model, precision)] = error
                else:
                    results[(model, precision)].append((step, acc))
                print("rep %d %s %s: %s" % (rep, model, precision, error or "%.2f ms, val/acc %s" % (
                    step * 1e3, acc)), flush=True)
    lines = ["# CPU precision: bf16-mixed against 32 (%s)" % datetime.datetime.now(datetime.timezone.utc).strftime(
                 "%Y-%m-%d %H:%M UTC"), "",
             "CPU: %s; flags: %s. trainer: %s. %d repetitions, interleaved." % (
                 cpu_model(), ", ".join(cpu_flags()) or "-", trainer, args.reps), "",
             "| model | precision | step (ms), median [range] | step / float32's | val/acc after the same steps |",
             "|---|---|---:|---:|---:|"]
    for model, precision, _ in VARIANTS:
        runs = results[(model, precision)]
        if not runs:
            lines.append("| %s | %s | failed: %s | | |" % (model, precision, " ".join(errors.get((model, precision), []))))
            continue
        steps = [s for s, _ in runs]
        base = [s for s, _ in results[(model, "32")]]
        ratio = "%.2f" % (statistics.median(steps) / statistics.median(base)) if base else "-"
        accs = [a for _, a in runs if a is not None]
        lines.append("| %s | %s | %.2f [%.2f-%.2f] | %s | %s |" % (
            model, precision, statistics.median(steps) * 1e3, min(steps) * 1e3, max(steps) * 1e3, ratio,
            "%.4f" % statistics.median(accs) if accs else "-"))
    text = "\n".join(lines)
    emit(text, args.out)


if __name__ == "__main__":
    sys.exit(main())
