"""Search quality and search overhead: trainer's sweepers against Hydra's Optuna sweeper.

Run through bench/search_bench.sh (which finds the binary and makes the peer's venv).

(a) Quality. The Fashion-MNIST mlp (one hidden layer), a 4-parameter space, E epochs per trial:
        optimizer.lr            tag(log, interval(1e-5, 1e-1))
        optimizer.weight_decay  tag(log, interval(1e-6, 1e-1))
        model.hidden_sizes      choice([32],[64],[128],[256],[512])
        model.dropout           interval(0.0, 0.7)
    searched by, each with N trials, one trial at a time (so every sampler sees every earlier result):
        random       trainer, hydra/sweeper=random
        tpe_sh       trainer, hydra/sweeper=optuna (TPE) with the successive-halving pruner
                     (min_resource 1, reduction_factor 3: rungs at 1 and 3 epochs)
        asha         trainer, hydra/sweeper=asha (random draws; grace 1, reduction 3, max_t E)
        tpe          trainer, hydra/sweeper=optuna (TPE) without pruning (--cases to add it)
        hydra_optuna Hydra 1.3.2 + hydra-optuna-sweeper 1.2.0 + Optuna 2.10.1 (TPE; it has no
                     pruning), each trial running the same `trainer fit` (bench/peers/)
    Both TPEs use n_startup_trials 10 (the template's) and the same seed. A trial's value is the
    last val/acc it logged; "best" counts only trials that ran all E epochs (a pruned or stopped
    trial's partial accuracy is not a finished model). Epochs are counted from each trial's
    metrics.csv (validated epochs).
    Reported: the best value after k trials and after a number of epochs, per case and seed; the
    trials and epochs each case needed to reach random search's N-trial best; the target
    "tpe_sh reaches random's N-trial best within 20 trials, in at most a third of random's epochs";
    and a plot (best against trials, best against epochs).
(b) Overhead of the ask/tell loop per trial, trivial trials: trainer's optuna sweeper against its
    random sweeper (a trial is one batch of fit and validate on synthetic data, a process of its
    own), and Hydra's Optuna sweeper against Hydra's basic sweeper (an app that trains nothing).
    The marginal cost of a trial is (T(M) - T(1)) / (M - 1); the search's own cost is the
    difference between a model-based sweep and a plain one of the same launcher.
"""
import argparse
import csv
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from config_bench import Case, fmt_time, machine_lines, run_group  # noqa: E402

SPACE = [
    "optimizer.lr=tag(log, interval(1e-5, 1e-1))",
    "optimizer.weight_decay=tag(log, interval(1e-6, 1e-1))",
    "model.hidden_sizes=choice([32],[64],[128],[256],[512])",
    "model.dropout=interval(0.0, 0.7)",
]
CASES = {
    "random": "trainer random search",
    "tpe_sh": "trainer TPE + successive halving",
    "asha": "trainer ASHA",
    "tpe": "trainer TPE, no pruning",
    "hydra_optuna": "Hydra + Optuna 2.10 TPE",
}
COLOURS = {"random": "#7f7f7f", "tpe_sh": "#d62728", "asha": "#1f77b4", "tpe": "#ff7f0e",
           "hydra_optuna": "#2ca02c"}


def read_trial(metrics: str) -> Tuple[Optional[float], int]:
    """The last val/acc of a run's metrics.csv and the number of epochs it validated."""
    if not os.path.exists(metrics):
        return None, 0
    value, epochs = None, 0
    with open(metrics, newline="") as f:
        for row in csv.DictReader(f):
            if row.get("val/acc"):
                epochs += 1
                value = float(row["val/acc"])
    return value, epochs


def numbered_dirs(root: str) -> List[str]:
    names = [n for n in os.listdir(root) if n.isdigit() and os.path.isdir(os.path.join(root, n))]
    return [os.path.join(root, n) for n in sorted(names, key=int)]


