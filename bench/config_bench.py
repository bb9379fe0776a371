"""Times the trainer's config front end against Hydra 1.3 on the same configs/ tree.

Run through bench/config_bench.sh (which finds the binary and the Hydra venv). Every command is
timed end to end as a child process (start-up included), stdout to a file, the commands of one
benchmark alternating within each repetition (their order rotating from one repetition to the
next) so that load changes on the machine hit all of them alike. Reports medians and
Hydra/trainer ratios as a markdown table. Python standard library only.
"""
import argparse
import datetime
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional


class Case:
    """One command line, timed repeatedly."""

    def __init__(self, name: str, argv: List[str], reps: int, fresh_dir: bool = False,
                 warmup: bool = True):
        self.name = name
        self.argv = argv
        self.reps = reps
        self.fresh_dir = fresh_dir  # argv contains "{DIR}": a new empty directory per run
        self.warmup = warmup  # one untimed run first (not for the runs that take minutes)
        self.times: List[float] = []
        self.cpu: List[float] = []  # user + sys seconds of the child process
        self.failure: Optional[str] = None
        self.last_stdout = ""
        self.extra: Dict[str, List[float]] = {}

    def run_once(self, cwd: str, workdir: str, timed: bool = True) -> None:
        if self.failure:
            return
        run_dir = tempfile.mkdtemp(prefix="run-", dir=workdir) if self.fresh_dir else ""
        argv = [a.replace("{DIR}", run_dir) for a in self.argv]
        out_path = os.path.join(workdir, "stdout.txt")
        with open(out_path, "wb") as out:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run(argv, cwd=cwd, stdout=out, stderr=subprocess.PIPE)
            elapsed = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if run_dir:
            shutil.rmtree(run_dir, ignore_errors=True)
        if proc.returncode != 0:
            tail = proc.stderr.decode(errors="replace").strip().splitlines()[-5:]
            self.failure = f"exit {proc.returncode}: " + " | ".join(tail)
            return
        with open(out_path, encoding="utf-8", errors="replace") as f:
            self.last_stdout = f.read()
        for line in proc.stderr.decode(errors="replace").splitlines():
            if line.startswith("loop_s="):
                self.extra.setdefault("loop_s", []).append(float(line[len("loop_s="):]))
        if timed:
            self.times.append(elapsed)
            self.cpu.append(cpu)
        else:
            self.extra.pop("loop_s", None)

    def median(self) -> Optional[float]:
        return statistics.median(self.times) if self.times and not self.failure else None


def run_group(cases: List[Case], cwd: str, workdir: str, warmup: bool = True) -> None:
    """Runs the cases alternately: repetition r runs them in an order rotated by r."""
    if warmup:
        for case in cases:
            if case.warmup:
                case.run_once(cwd, workdir, timed=False)
    reps = max(c.reps for c in cases)
    for r in range(reps):
        order = cases[r % len(cases):] + cases[:r % len(cases)]
        for case in order:
            if r < case.reps:
                case.run_once(cwd, workdir)
        print(f"  rep {r + 1}/{reps} done", file=sys.stderr, flush=True)


def fmt_time(seconds: Optional[float]) -> str:
    if seconds is None:
        return "not measured"
    if seconds < 1.0:
        return f"{seconds * 1000:.1f} ms"
    return f"{seconds:.2f} s"


def fmt_ratio(hydra: Optional[float], trainer: Optional[float]) -> str:
    if hydra is None or trainer is None or trainer <= 0:
        return "n/a"
    return f"{hydra / trainer:.0f}x" if hydra / trainer >= 10 else f"{hydra / trainer:.1f}x"


def count_jobs(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.startswith("# job "))


