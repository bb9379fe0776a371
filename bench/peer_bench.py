"""`trainer fit` against a plain PyTorch loop, PyTorch Lightning and the hand-written LibTorch loop
(bench/hand_loop/hand_loop.cpp, on CPU), on CPU (run through bench/peer_bench.sh, which makes the
Python environment and the wheel builds of trainer and the hand loop).

Each repetition runs every (model, case) once, in an order rotated from one repetition to the
next, so load changes on the machine hit all cases alike; ratios are taken within a repetition
(trainer / peer of the same repetition and model) and summarised by their median. Every program
writes stdout and stderr into one pipe read here (progress bars on, as a user gets them when the
output goes to a file or pipe).

Measured per process:
  samples/s   training samples / training time, over epochs >= 1 (epoch 0 is warm-up). Training
              time is each program's own: the trainer's "epoch N done in S s" (taken after the
              last training batch, before validation), the hand loop's "train T s" (the same span),
              the plain loop's time from the epoch's
              shuffle to its last optimizer step, Lightning's from on_train_epoch_start to the
              last on_train_batch_end. Validation, checkpoints and logging between epochs are
              excluded for all three.
  first step  from just before Popen to the arrival of the program's "first training step done"
              line on the pipe: start-up, data loading, model building and the first step.
  peak RSS    ru_maxrss of the finished child (os.wait4), MiB.
  wall        the whole process (the trainer with test_after_fit=false: the peers do not test).
  MFU         the trainer's mfu column of metrics.csv (median of the logged values), when its build
              logs one; blank otherwise.
--device cuda runs the same cases on the GPU (trainer.accelerator=cuda; the peers' --device cuda),
once per precision in --precisions (trainer precision=P, the peers' --precision P); ratios compare
runs of the same model and precision. --summary appends one JSON line per ratio for bench/suite.sh.
Python standard library only.
"""
import csv
import argparse
import datetime
import json
import math
import os
import re
import select
import shutil
import statistics
import subprocess
import tempfile
import time
from typing import Dict, List, Optional

FIRST_STEP = re.compile(rb"first training step done ([0-9.]+) s after the")
TRAINER_EPOCH = re.compile(r"\]\[trainer\]\[info\] - epoch (\d+) done in ([0-9.]+) s")
TUNING = re.compile(r"runtime tuning: (.*)")
PEER_EPOCH = re.compile(r"epoch (\d+) train ([0-9.]+) s samples (\d+)")
HAND_EPOCH = re.compile(r"epoch (\d+) done in [0-9.]+ s \(train ([0-9.]+) s, .* samples (\d+)")
TRAIN_SAMPLES, BATCH = 54000, 128


class Case:
    def __init__(self, name: str, kind: str, env: Dict[str, str], note: str):
        self.name, self.kind, self.env, self.note = name, kind, env, note


CASES = [
    Case("trainer", "trainer", {}, "trainer fit, defaults (bar, metrics.csv + TensorBoard, checkpoints)"),
    Case("plain PyTorch", "plain", {}, "bench/peers/plain_loop.py"),
    Case("Lightning", "lightning", {}, "bench/peers/lightning_loop.py"),
    Case("hand-written LibTorch", "hand", {}, "bench/hand_loop/hand_loop.cpp (LibTorch's Adam, the trainer's start-up tuning)"),
    Case("trainer, malloc tuning off", "trainer", {"TRAINER_MALLOC_TUNING": "0"}, "TRAINER_MALLOC_TUNING=0"),
    Case("trainer, LibTorch default threads", "trainer", {"TRAINER_INTRA_OP_THREADS": "0"},
         "TRAINER_INTRA_OP_THREADS=0"),
]


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def argv_for(case: Case, model: str, precision: str, opts, run_dir: str) -> List[str]:
    if case.kind == "trainer":
        argv = [opts.trainer, "fit", f"model={model}", f"trainer.max_epochs={opts.epochs}",
                f"hydra.run.dir={run_dir}/run", f"trainer.accelerator={opts.device}", f"precision={precision}",
                f"data.root={opts.root}",
                "test_after_fit=false"]  # the peers do not test either
        if opts.limit_train_batches:
            argv.append(f"trainer.limit_train_batches={opts.limit_train_batches}")
        if opts.limit_val_batches:
            argv += [f"trainer.limit_val_batches={opts.limit_val_batches}",
                     f"trainer.limit_test_batches={opts.limit_val_batches}"]
        return argv
    if case.kind == "hand":
        return [opts.hand, "--model", model, "--epochs", str(opts.epochs), "--threads", str(opts.threads),
                "--root", opts.root, "--out", run_dir, "--limit-train-batches", str(opts.limit_train_batches)]
    script = "plain_loop.py" if case.kind == "plain" else "lightning_loop.py"
    return [opts.python, os.path.join(opts.peers, script), "--model", model, "--epochs", str(opts.epochs),
            "--threads", str(opts.threads), "--root", opts.root, "--out", os.path.join(run_dir, "out"),
            "--limit-train-batches", str(opts.limit_train_batches),
            "--limit-val-batches", str(opts.limit_val_batches), "--device", opts.device, "--precision", precision]