class Run:
    """One search (a case with a seed): its trials in the order they were asked for."""

    def __init__(self, case: str, seed: int):
        self.case, self.seed = case, seed
        self.trials: List[Tuple[Optional[float], int]] = []  # (value, epochs)
        self.wall = 0.0
        self.failure: Optional[str] = None

    def best_after_trials(self, k: int, epochs: int) -> Optional[float]:
        done = [v for v, e in self.trials[:k] if v is not None and e >= epochs]
        return max(done) if done else None

    def epochs_after_trials(self, k: int) -> int:
        return sum(e for _, e in self.trials[:k])

    def curve(self, epochs: int) -> List[Tuple[int, int, Optional[float]]]:
        """(trial number from 1, epochs spent so far, best so far) after each trial."""
        out, spent, best = [], 0, None
        for i, (v, e) in enumerate(self.trials):
            spent += e
            if v is not None and e >= epochs and (best is None or v > best):
                best = v
            out.append((i + 1, spent, best))
        return out

    def reach(self, target: float, epochs: int) -> Tuple[Optional[int], Optional[int]]:
        """The trials and epochs this search took to reach target (None: it never did)."""
        for k, spent, best in self.curve(epochs):
            if best is not None and best >= target:
                return k, spent
        return None, None


def run_search(case: str, seed: int, args, work: str) -> Run:
    run = Run(case, seed)
    sweep = os.path.join(work, f"{case}-{seed}")
    e = args.epochs
    fixed = [f"trainer.max_epochs={e}", "test_after_fit=false", "trainer.enable_progress_bar=false", *args.extra]
    fit = [args.trainer, "fit", "--config-path", args.configs, "-m", *SPACE, *fixed,
           "hydra/launcher=local", "hydra.launcher.n_jobs=1", f"hydra.sweep.dir={sweep}"]
    n = args.trials
    if case == "random":
        argv = fit + ["hydra/sweeper=random", f"hydra.sweeper.num_samples={n}", f"hydra.sweeper.seed={seed}"]
    elif case in ("tpe", "tpe_sh"):
        argv = fit + ["hydra/sweeper=optuna", f"hydra.sweeper.n_trials={n}", "hydra.sweeper.n_jobs=1",
                      "hydra.sweeper.direction=maximize", "hydra.sweeper.metric=val/acc",
                      f"hydra.sweeper.sampler.seed={seed}", "hydra.sweeper.sampler.n_startup_trials=10"]
        if case == "tpe_sh":
            argv += ["+hydra.sweeper.pruner._target_=optuna.pruners.SuccessiveHalvingPruner",
                     "+hydra.sweeper.pruner.min_resource=1", "+hydra.sweeper.pruner.reduction_factor=3"]
    elif case == "asha":
        argv = fit + ["hydra/sweeper=asha", f"hydra.sweeper.num_samples={n}", f"hydra.sweeper.seed={seed}",
                      "hydra.sweeper.metric=val/acc", "hydra.sweeper.mode=max", f"hydra.sweeper.max_t={e}",
                      "hydra.sweeper.grace_period=1", "hydra.sweeper.reduction_factor=3"]
    elif case == "hydra_optuna":
        quoted = ",".join(f"'{o}'" for o in fixed)
        argv = [args.peer_python, args.peer_app, "-m", f"trainer_bin={args.trainer}", f"fixed=[{quoted}]",
                "hydra.sweeper.direction=maximize", "hydra.sweeper.n_jobs=1",
                f"hydra.sweeper.n_trials={n}", f"hydra.sweeper.sampler.seed={seed}",
                "hydra.sweeper.sampler.n_startup_trials=10", *SPACE, f"hydra.sweep.dir={sweep}"]
    else:
        raise ValueError(case)
    log = os.path.join(work, f"{case}-{seed}.log")
    start = time.perf_counter()
    with open(log, "w") as out:
        proc = subprocess.run(argv, cwd=work, stdout=out, stderr=subprocess.STDOUT)
    run.wall = time.perf_counter() - start
    if proc.returncode != 0:
        with open(log, errors="replace") as f:
            run.failure = f"exit {proc.returncode}: " + " | ".join(f.read().strip().splitlines()[-5:])
        return run
    for job in numbered_dirs(sweep):
        inner = os.path.join(job, "run") if case == "hydra_optuna" else job
        run.trials.append(read_trial(os.path.join(inner, "metrics.csv")))
    return run


