"""Writes bench/suite.sh's results file and plot: a header (date, machine, load average, wall time),
a table of every ratio the stages measured (their --summary JSON lines), each stage's own tables,
then every run's raw numbers (JSON lines). The plot shows each ratio as a bar, turned so that
right of 1 always means the trainer is faster (per-epoch time ratios are inverted), on a log axis
(the config rows are 100-10,000x). The plot needs matplotlib (the bench venv has it); without it
the results file says so and the rest is written anyway."""
import argparse
import json
import os
import platform
from typing import List, Optional, Tuple

RAW_MARKERS = ("raw runs", "## raw runs")


def read_section(path: str) -> Tuple[str, str]:
    """(tables, raw lines) of one stage's result file: everything before the raw-runs marker is tables."""
    if not os.path.exists(path):
        return "(no result file: the stage failed before writing one)", ""
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    for i, line in enumerate(lines):
        if line.startswith(RAW_MARKERS):
            return "\n".join(lines[:i]).strip(), "\n".join(lines[i + 1:]).strip()
    return "\n".join(lines).strip(), ""


def advantage(row: dict) -> Optional[float]:
    """The row's ratio turned so that > 1 means the trainer is faster."""
    ratio = row.get("ratio")
    if not ratio:
        return None
    return ratio if row["better"] == "higher" else 1.0 / ratio


def verdict(row: dict) -> str:
    target, ratio = row.get("target"), row.get("ratio")
    if target is None:
        return ""
    value = row.get("value") if ratio is None else ratio
    if value is None:
        return "not measured"
    ok = value >= target if row["better"] == "higher" else value <= target
    return "met" if ok else "**missed**"


def target_text(row: dict) -> str:
    target = row.get("target")
    if target is None:
        return "-"
    return (">= " if row["better"] == "higher" else "<= ") + f"{target:g}"


def plot(rows: List[dict], png: str, title: str) -> Optional[str]:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "no plot: matplotlib is not installed in this Python"
    bars = [(f"[{r['bench']}] {r['row']}", advantage(r), verdict(r)) for r in rows if advantage(r)]
    if not bars:
        return "no plot: no ratio was measured"
    fig, ax = plt.subplots(figsize=(11, 0.32 * len(bars) + 1.8), dpi=90)
    labels = [b[0] for b in bars][::-1]
    values = [b[1] for b in bars][::-1]
    colours = ["#c0392b" if b[2] == "**missed**" else ("#2e86c1" if v >= 1 else "#e67e22")
               for b, v in zip(bars[::-1], values)]
    # bars grow from 1 (a tie) to the value, rightwards when the trainer is faster
    ax.barh(range(len(bars)), [v - 1.0 for v in values], left=1.0, color=colours)
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(bars)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_xlabel("trainer's advantage (log scale; > 1: trainer faster; per-epoch time ratios inverted)\n"
                  "blue: faster, orange: slower, red: misses its target", fontsize=8)
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:.3g}" if v < 1000 else f" {v:,.0f}", va="center", fontsize=7)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(png)
    return None


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--mode", required=True)
    p.add_argument("--summary", required=True)
    p.add_argument("--section", action="append", default=[], help="TITLE|FILE|SECONDS|EXIT")
    p.add_argument("--out", required=True)
    p.add_argument("--png", required=True)
    p.add_argument("--started", required=True)
    p.add_argument("--wall", type=int, required=True)
    p.add_argument("--load-start", required=True)
    p.add_argument("--load-end", required=True)
    p.add_argument("--trainer", required=True)
    p.add_argument("--python", required=True)
    a = p.parse_args()

    rows = [json.loads(line) for line in open(a.summary)] if os.path.exists(a.summary) else []
    try:
        import torch
        torch_text = f"torch {torch.__version__}"
        if torch.cuda.is_available():
            torch_text += f", {torch.cuda.get_device_name(0)}"
    except ImportError:
        torch_text = "torch not importable"
    try:
        import lightning
        torch_text += f", lightning {lightning.__version__}"
    except ImportError:
        pass
    cpu = "unknown CPU"
    if os.path.exists("/proc/cpuinfo"):
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    title = f"trainer benchmark suite, {a.mode}, {a.started}"
    problem = plot(rows, a.png, title.replace(", ", "\n", 1) + f"\nload average {a.load_start} -> {a.load_end}")
    out = [f"# {title}", "",
           f"- Machine: {os.cpu_count()} logical CPUs ({cpu}), {platform.system()} {platform.release()}; "
           f"{torch_text}; Python {platform.python_version()} ({a.python})",
           f"- trainer: `{a.trainer}`",
           f"- Wall time of the suite: {a.wall // 60} min {a.wall % 60} s; load average (1/5/15 min) at the start "
           f"{a.load_start}, at the end {a.load_end}",
           f"- Plot: `{os.path.basename(a.png)}`" if problem is None else f"- Plot: {problem}", "",
           "## Ratios", "",
           "Trainer against each peer, medians of per-repetition ratios (each stage's tables below give the "
           "ranges). Throughput and Hydra rows: > 1 means the trainer is faster; per-epoch time rows: < 1 means "
           "the trainer is faster.", "",
           "| stage | row | measure | ratio | runs | target | |", "|---|---|---|---:|---:|---|---|"]
    for r in rows:
        value = r.get("ratio")
        shown = "n/a" if value is None and r.get("value") is None else (
            f"{value:.3f}" if value is not None and value < 10 else
            (f"{value:,.0f}x" if value is not None else f"{r['value']:.3f} s"))
        out.append(f"| {r['bench']} | {r['row']} | {r['measure']} | {shown} | {r.get('runs', '')} | "
                   f"{target_text(r)} | {verdict(r)} |")
    raws = []
    for spec in a.section:
        name, path, seconds, rc = spec.split("|")
        tables, raw = read_section(path)
        failed = "" if rc == "0" else f" — **exit status {rc}**: some runs failed (their errors are in the raw lines)"
        out += ["", f"## {name}", "", f"({seconds} s{failed})", "", tables]
        if raw:
            raws += ["", f"### {name}", "", "```", raw, "```"]
    out += ["", "## Raw runs", "", "One JSON object per process (per command for the config stage).", ""] + raws
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