def trainer_mfu(run_dir: str) -> Optional[float]:
    """Median of the mfu column of the trainer's metrics.csv, if its build logs one."""
    path = os.path.join(run_dir, "run", "metrics.csv")
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        values = [float(row["mfu"]) for row in csv.DictReader(f) if row.get("mfu") not in (None, "")]
    return statistics.median(values) if values else None


def run_case(case: Case, model: str, precision: str, opts, workdir: str, rep: int) -> dict:
    run_dir = tempfile.mkdtemp(prefix="run-", dir=workdir)
    argv = argv_for(case, model, precision, opts, run_dir)
    env = dict(os.environ)
    for knob in ("TRAINER_MALLOC_TUNING", "TRAINER_INTRA_OP_THREADS"):
        env.pop(knob, None)
    env.update(case.env)
    record = {"case": case.name, "model": model, "precision": precision, "device": opts.device, "rep": rep, "load_before": load(), "argv": argv, "env": case.env}
    chunks: List[bytes] = []
    first_ext: Optional[float] = None
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=run_dir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    fd = proc.stdout.fileno()
    seen = bytearray()
    while True:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        if first_ext is None:
            seen += chunk
            if FIRST_STEP.search(seen):
                first_ext = time.perf_counter() - start
            else:
                del seen[:-200]
    _, status, usage = os.wait4(proc.pid, 0)
    record.update(rc=os.waitstatus_to_exitcode(status), wall_s=time.perf_counter() - start,
                  cpu_s=usage.ru_utime + usage.ru_stime, peak_rss_mib=usage.ru_maxrss / 1024,
                  first_step_s=first_ext, load_after=load())
    output = b"".join(chunks).decode(errors="replace")
    m = FIRST_STEP.search(output.encode())
    record["first_step_self_s"] = float(m.group(1)) if m else None
    epochs: List[dict] = []
    if case.kind == "trainer":
        log_path = os.path.join(run_dir, "run", "trainer.log")
        text = open(log_path, encoding="utf-8", errors="replace").read() if os.path.exists(log_path) else ""
        m = TUNING.search(text)
        record["tuning"] = m.group(1) if m else None
        for knob in case.env:
            if knob not in (record["tuning"] or ""):
                # a trainer built before the knobs existed: the row would repeat the default one
                record["error"] = f"this trainer ignores {knob} (its log: runtime tuning: {record['tuning']})"
        batches = math.ceil(TRAIN_SAMPLES / BATCH)
        samples = TRAIN_SAMPLES if not opts.limit_train_batches or opts.limit_train_batches >= batches \
            else opts.limit_train_batches * BATCH
        for em in TRAINER_EPOCH.finditer(text):
            epochs.append({"epoch": int(em.group(1)), "train_s": float(em.group(2)), "samples": samples})
        record["mfu"] = trainer_mfu(run_dir)
    else:
        for em in (HAND_EPOCH if case.kind == "hand" else PEER_EPOCH).finditer(output):
            epochs.append({"epoch": int(em.group(1)), "train_s": float(em.group(2)), "samples": int(em.group(3))})
    record["epochs"] = epochs
    later = [e for e in epochs if e["epoch"] >= 1] or epochs  # one epoch only: epoch 0 is all there is
    record["samples_per_s"] = (sum(e["samples"] for e in later) / sum(e["train_s"] for e in later)
                               if later and sum(e["train_s"] for e in later) > 0 else None)
    if record["rc"] != 0 or len(epochs) != opts.epochs:
        record["error"] = output[-3000:]
    if "error" in record:
        record["output_tail"] = output[-3000:]
    shutil.rmtree(run_dir, ignore_errors=True)
    return record


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec):
    return "n/a" if x is None else format(x, spec)


def ratios_of(records: List[dict], model: str, precision: str, case: Case) -> List[float]:
    """trainer's samples/s over this case's, per repetition (same model and precision)."""
    ratios = []
    for r in records:
        if (r["model"], r["precision"], r["case"]) != (model, precision, case.name) or "error" in r:
            continue
        t = [x for x in records if (x["model"], x["precision"], x["rep"], x["case"]) ==
             (model, precision, r["rep"], "trainer") and "error" not in x]
        if t and t[0]["samples_per_s"] and r["samples_per_s"]:
            ratios.append(t[0]["samples_per_s"] / r["samples_per_s"])
    return ratios


