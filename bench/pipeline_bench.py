"""Pipeline parallelism (issue 21): how much of its schedule each stage spends idle, against the
theory, for m = 1, 2, 4, 8 micro-batches and both schedules. Run through bench/pipeline_bench.sh.

The model is an mlp on 32x32 synthetic samples, 1024-1024-1024-1707-10, cut at layers.5 (its third
Linear): the two stages then do about the same multiply-adds a step (stage 0 has no input gradient
to compute for its first layer). Each stage is one process with one intra-op thread on this
2-core machine; between them a ring in shared memory (trainer.pipeline.transport=shared_memory, what
auto picks on one host) and, side by side, Gloo over the loopback (transport=process_group). The trainer measures, per stage, its own compute
(forwards and backwards) and the wall time from each batch's start until its part of the batch is
done; the batch's schedule spans until the last stage is done (every stage starts a batch together,
after the previous step's agreement on stopping), and a stage's idle share is the part of that span
it did not compute (waiting for the other stage, and the sends and receives). GPipe's theory,
(p-1)/(m+p-1), holds for equal stage times; the trainer also plays the schedule out with each
stage's measured mean forward and backward times and free communication (the last column): what is
measured beyond that is the cost of moving activations and gradients and of stage times that vary
from one micro-batch to the next. Each configuration runs --reps times interleaved; medians.

Memory: an mlp 4096-4096-4096 (37.8 M parameters, Adam) trained by one process and by 2 stages
balanced by parameters; what each holds at the end of fit (parameters, gradients, optimizer state,
from the tensors themselves) and its peak resident memory (VmHWM), which also counts LibTorch's
own libraries and the data.

Balance: the cnn (channels 32, 64; hidden 128) and a resnet18 of width 16, each cut by parameter
count (trainer.pipeline.balance=parameters) and by measured time (balance=time), 8 micro-batches:
each stage's busy time and idle share, and the samples a second.

  bench/pipeline_bench.py --trainer build/debian/trainer [--reps 3] [--batches 40] [--batch-size 256]
                          [--only bubble,memory,balance] [--transports shared_memory,process_group] [--out F]
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


def set_batch_size(batch_size, batches):
    """The bubble's model with another batch (each micro-batch batch_size / m samples)."""
    MODEL[-2] = f"data.num_samples={max(20480, batch_size * batches)}"
    MODEL[-1] = f"data.batch_size={batch_size}"


LINE = re.compile(r"pipeline \((\w+), (\d+) micro-batches, ([0-9.]+) ms a batch\).*?would idle ([0-9.]+) %; "
                  r"these stages' forward and backward times would idle ([0-9.]+) % and ([0-9.]+) %\):(.*)")
STAGE = re.compile(r"stage (\d+) ([0-9.]+) % \(busy ([0-9.]+) ms a batch: forward ([0-9.]+), backward ([0-9.]+)\)")


def run(trainer, schedule, m, batches, workdir, one_process=False, transport="auto"):
    args = [trainer, "fit", *MODEL, "trainer.max_epochs=1", f"trainer.limit_train_batches={batches}",
            "trainer.limit_val_batches=0", "trainer.num_sanity_val_steps=0", "trainer.enable_progress_bar=false",
            "trainer.enable_checkpointing=false", "test_after_fit=false",
            f"trainer.log_every_n_steps={max(1, min(10, batches // 4))}",  # rates after the first interval
            f"hydra.run.dir={tempfile.mkdtemp(dir=workdir)}"]
    if not one_process:
        args += ["trainer.devices=2", "trainer.strategy=pipeline", "trainer.pipeline.split_points=[layers.5]",
                 f"trainer.pipeline.microbatches={m}", f"trainer.pipeline.schedule={schedule}",
                 f"trainer.pipeline.transport={transport}"]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"pipeline_bench: {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    rates = [float(x) for x in re.findall(r" ([0-9]+) samples/s", done.stderr)][1:]  # after the first interval
    result = {"rate": statistics.median(rates) if rates else float("nan")}
    found = LINE.search(done.stderr)
    if found:
        result["span"] = float(found.group(3))
        result["theory"] = float(found.group(4))
        result["implied"] = (float(found.group(5)), float(found.group(6)))
        result["stages"] = [(float(i), float(b), float(f), float(w)) for _, i, b, f, w in STAGE.findall(found.group(7))]
    return result


