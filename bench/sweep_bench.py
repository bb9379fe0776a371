"""Times sweeps (trainer fit -m) against Hydra 1.3's basic launcher, and the parallel launcher.

Run through bench/sweep_bench.sh (which finds the binary and the Hydra venv). Two benchmarks, each
command timed end to end as a child process, the commands of a benchmark alternating within each
repetition (order rotating) so that load changes hit all alike (Case/run_group from
config_bench.py). Medians and ratios as a markdown table. Python standard library only.

(a) Launch overhead per job, trivial jobs, basic launcher (one job after another):
    trainer fit -m data=synthetic trainer.fast_dev_run=true seed=range(N)
    python bench/hydra_app.py -m seed=range(N)        (Hydra 1.3.2, an app that does nothing)
    each with N jobs and with 1 job; the marginal cost of a job is (T(N) - T(1)) / (N - 1).
    A trainer job is a process of its own, forked from the sweep process (which loaded LibTorch
    once), running one batch of fit, validate and test; Hydra's jobs run in its process and do
    nothing.
(b) The parallel launcher on equal jobs: a 4-job sweep (data=synthetic model=cnn seed=1,2,3,4,
    E epochs)
    with hydra/launcher=local hydra.launcher.n_jobs=2 against hydra/launcher=basic.
    Target: parallel <= 0.60 x sequential.
"""
import argparse
import datetime
import os
import shutil
import sys
import tempfile
from typing import List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from config_bench import Case, fmt_time, machine_lines, run_group  # noqa: E402


def ratio(a: Optional[float], b: Optional[float]) -> str:
    return "n/a" if a is None or b is None or b <= 0 else f"{a / b:.2f}"