def fmt_acc(v: Optional[float]) -> str:
    return "—" if v is None else f"{v:.4f}"


def plot(runs: List[Run], epochs: int, target: Optional[float], path: str, python: str) -> Optional[str]:
    """Draws best-so-far against trials and against epochs with matplotlib (in the peer's venv)."""
    data = {"epochs": epochs, "target": target, "seeds": len({r.seed for r in runs}),
            "runs": [{"case": r.case, "label": CASES[r.case], "seed": r.seed, "colour": COLOURS[r.case],
                      "curve": r.curve(epochs)} for r in runs if not r.failure]}
    script = r'''
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
data = json.load(sys.stdin)
fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
seen = set()
for r in data["runs"]:
    pts = [(k, s, b) for k, s, b in r["curve"] if b is not None]
    label = r["label"] if r["case"] not in seen else None
    seen.add(r["case"])
    for ax, x in ((axes[0], [p[0] for p in pts]), (axes[1], [p[1] for p in pts])):
        ax.step(x, [p[2] for p in pts], where="post", color=r["colour"], label=label, alpha=0.85)
for ax, name in ((axes[0], "trials"), (axes[1], "epochs spent (all trials)")):
    if data["target"] is not None:
        ax.axhline(data["target"], color="black", linestyle="--", linewidth=0.8)
    ax.set_xlabel(name)
    ax.grid(alpha=0.3)
axes[0].set_ylabel("best val/acc of trials that ran all %d epochs" % data["epochs"])
axes[0].axvline(20, color="black", linestyle=":", linewidth=0.8)
axes[1].legend(loc="lower right")
fig.suptitle("Fashion-MNIST mlp, 4 parameters: best validation accuracy so far (dashed: random's final best"
             + (", the median over %d seeds)" % data["seeds"] if data["seeds"] > 1 else ")"))
lows = [p[2] for r in data["runs"] for p in r["curve"] if p[2] is not None]
if lows:
    axes[0].set_ylim(max(min(lows), data["target"] - 0.05 if data["target"] else 0), None)
fig.tight_layout()
fig.savefig(sys.argv[1], dpi=100)
'''
    proc = subprocess.run([python, "-c", script, path], input=json.dumps(data), text=True,
                          stderr=subprocess.PIPE)
    return None if proc.returncode == 0 else proc.stderr.strip()[-500:]


def load_runs(path: str) -> List[Run]:
    """The searches a run of this benchmark saved (search_runs.json), to report them again."""
    runs = []
    with open(path) as f:
        for item in json.load(f):
            run = Run(item["case"], item["seed"])
            run.wall, run.failure = item["wall"], item["failure"]
            run.trials = [(v, e) for v, e in item["trials"]]
            runs.append(run)
    return runs