HELD = re.compile(r"parameters ([0-9.]+) MiB, gradients ([0-9.]+) MiB, optimizer state ([0-9.]+) MiB; "
                  r"peak resident memory ([0-9.]+) MiB")


def fit(trainer, args, workdir):
    args = [trainer, "fit", *args, "trainer.enable_progress_bar=false", "trainer.enable_checkpointing=false",
            "test_after_fit=false", "trainer.num_sanity_val_steps=0", "trainer.limit_val_batches=0",
            f"hydra.run.dir={tempfile.mkdtemp(dir=workdir)}"]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"pipeline_bench: {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done.stderr


def memory(trainer, workdir):
    model = ["model=mlp", "model.hidden_sizes=[4096,4096,4096]", "model.dropout=0", "data=synthetic",
             "data.image_shape=[1,32,32]", "data.num_samples=2048", "data.batch_size=64", "optimizer=adam",
             "trainer.max_epochs=1", "trainer.limit_train_batches=4"]
    one = HELD.findall(fit(trainer, model, workdir))
    two = HELD.findall(fit(trainer, model + ["trainer.devices=2", "trainer.strategy=pipeline"], workdir))
    rows = [("one process, the whole model", one[0])] + [(f"pipeline stage {i}", h) for i, h in enumerate(two)]
    whole = sum(float(x) for x in one[0][:3])
    lines = ["## Memory per stage", "",
             f"`{' '.join(model)}`; 2 stages balanced by parameters against one process.", "",
             "| process | parameters MiB | gradients MiB | optimizer state MiB | held MiB | share of one process "
             "| peak resident MiB |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, h in rows:
        held = sum(float(x) for x in h[:3])
        lines.append(f"| {name} | {h[0]} | {h[1]} | {h[2]} | {held:.1f} | {100 * held / whole:.0f} % | {h[3]} |")
    return lines


def balance(trainer, reps, batches, workdir):
    common = ["data=synthetic", "data.num_samples=8192", "data.batch_size=64", "trainer.max_epochs=1",
              f"trainer.limit_train_batches={batches}", "trainer.log_every_n_steps=10", "trainer.devices=2",
              "trainer.strategy=pipeline", "trainer.pipeline.microbatches=8"]
    lines = ["## Cut by parameters or by measured time", "",
             f"`{' '.join(common)}`, {batches} batches a run, {reps} runs each (medians).", "",
             "| model | balance | stage 0 | stage 1 | busy ms/batch (0, 1) | idle % (0, 1) | samples/s |",
             "|---|---|---|---|---:|---:|---:|"]
    for model in (["model=cnn"], ["model=resnet", "model.depth=18", "model.width=16"]):
        lines += balance_rows(trainer, reps, " ".join(model), model + common, workdir)
    return lines


def balance_rows(trainer, reps, name, model, workdir):
    lines = []
    for mode in ("parameters", "time"):
        runs = []
        for _ in range(reps):
            err = fit(trainer, model + [f"trainer.pipeline.balance={mode}"], workdir)
            stages = re.findall(r"stage (\d) of 2: ([^(]+) \(", err)
            found = LINE.search(err)
            rates = [float(x) for x in re.findall(r" ([0-9]+) samples/s", err)][1:]
            runs.append((stages, [(float(i), float(b)) for _, i, b, _, _ in STAGE.findall(found.group(7))],
                         statistics.median(rates) if rates else float("nan")))
        stages = runs[0][0]
        busy = [statistics.median(r[1][s][1] for r in runs) for s in (0, 1)]
        idle = [statistics.median(r[1][s][0] for r in runs) for s in (0, 1)]
        lines.append(f"| `{name}` | {mode} | "
                     f"{stages[0][1].strip()} | {stages[1][1].strip()} | {busy[0]:.1f}, {busy[1]:.1f} | "
                     f"{idle[0]:.1f}, {idle[1]:.1f} | {statistics.median(r[2] for r in runs):.0f} |")
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trainer", required=True)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=256,
                        help="the bubble's batch (micro-batches of batch-size / m samples)")
    parser.add_argument("--only", default="bubble,memory,balance")
    parser.add_argument("--transports", default="shared_memory,process_group",
                        help="the bubble's trainer.pipeline.transport values, side by side")
    parser.add_argument("--out")
    a = parser.parse_args()
    parts = a.only.split(",")
    set_batch_size(a.batch_size, a.batches)
    lines = [f"# Pipeline parallelism, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC", "",
             f"trainer {a.trainer}, {os.cpu_count()} cores.", ""]
    with tempfile.TemporaryDirectory() as work:
        if "bubble" in parts:
            lines += bubble(a, work) + [""]
        if "memory" in parts:
            lines += memory(a.trainer, work) + [""]
        if "balance" in parts:
            lines += balance(a.trainer, a.reps, a.batches, work) + [""]
    emit("\n".join(lines), a.out)