def marginal(total_n: Optional[float], total_1: Optional[float], n: int) -> Optional[float]:
    if total_n is None or total_1 is None or n < 2:
        return None
    return (total_n - total_1) / (n - 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trainer", required=True)
    parser.add_argument("--hydra-python", required=True)
    parser.add_argument("--configs", required=True, help="absolute path of configs/")
    parser.add_argument("--root", required=True, help="repository root (working directory)")
    parser.add_argument("--jobs", type=int, default=10, help="jobs in the trivial sweep (a)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=2, help="epochs of each job in (b)")
    parser.add_argument("--model", default="cnn", help="model of the jobs in (b)")
    parser.add_argument("--parallel-reps", type=int, default=3)
    parser.add_argument("--only", choices=["a", "b"], default=None)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    trainer, py, configs = args.trainer, args.hydra_python, args.configs
    hydra_app = os.path.join(args.root, "bench", "hydra_app.py")
    started = datetime.datetime.now(datetime.timezone.utc)
    header = machine_lines()
    workdir = tempfile.mkdtemp(prefix="trainer-sweep-bench-")
    n = args.jobs
    fit = [trainer, "fit", "--config-path", configs]
    trivial = ["data=synthetic", "trainer.fast_dev_run=true"]
    cases_a: List[Case] = []
    cases_b: List[Case] = []
    try:
        if args.only in (None, "a"):
            print(f"(a) {n} trivial jobs, basic launcher", file=sys.stderr)
            t_n = Case("trainer N", fit + ["-m"] + trivial + [f"seed=range({n})", "hydra.sweep.dir={DIR}"],
                       args.reps, fresh_dir=True)
            t_1 = Case("trainer 1", fit + ["-m"] + trivial + ["seed=range(1)", "hydra.sweep.dir={DIR}"],
                       args.reps, fresh_dir=True)
            h_n = Case("hydra N", [py, hydra_app, "--config-path", configs, "-m", f"seed=range({n})",
                                   "hydra.sweep.dir={DIR}"], args.reps, fresh_dir=True)
            h_1 = Case("hydra 1", [py, hydra_app, "--config-path", configs, "-m", "seed=range(1)",
                                   "hydra.sweep.dir={DIR}"], args.reps, fresh_dir=True)
            cases_a = [t_n, t_1, h_n, h_1]
            run_group(cases_a, args.root, workdir)
        if args.only in (None, "b"):
            e = args.epochs
            print(f"(b) 4 equal jobs ({args.model}, {e} epochs): local n_jobs=2 vs basic", file=sys.stderr)
            job = ["data=synthetic", f"model={args.model}", f"trainer.max_epochs={e}", "trainer.enable_progress_bar=false",
                   "seed=1,2,3,4", "hydra.sweep.dir={DIR}"]
            seq = Case("basic", fit + ["-m"] + job + ["hydra/launcher=basic"], args.parallel_reps,
                       fresh_dir=True, warmup=False)
            par = Case("local n_jobs=2", fit + ["-m"] + job + ["hydra/launcher=local", "hydra.launcher.n_jobs=2"],
                       args.parallel_reps, fresh_dir=True, warmup=False)
            cases_b = [seq, par]
            run_group(cases_b, args.root, workdir, warmup=False)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    lines = [
        "# Sweep benchmark: trainer's launchers vs Hydra 1.3's basic launcher",
        "",
        f"- Date: {started.strftime('%Y-%m-%d %H:%M UTC')}",
        f"- trainer: `{trainer}`; Hydra: `{py}` (hydra-core 1.3.2)",
        *header,
        "- Each command end to end as a child process; medians of the repetitions, commands "
        "alternating within each repetition.",
        "",
    ]
    failures = [c for c in cases_a + cases_b if c.failure]
    if cases_a:
        t_n, t_1, h_n, h_1 = cases_a
        tm, hm = marginal(t_n.median(), t_1.median(), n), marginal(h_n.median(), h_1.median(), n)
        lines += [
            f"## (a) Launch overhead per job: {n} trivial jobs, basic launcher ({args.reps} reps)",
            "",
            "trainer: `trainer fit -m data=synthetic trainer.fast_dev_run=true seed=range(N)` (each job a "
            "process of its own, forked from the sweep process after it loaded LibTorch once, running one batch "
            "of fit, validate and test); Hydra: "
            "`python bench/hydra_app.py -m seed=range(N)` (jobs in Hydra's process, an app that does nothing).",
            "",
            f"| | {n} jobs | 1 job | per job ({n} jobs / {n}) | marginal per job (T({n}) - T(1)) / {n - 1} |",
            "|---|---|---|---|---|",
        ]
        for name, cn, c1, m in (("trainer", t_n, t_1, tm), ("Hydra 1.3.2", h_n, h_1, hm)):
            per = cn.median() / n if cn.median() is not None else None
            lines.append(f"| {name} | {fmt_time(cn.median())} | {fmt_time(c1.median())} | "
                         f"{fmt_time(per)} | {fmt_time(m)} |")
        lines += ["", f"Ratio trainer / Hydra, marginal per job: {ratio(tm, hm)}", ""]
    if cases_b:
        seq, par = cases_b
        r = None if seq.median() is None or par.median() is None else par.median() / seq.median()
        verdict = "n/a" if r is None else ("**met**" if r <= 0.60 else "**missed**")
        lines += [
            f"## (b) Parallel launcher: 4 equal jobs ({args.model}, {args.epochs} epochs; {args.parallel_reps} reps)",
            "",
            f"`trainer fit -m data=synthetic model={args.model} trainer.max_epochs={args.epochs} seed=1,2,3,4` with "
            "`hydra/launcher=basic` (one job at a time) and `hydra/launcher=local hydra.launcher.n_jobs=2`.",
            "",
            "| launcher | wall time (median) | CPU time, user + sys of the sweep's processes (median) |",
            "|---|---|---|",
        ]
        for c in (seq, par):
            cpu = sorted(c.cpu)[len(c.cpu) // 2] if c.cpu else None
            lines.append(f"| {c.name} | {fmt_time(c.median())} | {fmt_time(cpu)} |")
        lines += ["", f"Ratio parallel / sequential: {ratio(par.median(), seq.median())} "
                      f"(target <= 0.60: {verdict})", ""]
    for c in failures:
        lines.append(f"- FAILED `{c.name}`: {c.failure}")
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
