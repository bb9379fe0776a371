"""Data-parallel benchmark on CPU: `trainer fit trainer.devices=2` (2 ranks, Gloo, each rank half
the batch and half the cores) against 1 rank with the whole batch and every core, same model,
data, seed and global batch. Interleaved repetitions; reports training samples/s of the last
epoch, the ratio 2 ranks / 1 rank, and the reducer's own account of the all-reduce (time in
flight, time waited for after backward, share hidden behind backward)."""
import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile

EPOCH = re.compile(r"epoch (\d+) done in ([0-9.]+) s")
REDUCE = re.compile(r"gradient all-reduce: .*")


def run(trainer, args, workdir):
    proc = subprocess.run([trainer, "fit", *args, f"hydra.run.dir={workdir}"], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"ddp_bench: trainer failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    epochs = {int(m.group(1)): float(m.group(2)) for m in EPOCH.finditer(proc.stderr)}
    reduce = REDUCE.search(proc.stderr)
    return epochs, reduce.group(0) if reduce else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trainer", required=True)
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--batch", type=int, default=128, help="global batch size")
    parser.add_argument("--out", required=True)
    a = parser.parse_args()
    common = [f"model={a.model}", f"trainer.max_epochs={a.epochs}", "test_after_fit=false",
              "trainer.enable_progress_bar=false"]
    cases = {
        "1 rank": common + [f"data.batch_size={a.batch}"],
        "2 ranks (Gloo)": common + [f"data.batch_size={a.batch // 2}", "trainer.devices=2"],
    }
    rates = {name: [] for name in cases}
    reduce_lines = []
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(a.reps):
            order = list(cases) if rep % 2 == 0 else list(reversed(cases))
            for name in order:
                epochs, reduce = run(a.trainer, cases[name], os.path.join(tmp, f"{rep}-{name[0]}"))
                last = max(epochs)
                rates[name].append(epochs[last])  # seconds of the last epoch's training
                if reduce:
                    reduce_lines.append(reduce)
                print(f"rep {rep + 1} {name}: epoch {last} trained in {epochs[last]:.2f} s; {reduce}", flush=True)
    one = statistics.median(rates["1 rank"])
    two = statistics.median(rates["2 ranks (Gloo)"])
    samples = 54000  # Fashion-MNIST's training split with the shipped val_fraction 0.1
    lines = [
        f"# ddp_bench {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC",
        f"model {a.model}, global batch {a.batch}, {a.epochs} epochs (last one measured), {a.reps} repetitions, "
        f"load at start {os.getloadavg()[0]:.2f}",
        "",
        "| case | last epoch's training (median) | samples/s | ratio to 1 rank |",
        "|---|---:|---:|---:|",
        f"| 1 rank, {os.cpu_count()} threads | {one:.2f} s | {samples / one:,.0f} | - |",
        f"| 2 ranks (Gloo), half the batch and half the cores each | {two:.2f} s | {samples / two:,.0f} | "
        f"{one / two:.2f} |",
        "",
        "All-reduce, as the reducer reports it (rank 0, per run):",
        *[f"- {line}" for line in reduce_lines],
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    with open(a.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
