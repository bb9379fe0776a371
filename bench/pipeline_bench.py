"""Pipeline parallelism (issue 21): how much of its schedule each stage spends idle, against the
theory, for m = 1, 2, 4, 8 micro-batches and both schedules. Run through bench/pipeline_bench.sh.

The model is an mlp on 32x32 synthetic samples, 1024-1024-1024-1707-10, cut at layers.5 (its third
Linear): the two stages then do about the same multiply-adds a step (stage 0 has no input gradient
to compute for its first layer). Each stage is one process with one intra-op thread on this
2-core machine, Gloo over loopback between them. The trainer measures, per stage, its own compute
(forwards and backwards) and the wall time from each batch's start until its part of the batch is
done; the batch's schedule spans until the last stage is done (every stage starts a batch together,
after the previous step's agreement on stopping), and a stage's idle share is the part of that span
it did not compute (waiting for the other stage, and the sends and receives). GPipe's theory, (p-1)/(m+p-1), holds for equal stage
times; for the measured stage times the bottleneck stage's theory is
  1 - m t_max / ((m - 1) t_max + sum t)     (t: a stage's busy time per micro-batch)
which the report gives beside it. Each configuration runs --reps times interleaved; medians.

  bench/pipeline_bench.py --trainer build/debian/trainer [--reps 3] [--batches 40] [--out F]
"""
import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile

from report_out import emit

MODEL = ["model=mlp", "model.hidden_sizes=[1024,1024,1707]", "model.dropout=0", "data=synthetic",
         "data.image_shape=[1,32,32]", "data.num_samples=20480", "data.batch_size=256"]
LINE = re.compile(r"pipeline \((\w+), (\d+) micro-batches, ([0-9.]+) ms a batch\).*?would idle ([0-9.]+) %\):(.*)")
STAGE = re.compile(r"stage (\d+) ([0-9.]+) % \(busy ([0-9.]+) ms a batch\)")


def run(trainer, schedule, m, batches, workdir, one_process=False):
    args = [trainer, "fit", *MODEL, "trainer.max_epochs=1", f"trainer.limit_train_batches={batches}",
            "trainer.limit_val_batches=0", "trainer.num_sanity_val_steps=0", "trainer.enable_progress_bar=false",
            "trainer.enable_checkpointing=false", "test_after_fit=false", "trainer.log_every_n_steps=10",
            f"hydra.run.dir={tempfile.mkdtemp(dir=workdir)}"]
    if not one_process:
        args += ["trainer.devices=2", "trainer.strategy=pipeline", "trainer.pipeline.split_points=[layers.5]",
                 f"trainer.pipeline.microbatches={m}", f"trainer.pipeline.schedule={schedule}"]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"pipeline_bench: {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    rates = [float(x) for x in re.findall(r" ([0-9]+) samples/s", done.stderr)][1:]  # after the first interval
    result = {"rate": statistics.median(rates) if rates else float("nan")}
    found = LINE.search(done.stderr)
    if found:
        result["span"] = float(found.group(3))
        result["theory"] = float(found.group(4))
        result["stages"] = [(float(i), float(b)) for _, i, b in STAGE.findall(found.group(5))]
    return result


def bottleneck_theory(busy_ms, m):
    t = [b / m for b in busy_ms]
    return 100.0 * (1.0 - m * max(t) / ((m - 1) * max(t) + sum(t)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trainer", required=True)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--out")
    a = parser.parse_args()
    configs = [(s, m) for s in ("gpipe", "1f1b") for m in (1, 2, 4, 8)]
    results = {c: [] for c in configs}
    single = []
    with tempfile.TemporaryDirectory() as work:
        for rep in range(a.reps):
            order = configs[rep % len(configs):] + configs[:rep % len(configs)]
            single.append(run(a.trainer, "", 0, a.batches, work, one_process=True)["rate"])
            for c in order:
                results[c].append(run(a.trainer, c[0], c[1], a.batches, work))
    lines = [f"# Pipeline bubble, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC", "",
             f"`{' '.join(MODEL)}`, 2 stages cut at layers.5, {a.batches} batches a run, {a.reps} runs each "
             f"(medians), trainer {a.trainer}, {os.cpu_count()} cores.", "",
             f"One process, the whole model: {statistics.median(single):.0f} samples/s.", "",
             "| schedule | m | theory (equal stages) | idle stage 0 | idle stage 1 | busy ms/batch (0, 1) "
             "| theory for these stage times | samples/s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (schedule, m) in configs:
        runs = [r for r in results[(schedule, m)] if "stages" in r]
        idle0 = statistics.median(r["stages"][0][0] for r in runs)
        idle1 = statistics.median(r["stages"][1][0] for r in runs)
        busy = [statistics.median(r["stages"][s][1] for r in runs) for s in (0, 1)]
        lines.append(f"| {schedule} | {m} | {runs[0]['theory']:.1f} % | {idle0:.1f} % | {idle1:.1f} % | "
                     f"{busy[0]:.1f}, {busy[1]:.1f} | {bottleneck_theory(busy, m):.1f} % | "
                     f"{statistics.median(r['rate'] for r in results[(schedule, m)]):.0f} |")
    emit("\n".join(lines), a.out)


if __name__ == "__main__":
    main()