def table(records: List[dict], cases: List[Case], models: List[str], precisions: List[str]) -> str:
    mfu = any(r.get("mfu") is not None for r in records)
    lines = ["| model | precision | case | samples/s | first step (s) | peak RSS (MiB) | wall (s) | trainer / this "
             "(samples/s) |" + (" MFU |" if mfu else ""),
             "|---|---|---|---:|---:|---:|---:|---:|" + ("---:|" if mfu else "")]
    for model in models:
        for precision in precisions:
            for case in cases:
                runs = [r for r in records if (r["model"], r["precision"], r["case"]) == (model, precision, case.name)
                        and "error" not in r]
                ratios = ratios_of(records, model, precision, case)
                ratio = "" if case.name == "trainer" else fmt(med(ratios), ".2f") + (
                    f" ({min(ratios):.2f}-{max(ratios):.2f})" if len(ratios) > 1 else "")
                mfu_cell = (" " + fmt(med([r.get("mfu") for r in runs]), ".3f").replace("n/a", "") + " |") if mfu else ""
                lines.append(f"| {model} | {precision} | {case.name} | {fmt(med([r['samples_per_s'] for r in runs]), ',.0f')} | "
                             f"{fmt(med([r['first_step_s'] for r in runs]), '.2f')} | "
                             f"{fmt(med([r['peak_rss_mib'] for r in runs]), ',.0f')} | "
                             f"{fmt(med([r['wall_s'] for r in runs]), '.1f')} | {ratio} |{mfu_cell}")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser()
    for name in ("trainer", "python", "peers", "root", "out", "models"):
        p.add_argument("--" + name, required=True)
    for name in ("epochs", "reps", "threads", "limit-train-batches", "limit-val-batches"):
        p.add_argument("--" + name, type=int, required=True)
    p.add_argument("--hand", help="the hand_loop binary (built against the same LibTorch as --trainer)")
    p.add_argument("--cases", default="all", choices=["all", "main", "step", "libtorch"],
                   help="all; main: trainer, plain loop, Lightning, hand loop; step: trainer, plain loop, hand loop; "
                        "libtorch: trainer and hand loop (for a LibTorch the Python peers do not have)")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--precisions", default="32", help="comma-separated: 32, 16-mixed, bf16-mixed")
    p.add_argument("--summary", help="append one JSON line per ratio here (bench/suite.sh)")
    opts = p.parse_args()
    # the programs run in their own directories
    opts.peers, opts.root, opts.trainer = (os.path.abspath(x) for x in (opts.peers, opts.root, opts.trainer))
    models = [m for m in opts.models.split(",") if m]
    precisions = [x for x in opts.precisions.split(",") if x]
    # The tuning rows are about the CPU start-up tuning; on CUDA only the three Python-peer programs run.
    if opts.hand:
        opts.hand = os.path.abspath(opts.hand)
    by_kind = {"all": CASES, "main": CASES[:4], "step": [CASES[0], CASES[1], CASES[3]],
               "libtorch": [CASES[0], CASES[3]]}
    cases = by_kind[opts.cases] if opts.device == "cpu" else CASES[:3]
    if not opts.hand:
        cases = [c for c in cases if c.kind != "hand"]
    workdir = tempfile.mkdtemp(prefix="peer-bench-")
    records: List[dict] = []
    jobs = [(m, x, c) for m in models for x in precisions for c in cases]
    started = datetime.datetime.now(datetime.timezone.utc)
    try:
        for rep in range(opts.reps):
            shift = rep % len(jobs)
            for model, precision, case in jobs[shift:] + jobs[:shift]:
                r = run_case(case, model, precision, opts, workdir, rep)
                records.append(r)
                status = "FAILED" if "error" in r else f"{fmt(r['samples_per_s'], ',.0f')} samples/s"
                print(f"rep {rep} {model} {precision} {case.name}: {status}, first step {fmt(r['first_step_s'], '.2f')} s, "
                      f"peak RSS {r['peak_rss_mib']:,.0f} MiB, load {r['load_before']}", flush=True)
                if "error" in r:
                    print(r["error"], flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    tunings = sorted({f"{r['case']}: {r['tuning']}" for r in records if r.get("tuning")})
    head = (f"peer benchmark {started:%Y-%m-%d %H:%M} UTC, device {opts.device}, {opts.epochs} epochs x {opts.reps} reps, "
            f"{opts.threads} threads, cores {os.cpu_count()}, trainer {opts.trainer}, python {opts.python}"
            + (f", limit_train_batches {opts.limit_train_batches}" if opts.limit_train_batches else "")
            + (f", limit_val_batches {opts.limit_val_batches}" if opts.limit_val_batches else ""))
    text = head + f"\nload average at start {records[0]['load_before'] if records else '-'}, at end {load()}\n\n" + \
        table(records, cases, models, precisions) + "\n\nmedians over repetitions; ratio = trainer's " \
        "samples/s / this row's, per repetition, median (range)\n" + "\n".join(tunings) + "\n"
    print("\n" + text)
    with open(opts.out, "w") as f:
        f.write(text + "\nraw runs (JSON, one a line):\n")
        for r in records:
            f.write(json.dumps(r) + "\n")
    print(f"written to {opts.out}")
    if opts.summary:
        with open(opts.summary, "a") as f:
            for model in models:
                for precision in precisions:
                    for case in cases[1:]:
                        ratios = ratios_of(records, model, precision, case)
                        f.write(json.dumps({
                            "bench": "peers" if opts.device == "cpu" else "gpu",
                            "row": f"{model}{'' if opts.device == 'cpu' else ' ' + precision}: trainer / {case.name}",
                            "measure": "samples/s", "ratio": med(ratios), "runs": len(ratios),
                            "better": "higher", "target": 1.0 if case.kind != "trainer" else None}) + "\n")


if __name__ == "__main__":
    main()