def bubble(a, work):
    transports = a.transports.split(",")
    configs = [(s, m, t) for s in ("gpipe", "1f1b") for m in (1, 2, 4, 8) for t in transports]
    results = {c: [] for c in configs}
    single = []
    for rep in range(a.reps):
        order = configs[rep % len(configs):] + configs[:rep % len(configs)]
        single.append(run(a.trainer, "", 0, a.batches, work, one_process=True)["rate"])
        for c in order:
            results[c].append(run(a.trainer, c[0], c[1], a.batches, work, transport=c[2]))
    lines = ["## Bubble", "",
             f"`{' '.join(MODEL)}`, 2 stages cut at layers.5, {a.batches} batches a run, {a.reps} runs each "
             f"(medians, the configurations interleaved); trainer.pipeline.transport "
             f"{' and '.join(transports)} (shared_memory: a ring in /dev/shm between the two processes; "
             f"process_group: Gloo over the loopback).", "",
             f"One process, the whole model: {statistics.median(single):.0f} samples/s.", "",
             "| schedule | m | transport | theory (equal stages) | idle stage 0 | idle stage 1 | beyond the theory "
             "(the larger) | forward + backward ms/batch (stage 0; stage 1) | the schedule for these times (0, 1) "
             "| ms a batch | samples/s |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (schedule, m, transport) in configs:
        runs = [r for r in results[(schedule, m, transport)] if "stages" in r]
        idle0 = statistics.median(r["stages"][0][0] for r in runs)
        idle1 = statistics.median(r["stages"][1][0] for r in runs)
        fw = [statistics.median(r["stages"][s][2] for r in runs) for s in (0, 1)]
        bw = [statistics.median(r["stages"][s][3] for r in runs) for s in (0, 1)]
        implied = [statistics.median(r["implied"][s] for r in runs) for s in (0, 1)]
        theory = runs[0]["theory"]
        lines.append(f"| {schedule} | {m} | {transport} | {theory:.1f} % | {idle0:.1f} % | {idle1:.1f} % | "
                     f"{max(idle0, idle1) - theory:+.1f} | "
                     f"{fw[0]:.1f} + {bw[0]:.1f}; {fw[1]:.1f} + {bw[1]:.1f} | "
                     f"{implied[0]:.1f}, {implied[1]:.1f} % | {statistics.median(r['span'] for r in runs):.1f} | "
                     f"{statistics.median(r['rate'] for r in results[(schedule, m, transport)]):.0f} |")
    return lines


if __name__ == "__main__":
    main()
