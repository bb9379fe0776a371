"""Per-epoch time of `trainer fit` (default configuration) against a hand-written LibTorch loop.

Run through bench/engine_bench.sh (which builds the hand loop). Each repetition runs every case
once, in an order rotated from one repetition to the next, so load changes on the machine hit
all cases alike; ratios are taken within a repetition (trainer case / hand loop of the same
repetition) and summarised by their median and range. Every process runs under
`script -qefc CMD /dev/null`, so its stdout/stderr is a terminal (the trainer's progress bar is
on, as for a user at a terminal) and both programs pay the same launch path.

Measured per process:
  period     per-epoch time: between consecutive "epoch N done" lines, i.e. epoch N's training
             and validation plus everything after epoch N-1's validation (metric logging,
             callbacks, checkpoint writes, loader restart). The trainer's from its log timestamps
             (ms), the hand loop's from its steady clock. This is the headline figure.
  train      the program's own training time of the epoch. The trainer's "epoch N done in S s"
             is taken after the last training batch and BEFORE validation (src/engine/trainer.cpp
             computes it before evaluate()), so S is compared with the hand loop's train time.
  rest       period - train: validation + between-epoch work (+ the trainer's log line I/O)
  CPU/epoch  user + system time of the program (all threads) between the arrivals of two
             consecutive "epoch N done" lines on the terminal (/proc/PID/stat, 10 ms ticks):
             unlike wall time, hardly changed by how much of the CPU other processes take
  first step the program's own "first training step done X s after the process started"
             (/proc start time, 10 ms ticks), and externally: from just before the driver
             starts `script` to the arrival of that line on the terminal
  wall, cpu  of the whole process (the trainer also tests the best checkpoint after fit)
Epoch 0 is warm-up: the per-run figures are means over epochs >= 1 (epoch 0's train time is
shown apart). samples/s = 54,000 training samples / period.
Python standard library only.
"""
import argparse
import datetime
import json
import os
import re
import select
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

FIRST_STEP = re.compile(rb"first training step done ([0-9.]+) s after the process started")
TRAINER_EPOCH = re.compile(
    r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]\[trainer\]\[info\] - epoch (\d+) done in ([0-9.]+) s")
HAND_EPOCH = re.compile(
    r"epoch (\d+) done in ([0-9.]+) s \(train ([0-9.]+) s, val ([0-9.]+) s\) at t=([0-9.]+) s")
HAND_SAVE = re.compile(r"epoch (\d+) saved in ([0-9.]+) s")
TRAIN_SAMPLES = 54000

LOG_TIME = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]")
STARTUP_MARKS = [("log_start", "output directory:"), ("engine_loaded", "runtime tuning:"),
                 ("model_built", "model: "), ("first_step", "first training step done")]
HAND_MAIN_CLOCK = re.compile(rb"\(clock ([0-9.]+) s since main\)")
EPOCH_LINE = re.compile(rb"epoch (\d+) done in ")
CLOCK_TICK = os.sysconf("SC_CLK_TCK")


def find_descendant(root_pid: int, exe: str) -> Optional[int]:
    """The process under `root_pid` (script -> shell -> program) running `exe`."""
    todo = [root_pid]
    while todo:
        pid = todo.pop()
        try:
            if os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath(exe):
                return pid
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            continue
    return None