def machine_lines() -> List[str]:
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg()
    return [
        f"- CPU: {model}, {os.cpu_count()} logical CPUs (nproc: {len(os.sched_getaffinity(0))})",
        f"- OS: {platform.system()} {platform.release()}",
        f"- Load average (1/5/15 min) at start: {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trainer", required=True)
    parser.add_argument("--hydra-python", required=True)
    parser.add_argument("--configs", required=True, help="absolute path of configs/")
    parser.add_argument("--root", required=True, help="repository root (working directory)")
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--hydra-sweep-reps", type=int, default=1,
                        help="repetitions of Hydra's 1,000-job runs (minutes each)")
    parser.add_argument("--sweep", type=int, default=1000)
    parser.add_argument("--big-sweep", type=int, default=10000)
    parser.add_argument("--large-mb", type=float, default=10.0,
                        help="size of the generated config file of case (d); 0 skips it")
    parser.add_argument("--large-reps", type=int, default=3,
                        help="repetitions of case (d) (Hydra takes minutes on 10 MB)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--summary", help="append one JSON line per ratio here (bench/suite.sh)")
    parser.add_argument("--raw", action="store_true",
                        help="also write every run's times (JSON, one line per command) after the tables")
    args = parser.parse_args()

    trainer, py, configs = args.trainer, args.hydra_python, args.configs
    hydra_app = os.path.join(args.root, "bench", "hydra_app.py")
    compose_peer = os.path.join(args.root, "bench", "hydra_compose_peer.py")
    hydra_version = subprocess.run(
        [py, "-c", "import hydra, omegaconf; print(hydra.__version__, omegaconf.__version__)"],
        capture_output=True, text=True).stdout.split()
    started = datetime.datetime.now(datetime.timezone.utc)
    header = machine_lines()
    workdir = tempfile.mkdtemp(prefix="trainer-config-bench-")
    n, big = args.sweep, args.big_sweep
    no_log = ["hydra/job_logging=disabled", "hydra/hydra_logging=disabled"]

    try:
        print("(a) single compose + print", file=sys.stderr)
        single = ["--cfg", "job", "model=cnn", "optimizer.lr=0.01"]
        t_single = Case("trainer", [trainer, "fit", "--config-path", configs] + single, args.reps)
        h_single = Case("hydra", [py, hydra_app, "--config-path", configs] + single, args.reps)
        run_group([t_single, h_single], args.root, workdir)

        print(f"(b) {n}-job sweep", file=sys.stderr)
        t_sweep = Case("trainer", [trainer, "fit", "--config-path", configs, "-m", "--cfg", "job",
                                   f"seed=range(0,{n})"], args.reps)
        h_compose = Case("hydra-compose", [py, compose_peer, configs, str(n), "seed"],
                         args.hydra_sweep_reps, warmup=False)
        h_multirun = Case("hydra-multirun",
                          [py, hydra_app, "--config-path", configs, "-m", f"seed=range(0,{n})",
                           "hydra.sweep.dir={DIR}"] + no_log,
                          args.hydra_sweep_reps, fresh_dir=True, warmup=False)
        run_group([t_sweep, h_compose, h_multirun], args.root, workdir)

        print(f"(c) {big}-job sweep, trainer alone", file=sys.stderr)
        t_big = Case("trainer", [trainer, "fit", "--config-path", configs, "-m", "--cfg", "job",
                                 f"seed=range(0,{big})"], args.reps)
        run_group([t_big], args.root, workdir)

        # (d) one large file, generated here (never committed): loading must stay linear.
        large_dir = os.path.join(workdir, "large")
        large = ["--config-path", large_dir, "--config-name", "big", "--cfg", "job"]
        t_large = Case("trainer", [trainer, "fit"] + large, args.large_reps, warmup=False)
        h_large = Case("hydra", [py, hydra_app] + large, args.large_reps, warmup=False)
        large_keys, large_bytes = 0, 0
        if args.large_mb > 0:
            os.makedirs(large_dir)
            large_path = os.path.join(large_dir, "big.yaml")
            large_keys = int(subprocess.run(
                [sys.executable, os.path.join(args.root, "bench", "gen_large_yaml.py"), large_path,
                 str(args.large_mb)], check=True, capture_output=True, text=True).stdout)
            large_bytes = os.path.getsize(large_path)
            print(f"(d) {large_bytes / 1e6:.1f} MB config file", file=sys.stderr)
            run_group([t_large, h_large], args.root, workdir, warmup=False)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    # Checks that the timed commands did the same work.
    def ran(*cases: Case) -> bool:
        return all(c.times and not c.failure for c in cases)

    same_single = (t_single.last_stdout == h_single.last_stdout) if ran(t_single, h_single) else None
    same_large = (t_large.last_stdout == h_large.last_stdout) if ran(t_large, h_large) else None
    same_sweep = (t_sweep.last_stdout.rstrip("\n") == h_compose.last_stdout.rstrip("\n")
                  if ran(t_sweep, h_compose) else None)
    jobs_sweep = count_jobs(t_sweep.last_stdout)
    jobs_big = count_jobs(t_big.last_stdout)

    def yes_no(flag: Optional[bool]) -> str:
        return "n/a" if flag is None else ("yes" if flag else "NO")

    def met(ok: Optional[bool]) -> str:
        return "n/a" if ok is None else ("**met**" if ok else "**missed**")

    ms, mh = t_single.median(), h_single.median()
    single_ok = None if ms is None or mh is None else mh / ms >= 20
    big_ok = None if t_big.median() is None else t_big.median() < 1.0
    large_ok = None if t_large.median() is None else t_large.median() < 1.5
    loop = h_compose.extra.get("loop_s")
    loop_note = f" (compose loop alone: {fmt_time(statistics.median(loop))})" if loop else ""

    lines = [
        "# Config benchmark: trainer vs Hydra 1.3",
        "",
        f"- Date: {started.strftime('%Y-%m-%d %H:%M UTC')}",
        *header,
        f"- trainer: `{trainer}`; Hydra {hydra_version[0] if hydra_version else '?'}, "
        f"OmegaConf {hydra_version[1] if len(hydra_version) > 1 else '?'}, "
        f"Python {subprocess.run([py, '-c', 'import platform; print(platform.python_version())'], capture_output=True, text=True).stdout.strip()}",
        f"- Wall time of the whole process (start-up included), median of {args.reps} runs "
        f"({args.hydra_sweep_reps} for each of Hydra's {n:,}-job runs, which take minutes; "
        f"{args.large_reps} for (d)), commands alternating, one untimed warm-up run each "
        "(none for Hydra's sweeps and for (d)). (d)'s file is made by `bench/gen_large_yaml.py`.",
        "",
        "| Benchmark | trainer | Hydra | Hydra / trainer | Target | |",
        "|---|---:|---:|---:|---|---|",
        f"| (a) compose + print one job config: `fit --cfg job model=cnn optimizer.lr=0.01` "
        f"| {fmt_time(ms)} | {fmt_time(mh)} | {fmt_ratio(mh, ms)} | trainer >= 20x faster | {met(single_ok)} |",
        f"| (b) {n:,}-job sweep `seed=range(0,{n})`: trainer lists every job config (`-m --cfg job`); "
        f"Hydra multirun, basic launcher, no-op task, logging disabled "
        f"| {fmt_time(t_sweep.median())} | {fmt_time(h_multirun.median())} "
        f"| {fmt_ratio(h_multirun.median(), t_sweep.median())} | - | |",
        f"| (b') same {n:,}-job listing; Hydra compose API in one process "
        f"(`initialize_config_dir` + `compose` + `OmegaConf.to_yaml` per job){loop_note} "
        f"| {fmt_time(t_sweep.median())} | {fmt_time(h_compose.median())} "
        f"| {fmt_ratio(h_compose.median(), t_sweep.median())} | - | |",
        f"| (c) {big:,}-job sweep listed by the trainer (`-m --cfg job seed=range(0,{big})`) "
        f"| {fmt_time(t_big.median())} | - | - | < 1 s | {met(big_ok)} |",
        f"| (d) compose + print one generated {large_bytes / 1e6:.1f} MB file "
        f"({large_keys:,} top-level keys, nested maps and lists; `--cfg job`) "
        f"| {fmt_time(t_large.median())} | {fmt_time(h_large.median())} "
        f"| {fmt_ratio(h_large.median(), t_large.median())} | trainer < 1.5 s | {met(large_ok)} |",
        "",
        "| Command | runs | median | min | max | median CPU (user+sys) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, case in [("(a) trainer", t_single), ("(a) Hydra app", h_single),
                        (f"(b) trainer, {n:,} jobs", t_sweep),
                        (f"(b) Hydra multirun, {n:,} jobs", h_multirun),
                        (f"(b') Hydra compose API, {n:,} jobs", h_compose),
                        (f"(c) trainer, {big:,} jobs", t_big),
                        ("(d) trainer, large file", t_large), ("(d) Hydra app, large file", h_large)]:
        if case.failure:
            lines.append(f"| {label} | - | failed: {case.failure} | | | |")
        elif not case.times:
            lines.append(f"| {label} | 0 | not measured | | | |")
        else:
            lines.append(f"| {label} | {len(case.times)} | {fmt_time(case.median())} "
                         f"| {fmt_time(min(case.times))} | {fmt_time(max(case.times))} "
                         f"| {fmt_time(statistics.median(case.cpu))} |")
    load = os.getloadavg()
    lines += [
        "",
        f"Checks: (a) trainer output byte-identical to Hydra's --cfg job output: {yes_no(same_single)}; "
        f"(b) trainer listed {jobs_sweep:,} jobs, output identical to the compose-API peer's: "
        f"{yes_no(same_sweep)}; (c) trainer listed {jobs_big:,} jobs; "
        f"(d) trainer output byte-identical to Hydra's: {yes_no(same_large)}. "
        f"Load average at the end: {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}.",
        "",
    ]
    text = "\n".join(lines)
    sys.stdout.write(text)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    cases = [("(a) trainer", t_single), ("(a) Hydra app", h_single), ("(b) trainer", t_sweep),
             ("(b) Hydra multirun", h_multirun), ("(b') Hydra compose API", h_compose), ("(c) trainer", t_big),
             ("(d) trainer", t_large), ("(d) Hydra app", h_large)]
    with open(args.out, "w") as f:
        f.write(text)
        if args.raw:
            f.write("\nraw runs (JSON, one line per command; seconds):\n")
            for label, case in cases:
                f.write(json.dumps({"command": label, "argv": case.argv, "wall_s": case.times, "cpu_s": case.cpu,
                                    "failure": case.failure}) + "\n")
    if args.summary:
        with open(args.summary, "a") as f:
            for row, hydra, ours, target in [
                    ("(a) compose + print one config: Hydra / trainer", h_single, t_single, 20.0),
                    (f"(b) {n:,}-job sweep: Hydra multirun / trainer listing", h_multirun, t_sweep, None),
                    (f"(b') {n:,}-job sweep: Hydra compose API / trainer listing", h_compose, t_sweep, None),
                    ("(d) compose + print a large file: Hydra / trainer", h_large, t_large, None)]:
                ok = hydra.median() is not None and ours.median()
                f.write(json.dumps({"bench": "config", "row": row, "measure": "wall time",
                                    "ratio": hydra.median() / ours.median() if ok else None,
                                    "runs": len(hydra.times), "better": "higher", "target": target}) + "\n")
            f.write(json.dumps({"bench": "config", "row": "(d) large-file compose, trainer (seconds)",
                                "measure": "wall time", "value": t_large.median(), "better": "lower",
                                "target": 1.5}) + "\n")
            f.write(json.dumps({"bench": "config", "row": f"(c) {big:,}-job listing, trainer (seconds)",
                                "measure": "wall time", "value": t_big.median(), "better": "lower",
                                "target": 1.0}) + "\n")
    failures = [c for c in (t_single, h_single, t_sweep, h_compose, h_multirun, t_big, t_large, h_large)
                if c.failure]
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