def quality(args, work: str) -> List[str]:
    runs: List[Run] = load_runs(args.from_json) if args.from_json else []
    if args.from_json:
        args.seeds = ",".join(str(s) for s in sorted({r.seed for r in runs}))
    seeds = [int(s) for s in args.seeds.split(",")]
    for seed in [] if args.from_json else seeds:
        for case in args.cases.split(","):
            print(f"(a) {case}, seed {seed}: {args.trials} trials of {args.epochs} epochs", file=sys.stderr,
                  flush=True)
            run = run_search(case, seed, args, work)
            print(f"    {run.wall:.0f} s, {len(run.trials)} trials, {run.epochs_after_trials(len(run.trials))} epochs"
                  + (f", FAILED {run.failure}" if run.failure else ""), file=sys.stderr, flush=True)
            runs.append(run)
            with open(os.path.join(args.results, f"search_{args.stamp}_runs.json"), "w") as f:
                json.dump([{"case": r.case, "seed": r.seed, "wall": r.wall, "trials": r.trials,
                            "failure": r.failure} for r in runs], f, indent=1)
    n, e = args.trials, args.epochs
    lines = [f"## (a) Quality: {n} trials of {e} epochs, one at a time, seeds {args.seeds}", "",
             "Space: " + ", ".join(f"`{s}`" for s in SPACE) + f"; fixed: `trainer.max_epochs={e}` "
             "`test_after_fit=false`, everything else the default config (mlp, Adam, batch 128, "
             "Fashion-MNIST with 10% of the training set held out for validation).", ""]
    checkpoints = [k for k in (10, 20, 30, 50, 100) if k <= n]
    lines += ["| case | seed | " + " | ".join(f"best after {k} trials" for k in checkpoints) +
              " | epochs for 20 trials | epochs for all | wall for all |",
              "|---|---|" + "---|" * len(checkpoints) + "---|---|---|"]
    for r in runs:
        if r.failure:
            lines.append(f"| {CASES[r.case]} | {r.seed} | failed: {r.failure} |")
            continue
        lines.append(f"| {CASES[r.case]} | {r.seed} | " +
                     " | ".join(fmt_acc(r.best_after_trials(k, e)) for k in checkpoints) +
                     f" | {r.epochs_after_trials(20)} | {r.epochs_after_trials(n)} | {fmt_time(r.wall)} |")
    lines += ["", "Random search's final best as the bar: the trials and the epochs each search needed to "
              "reach it (— : not within its trials).", "",
              "| seed | random's best | case | trials to reach it | epochs to reach it | share of random's epochs |",
              "|---|---|---|---|---|---|"]
    verdicts = []
    for seed in seeds:
        rnd = next((r for r in runs if r.case == "random" and r.seed == seed and not r.failure), None)
        if rnd is None:
            continue
        bar = rnd.best_after_trials(n, e)
        rnd_epochs = rnd.epochs_after_trials(n)
        for r in runs:
            if r.seed != seed or r.failure or bar is None:
                continue
            k, spent = r.reach(bar, e)
            share = "—" if spent is None else f"{spent / rnd_epochs:.2f}"
            lines.append(f"| {seed} | {fmt_acc(bar)} | {CASES[r.case]} | {k or '—'} | {spent or '—'} | {share} |")
            if r.case == "tpe_sh":
                met = k is not None and k <= 20 and spent * 3 <= rnd_epochs
                verdicts.append(f"seed {seed}: {'**met**' if met else '**missed**'} (tpe_sh reached "
                                f"{fmt_acc(bar)} " + (f"at trial {k} after {spent} epochs, random spent {rnd_epochs}"
                                                      if k else "not at all") + ")")
    if verdicts:
        lines += ["", "Target (tpe_sh reaches random's best within 20 trials in at most a third of its epochs): "
                  + "; ".join(verdicts) + "."]
    if len(seeds) > 1:
        lines += [""] + across_seeds(runs, seeds, n, e)
    png = os.path.join(args.results, f"search_{args.stamp}.png")
    # The dashed line: random search's final best (the median over the seeds when there are several).
    finals = sorted(r.best_after_trials(n, e) for r in runs
                    if r.case == "random" and not r.failure and r.best_after_trials(n, e) is not None)
    bar0 = (finals[len(finals) // 2] if len(finals) % 2 else sum(finals[len(finals) // 2 - 1:][:2]) / 2) \
        if finals else None
    err = plot(runs, e, bar0, png, args.peer_python)
    lines += ["", f"Plot: `{os.path.relpath(png, args.root)}`" if err is None else f"Plot failed: {err}", ""]
    return lines


def across_seeds(runs: List[Run], seeds: List[int], n: int, e: int) -> List[str]:
    """Medians over the seeds per case, and how often each case reached random search's N-trial
    best of the same seed: within 20 trials, and within 20 trials in at most a third of its epochs."""
    def median(values):
        values = sorted(v for v in values if v is not None)
        if not values:
            return None
        mid = len(values) // 2
        return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2

    bars = {}
    for seed in seeds:
        rnd = next((r for r in runs if r.case == "random" and r.seed == seed and not r.failure), None)
        if rnd is not None and rnd.best_after_trials(n, e) is not None:
            bars[seed] = (rnd.best_after_trials(n, e), rnd.epochs_after_trials(n))
    checkpoints = [k for k in (10, 20, 30, 50, 100) if k <= n]
    lines = [f"Across the seeds ({len(seeds)}): medians per case, and the seeds on which the case reached random "
             f"search's {n}-trial best of the same seed within 20 trials, and within 20 trials in at most a third "
             "of random's epochs (the target; random search is measured against itself: its own best found by trial 20).",
             "",
             "| case | seeds | " + " | ".join(f"median best after {k}" for k in checkpoints) +
             " | median epochs for all | reached random's best within 20 trials | and in <= 1/3 of its epochs |",
             "|---|---|" + "---|" * len(checkpoints) + "---|---|---|"]
    for case in CASES:
        mine = [r for r in runs if r.case == case and not r.failure and r.seed in seeds]
        if not mine:
            continue
        within, cheap = 0, 0
        for r in mine:
            if r.seed not in bars:
                continue
            k, spent = r.reach(bars[r.seed][0], e)
            if k is not None and k <= 20:
                within += 1
                cheap += spent * 3 <= bars[r.seed][1]
        lines.append(f"| {CASES[case]} | {len(mine)} | " +
                     " | ".join(fmt_acc(median(r.best_after_trials(k, e) for r in mine)) for k in checkpoints) +
                     f" | {median(r.epochs_after_trials(n) for r in mine):.0f} | {within} of {len(mine)} | "
                     f"{cheap} of {len(mine)} |")
    return lines


def overhead(args, work: str) -> List[str]:
    m = args.overhead_trials
    trivial = ["data=synthetic", "data.num_samples=256", "trainer.max_epochs=1", "trainer.limit_train_batches=1",
               "trainer.limit_val_batches=1", "test_after_fit=false", "trainer.enable_progress_bar=false",
               "hydra.sweep.dir={DIR}", *SPACE]
    fit = [args.trainer, "fit", "--config-path", args.configs, "-m", *trivial]

    def tr_optuna(k: int) -> List[str]:
        return fit + ["hydra/sweeper=optuna", f"hydra.sweeper.n_trials={k}", "hydra.sweeper.n_jobs=1",
                      "hydra.sweeper.metric=val/acc", "hydra.sweeper.direction=maximize",
                      "hydra.sweeper.sampler.seed=1", "hydra.sweeper.sampler.n_startup_trials=10"]

    def tr_random(k: int) -> List[str]:
        return fit + ["hydra/sweeper=random", f"hydra.sweeper.num_samples={k}", "hydra.sweeper.seed=1"]

    app = [args.peer_python, args.peer_app, "-m", "hydra.sweep.dir={DIR}"]

    def hy_optuna(k: int) -> List[str]:
        return app + ["hydra.sweeper.direction=maximize", "hydra.sweeper.n_jobs=1",
                      f"hydra.sweeper.n_trials={k}", "hydra.sweeper.sampler.seed=1",
                      "hydra.sweeper.sampler.n_startup_trials=10", *SPACE]

    def hy_basic(k: int) -> List[str]:
        return app + ["hydra/sweeper=basic", f"+x=range({k})"]

    pairs = [("trainer, optuna (TPE)", tr_optuna), ("trainer, random", tr_random),
             ("Hydra + Optuna 2.10 (TPE)", hy_optuna), ("Hydra, basic", hy_basic)]
    cases = []
    for name, make in pairs:
        cases.append(Case(f"{name} {m}", make(m), args.reps, fresh_dir=True))
        cases.append(Case(f"{name} 1", make(1), args.reps, fresh_dir=True))
    print(f"(b) overhead: {m} trivial trials, {args.reps} reps", file=sys.stderr, flush=True)
    run_group(cases, args.root, work)
    lines = [f"## (b) The ask/tell loop's cost per trial: {m} trivial trials ({args.reps} reps, medians)", "",
             "trainer's trials are one batch of fit and validate on synthetic data, each a process of its own; "
             "Hydra's run in its process and train nothing. Marginal per trial = (T(M) - T(1)) / (M - 1).", "",
             f"| sweep | {m} trials | 1 trial | marginal per trial |", "|---|---|---|---|"]
    marg: Dict[str, Optional[float]] = {}
    for i, (name, _) in enumerate(pairs):
        cm, c1 = cases[2 * i], cases[2 * i + 1]
        if cm.failure or c1.failure:
            lines.append(f"| {name} | failed: {cm.failure or c1.failure} | | |")
            marg[name] = None
            continue
        marg[name] = (cm.median() - c1.median()) / (m - 1)
        lines.append(f"| {name} | {fmt_time(cm.median())} | {fmt_time(c1.median())} | {fmt_time(marg[name])} |")
    t_opt, t_rnd = marg["trainer, optuna (TPE)"], marg["trainer, random"]
    h_opt, h_bas = marg["Hydra + Optuna 2.10 (TPE)"], marg["Hydra, basic"]
    if None not in (t_opt, t_rnd, h_opt, h_bas):
        t_cost, h_cost = t_opt - t_rnd, h_opt - h_bas
        lines += ["", f"The search's own cost per trial (model-based minus plain sweep): trainer {fmt_time(t_cost)}, "
                  f"Hydra + Optuna {fmt_time(h_cost)}" +
                  (f"; ratio trainer / Hydra {t_cost / h_cost:.2f}" if h_cost > 0 else "") + "."]
    return lines + [""]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trainer", required=True)
    parser.add_argument("--peer-python", required=True)
    parser.add_argument("--configs", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--seeds", default="1")
    parser.add_argument("--cases", default="random,tpe_sh,asha,hydra_optuna")
    parser.add_argument("--overhead-trials", type=int, default=50)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--only", choices=["a", "b"], default=None)
    parser.add_argument("--from-json", default=None,
                        help="report (a) again from a search_runs.json that an earlier run saved, running nothing")
    parser.add_argument("--extra", action="append", default=[],
                        help="an override every trial of (a) gets (a quick try: trainer.limit_train_batches=0.05)")
    parser.add_argument("--results", required=True, help="folder for the markdown, the runs' json and the plot")
    args = parser.parse_args()
    args.peer_app = os.path.join(args.root, "bench", "peers", "hydra_optuna_search.py")
    started = datetime.datetime.now(datetime.timezone.utc)
    args.stamp = started.strftime("%Y-%m-%dT%H%M")
    os.makedirs(args.results, exist_ok=True)
    lines = ["# Search benchmark: trainer's TPE + pruning, random search and ASHA against Hydra's Optuna sweeper",
             "", f"- Date: {started.strftime('%Y-%m-%d %H:%M UTC')}", f"- trainer: `{args.trainer}`",
             f"- peer: `{args.peer_python}` (hydra-core 1.3.2, hydra-optuna-sweeper 1.2.0, optuna 2.10.1)",
             *machine_lines(), ""]
    work = tempfile.mkdtemp(prefix="trainer-search-bench-")
    try:
        if args.only in (None, "a"):
            lines += quality(args, work)
        if args.only in (None, "b"):
            lines += overhead(args, work)
    finally:
        if not os.environ.get("BENCH_KEEP"):
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}", file=sys.stderr)
    text = "\n".join(lines) + "\n"
    out = os.path.join(args.results, f"search_{args.stamp}.md")
    with open(out, "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