def process_cpu(pid: int) -> Optional[float]:
    """user + system seconds of a live process (/proc/PID/stat fields 14 and 15)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICK
    except (OSError, IndexError, ValueError):
        return None


PASSIVE = {"OMP_WAIT_POLICY": "PASSIVE"}


class Case:
    def __init__(self, name: str, kind: str, args: List[str], env: Dict[str, str]):
        self.name, self.kind, self.args, self.env = name, kind, args, env
        self.runs: List[dict] = []


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run_case(case: Case, opts, workdir: str, rep: int) -> dict:
    run_dir = tempfile.mkdtemp(prefix="run-", dir=workdir)
    if case.kind == "trainer":
        argv = [opts.trainer, "fit", f"trainer.max_epochs={opts.epochs}", f"hydra.run.dir={run_dir}/run"] + case.args
    else:
        argv = [opts.hand, "--root", opts.root, "--epochs", str(opts.epochs), "--out", run_dir] + case.args
    env = dict(os.environ)
    env.update(case.env)
    record = {"case": case.name, "rep": rep, "load_before": load(), "argv": argv, "env": case.env}
    out_chunks: List[bytes] = []
    first_ext: Optional[float] = None
    start = time.perf_counter()
    proc = subprocess.Popen(["script", "-qefc", shlex.join(argv), "/dev/null"], cwd=run_dir, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    fd = proc.stdout.fileno()
    buffer = bytearray()
    scan = 0
    target: Optional[int] = None
    epoch_cpu: Dict[int, float] = {}
    while True:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        now = time.perf_counter()
        out_chunks.append(chunk)
        buffer += chunk
        if first_ext is None and FIRST_STEP.search(buffer, max(0, scan - 200)):
            first_ext = now - start
        if target is None:
            target = find_descendant(proc.pid, argv[0])
        # CPU time of the program (all its threads, dead ones included) when each epoch line
        # arrives: a per-epoch CPU figure that a busy machine distorts far less than wall time.
        for em in EPOCH_LINE.finditer(buffer, max(0, scan - 200)):
            e = int(em.group(1))
            if e not in epoch_cpu and target is not None:
                cpu = process_cpu(target)
                if cpu is not None:
                    epoch_cpu[e] = cpu
        scan = len(buffer)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    output = b"".join(out_chunks)
    record.update(rc=proc.returncode, wall_s=wall, cpu_s=usage.ru_utime + usage.ru_stime,
                  first_step_ext_s=first_ext, load_after=load())
    m = FIRST_STEP.search(output)
    record["first_step_self_s"] = float(m.group(1)) if m else None
    m = HAND_MAIN_CLOCK.search(output)
    if m:
        record["first_step_since_main_s"] = float(m.group(1))
    epochs: List[dict] = []
    if case.kind == "trainer":
        log_path = os.path.join(run_dir, "run", "trainer.log")
        text = open(log_path, encoding="utf-8", errors="replace").read() if os.path.exists(log_path) else ""
        marks = {}
        for line in text.splitlines():
            lm = LOG_TIME.match(line)
            if lm:
                t = datetime.datetime.strptime(lm.group(1), "%Y-%m-%d %H:%M:%S").timestamp() + int(lm.group(2)) / 1000
                for key, needle in STARTUP_MARKS:
                    if key not in marks and needle in line:
                        marks[key] = t
        if "log_start" in marks:
            # seconds from the launcher's first log line (config composed, run dir made) to each mark
            record["startup_marks_s"] = {k: round(v - marks["log_start"], 3) for k, v in marks.items()}
        for line in text.splitlines():
            em = TRAINER_EPOCH.match(line)
            if em:
                t = datetime.datetime.strptime(em.group(1), "%Y-%m-%d %H:%M:%S").timestamp() + int(em.group(2)) / 1000
                epochs.append({"epoch": int(em.group(3)), "train_s": float(em.group(4)), "t": t})
    else:
        text = output.decode(errors="replace")
        saves = {int(s.group(1)): float(s.group(2)) for s in HAND_SAVE.finditer(text)}
        for em in HAND_EPOCH.finditer(text):
            e = int(em.group(1))
            epochs.append({"epoch": e, "train_val_s": float(em.group(2)), "train_s": float(em.group(3)),
                           "val_s": float(em.group(4)), "t": float(em.group(5)), "save_s": saves.get(e)})
    for prev, cur in zip(epochs, epochs[1:]):
        cur["period_s"] = cur["t"] - prev["t"]
        if prev["epoch"] in epoch_cpu and cur["epoch"] in epoch_cpu:
            cur["cpu_period_s"] = epoch_cpu[cur["epoch"]] - epoch_cpu[prev["epoch"]]
        cur["rest_s"] = cur["period_s"] - cur["train_s"]
    record["epochs"] = epochs
    if proc.returncode != 0 or len(epochs) != opts.epochs:
        record["error"] = output.decode(errors="replace")[-2000:]
    shutil.rmtree(run_dir, ignore_errors=True)
    return record


def mean(xs):
    return sum(xs) / len(xs) if xs else None


def summarise(run: dict) -> dict:
    later = [e for e in run["epochs"] if e["epoch"] >= 1]
    s = {
        "epoch0_train_s": run["epochs"][0]["train_s"] if run["epochs"] else None,
        "train_s": mean([e["train_s"] for e in later]),
        "period_s": mean([e["period_s"] for e in later if "period_s" in e]),
        "rest_s": mean([e["rest_s"] for e in later if "rest_s" in e]),
        "cpu_period_s": mean([e["cpu_period_s"] for e in later if "cpu_period_s" in e]),
        "first_self_s": run["first_step_self_s"],
        "first_ext_s": run["first_step_ext_s"],
        "wall_s": run["wall_s"],
        "cpu_s": run["cpu_s"],
    }
    if later and "save_s" in later[0]:
        s["save_s"] = mean([e["save_s"] for e in later if e.get("save_s") is not None])
        s["val_s"] = mean([e["val_s"] for e in later])
    return s


def fmt(x, digits=3, unit=" s"):
    return "-" if x is None else f"{x:.{digits}f}{unit}"


def spread(xs, digits=3, unit=" s"):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    return f"{statistics.median(xs):.{digits}f}{unit} ({min(xs):.{digits}f}-{max(xs):.{digits}f})"


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--trainer", required=True)
    p.add_argument("--hand", required=True)
    p.add_argument("--root", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--cases", default="main",
                   help="pair (trainer and hand loop only), main, core, loader, attrib, or all")
    p.add_argument("--hand-default-env", action="store_true",
                   help="also run the hand loop with the OpenMP runtime's default wait policy")
    p.add_argument("--out", required=True)
    p.add_argument("--summary", help="append one JSON line per ratio here (bench/suite.sh)")
    opts = p.parse_args()
    opts.trainer, opts.hand = os.path.abspath(opts.trainer), os.path.abspath(opts.hand)

    cases: List[Case] = []
    trainer_default = Case("trainer (default config)", "trainer", [], PASSIVE)
    hand = Case("hand loop", "hand", [], PASSIVE)
    cases += [trainer_default, hand]
    if opts.cases == "core":
        cases += [
            Case("trainer enable_checkpointing=false", "trainer", ["trainer.enable_checkpointing=false"], PASSIVE),
            Case("trainer lean (no bar, loggers, checkpoints)", "trainer",
                 ["trainer.enable_progress_bar=false", "~logger", "trainer.enable_checkpointing=false"], PASSIVE),
        ]
    if opts.cases == "loader":
        cases += [
            Case("trainer data.num_workers=0", "trainer", ["data.num_workers=0"], PASSIVE),
            Case("trainer data.num_workers=1", "trainer", ["data.num_workers=1"], PASSIVE),
            Case("trainer lean, data.num_workers=0", "trainer",
                 ["trainer.enable_progress_bar=false", "~logger", "trainer.enable_checkpointing=false",
                  "data.num_workers=0"], PASSIVE),
            Case("hand loop --meters (the trainer's per-step meters)", "hand", ["--meters"], PASSIVE),
        ]
    if opts.cases in ("main", "all"):
        cases.append(Case("trainer (default config), default OpenMP env", "trainer", [], {}))
    if opts.hand_default_env:
        cases.append(Case("hand loop, default OpenMP env", "hand", [], {}))
    if opts.cases in ("attrib", "all"):
        cases += [
            Case("trainer enable_progress_bar=false", "trainer", ["trainer.enable_progress_bar=false"], PASSIVE),
            Case("trainer ~logger (no loggers)", "trainer", ["~logger"], PASSIVE),
            Case("trainer enable_checkpointing=false", "trainer", ["trainer.enable_checkpointing=false"], PASSIVE),
            Case("trainer data.num_workers=0", "trainer", ["data.num_workers=0"], PASSIVE),
            Case("trainer lean (no bar, loggers, checkpoints)", "trainer",
                 ["trainer.enable_progress_bar=false", "~logger", "trainer.enable_checkpointing=false"], PASSIVE),
            Case("hand loop --save=none", "hand", ["--save", "none"], PASSIVE),
        ]

    started = datetime.datetime.now(datetime.timezone.utc)
    header = [
        f"# engine_bench {started:%Y-%m-%d %H:%M} UTC",
        f"machine: {os.cpu_count()} logical CPUs ({cpu_model()}), {os.uname().sysname} {os.uname().release}",
        f"trainer: {opts.trainer}; hand loop: {opts.hand}",
        f"epochs per run: {opts.epochs}; repetitions: {opts.reps}; cases: {opts.cases}",
        f"load average at start: {load()}  (uptime: {uptime()})",
    ]
    print("\n".join(header), flush=True)
    raw_lines: List[str] = []
    failures = 0
    with tempfile.TemporaryDirectory(prefix="engine-bench-") as workdir:
        for r in range(opts.reps):
            order = cases[r % len(cases):] + cases[:r % len(cases)]
            for case in order:
                rec = run_case(case, opts, workdir, r)
                case.runs.append(rec)
                raw_lines.append(json.dumps(rec))
                s = summarise(rec)
                status = "FAILED rc=%s" % rec["rc"] if "error" in rec else "ok"
                print(f"rep {r} {case.name}: {status}, period {fmt(s['period_s'])}, train {fmt(s['train_s'])}, "
                      f"rest {fmt(s['rest_s'])}, cpu/epoch {fmt(s['cpu_period_s'], 2)}, epoch0 train {fmt(s['epoch0_train_s'])}, first step {fmt(s['first_self_s'], 2)} / ext "
                      f"{fmt(s['first_ext_s'], 2)}, wall {fmt(s['wall_s'], 1)}, load {rec['load_before']}",
                      file=sys.stderr, flush=True)
                if "error" in rec:
                    failures += 1
                    print(rec["error"], file=sys.stderr)
    end_load = load()

    base = {r["rep"]: summarise(r) for r in hand.runs if "error" not in r}
    lines = ["", "| Case | runs | per-epoch time (period) | period / hand | samples/s | train | train / hand | "
             "rest (val + between epochs) | CPU per epoch | CPU / hand | epoch 0 train | first step (own report) | first step (external) | "
             "wall | CPU |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for case in cases:
        ok = [r for r in case.runs if "error" not in r]
        ss = [summarise(r) for r in ok]
        col = lambda k: [s[k] for s in ss]

        def ratio_text(k):
            rs = [summarise(r)[k] / base[r["rep"]][k] for r in ok
                  if r["rep"] in base and summarise(r)[k] and base[r["rep"]][k]]
            if case is hand or not rs:
                return "-"
            return f"{statistics.median(rs):.3f} ({min(rs):.3f}-{max(rs):.3f})"
        rate = [TRAIN_SAMPLES / x for x in col("period_s") if x]
        lines.append("| " + " | ".join([
            case.name, str(len(ok)), spread(col("period_s")), ratio_text("period_s"), spread(rate, 0, ""),
            spread(col("train_s")), ratio_text("train_s"), spread(col("rest_s")), spread(col("cpu_period_s"), 2), ratio_text("cpu_period_s"),
            spread(col("epoch0_train_s"), 2),
            spread(col("first_self_s"), 2), spread(col("first_ext_s"), 2), spread(col("wall_s"), 1),
            spread(col("cpu_s"), 1)]) + " |")
    lines.append("")
    lines.append("Best epochs (the fastest epoch >= 1 of all runs of a case: contention only ever adds time, so "
                 "the minimum is the least load-distorted estimate; ratio = best / hand loop's best):")
    lines.append("")
    lines.append("| Case | epochs | best period | best period / hand | best train | best train / hand | "
                 "2nd-best period / hand |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|")
    def later_values(case, key):
        return sorted(e[key] for r in case.runs if "error" not in r for e in r["epochs"]
                      if e["epoch"] >= 1 and key in e)
    hp, ht = later_values(hand, "period_s"), later_values(hand, "train_s")
    for case in cases:
        cp, ct = later_values(case, "period_s"), later_values(case, "train_s")
        if not cp or not hp:
            continue
        r = lambda a, b: "-" if case is hand else f"{a / b:.3f}"
        second = r(cp[1], hp[1]) if len(cp) > 1 and len(hp) > 1 else "-"
        lines.append(f"| {case.name} | {len(cp)} | {cp[0]:.3f} s | {r(cp[0], hp[0])} | {ct[0]:.3f} s | "
                     f"{r(ct[0], ht[0])} | {second} |")
    lines.append("")
    lines.append("Medians over runs, (min-max) in brackets; ratios are taken against the hand loop of the same "
                 "repetition. Each run's figure is the mean over its epochs >= 1.")
    for case in cases:
        marks = [r["startup_marks_s"] for r in case.runs if "error" not in r and "startup_marks_s" in r]
        if marks:
            parts = [f"{k} {statistics.median([m[k] for m in marks if k in m]):.3f} s"
                     for k, _ in STARTUP_MARKS[1:] if any(k in m for m in marks)]
            lines.append(f"{case.name}: after its first log line (config composed, run directory made): "
                         + ", ".join(parts))
        mains = [r["first_step_since_main_s"] for r in case.runs if "first_step_since_main_s" in r]
        if mains:
            lines.append(f"{case.name}: first step {statistics.median(mains):.3f} s after main() entered")
    hand_ok = [summarise(r) for r in hand.runs if "error" not in r]
    lines.append(f"hand loop per epoch: validation {spread([h.get('val_s') for h in hand_ok], 4)}, "
                 f"torch::save (model + optimizer) {spread([h.get('save_s') for h in hand_ok], 4)}")
    lines.append(f"load average at end: {end_load}  (uptime: {uptime()})")
    table = "\n".join(lines)
    print(table)
    with open(opts.out, "w") as f:
        f.write("\n".join(header) + "\n" + table + "\n\n## raw runs (one JSON object per process)\n")
        f.write("\n".join(raw_lines) + "\n")
    print(f"\nraw results: {opts.out}")
    if opts.summary:
        with open(opts.summary, "a") as f:
            for case in cases:
                if case is hand:
                    continue
                rs = [summarise(r)["period_s"] / base[r["rep"]]["period_s"] for r in case.runs
                      if "error" not in r and r["rep"] in base and summarise(r)["period_s"]
                      and base[r["rep"]]["period_s"]]
                f.write(json.dumps({"bench": "engine", "row": f"{case.name} / hand loop", "measure": "per-epoch time",
                                    "ratio": statistics.median(rs) if rs else None, "runs": len(rs),
                                    "better": "lower", "target": 1.02 if case is trainer_default else None}) + "\n")
    return 1 if failures else 0


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "-"


if __name__ == "__main__":
    sys.exit(main())
