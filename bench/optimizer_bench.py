"""Issue 22's optimizer benchmark: one optimizer step on the CPU for the same parameter shapes,
gradients and threads, side by side in one run:

  - LibTorch's own Adam / AdamW / SGD from C++ (a chain of ATen operations per parameter) and
    trainer's fused CPU step (src/engine/optim/cpu_fused_optimizer.cpp), built against Debian's
    LibTorch 1.13 and, when build/wheel exists, the wheel's LibTorch 2.11 (bench/optimizer_bench/);
  - PyTorch 2.11's own optimizers from Python: the default (foreach: one multi-tensor kernel per
    operation) and fused=True (one kernel for all parameters).

With --trainer, the same in training: `trainer fit` (Fashion-MNIST, one epoch of the mlp, 60
batches of the cnn, trainer.profiler=simple) with optimizer.fused=null and false, interleaved,
reporting the profiler's mean forward + loss, backward and optimizer-step times per step.

Each side runs --reps times, interleaved; each run reports the median of --steps timed steps after
20 warm-up steps. The table gives the median over the runs, their range, and each row's time as a
multiple of PyTorch's default optimizer.

  bench/optimizer_bench.py --bench build/debian/bench/optimizer_bench [--bench build/wheel/...] \\
      --python ~/.cache/trainer/venv-torch-2.11.0/bin/python --out bench/results/optimizer_<time>.md
"""
import argparse
import datetime
import os
import statistics
import subprocess
import sys

from report_out import emit

MODELS = {
    # model=mlp (784-256-128-10), trainer's default model: 235,146 parameters.
    "mlp": "256x784,256,128x256,128,10x128,10",
    # model=cnn: conv 1->32 3x3 and 32->64 3x3 (no bias; each with batch norm), fc 3136->128->10.
    "cnn": "32x1x3x3,32,32,64x32x3x3,64,64,128x3136,128,10x128,10",
}

PEER = r"""
import sys, time, statistics, torch
shapes, steps, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(threads)
shapes = [[int(d) for d in s.split("x")] for s in shapes.split(",")]
def make(name, fused, params):
    kw = {"fused": True} if fused else {}
    if name == "adam": return torch.optim.Adam(params, lr=1e-3, **kw)
    if name == "adamw": return torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, **kw)
    return torch.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4, **kw)
for name in ("adam", "adamw", "sgd"):
    for fused in (False, True):
        torch.manual_seed(0)
        params = [torch.randn(s, requires_grad=True) for s in shapes]
        for p in params: p.grad = torch.randn(p.shape) * 1e-2
        opt = make(name, fused, params)
        for _ in range(20): opt.step()
        ms = []
        for _ in range(steps):
            t = time.perf_counter(); opt.step(); ms.append((time.perf_counter() - t) * 1e3)
        ms.sort()
        print("pytorch-%s-python %s %s %.4f %.4f" % (torch.__version__.split("+")[0], name,
              "fused" if fused else "foreach", ms[len(ms) // 2], ms[0]))
"""


def run(cmd, env):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    rows = []
    for line in out.splitlines():
        build, name, impl, median, _ = line.split()
        rows.append((build, name, impl, float(median)))
    return rows


FIT_MODELS = {"mlp": [], "cnn": ["model=cnn", "trainer.limit_train_batches=60"]}
PHASES = (("forward + loss", "forward"), ("backward", "backward"), ("optimizer step", "optimizer"))


def fit_phases(trainer, model, fused, env, work):
    """One `trainer fit` with the simple profiler: {phase: mean ms per step}."""
    run_dir = os.path.join(work, "run")
    subprocess.run(["rm", "-rf", run_dir], check=True)
    subprocess.run([trainer, "fit", "trainer.max_epochs=1", "trainer.profiler=simple", "trainer.enable_progress_bar=false",
                    "trainer.limit_val_batches=0", "trainer.num_sanity_val_steps=0", "optimizer.fused=" + fused,
                    "hydra.run.dir=" + run_dir] + FIT_MODELS[model], check=True, capture_output=True, env=env, cwd=work)
    phases = {}
    for line in open(os.path.join(run_dir, "fit-profiler.txt")):
        cells = [c.strip() for c in line.split("|")]
        for prefix, key in PHASES:
            if len(cells) > 3 and cells[1].startswith(prefix):
                phases[key] = float(cells[3].split()[0])
    return phases


def fit_table(args, env):
    import tempfile
    lines = ["## In training: `trainer fit` with optimizer.fused=null (the fused step) and false (LibTorch's loop)", "",
             "Fashion-MNIST, batch 128, %d runs each, interleaved; the simple profiler's mean ms per step, median over "
             "runs [min-max]." % args.reps, "",
             "| model | optimizer.fused | forward + loss | backward | optimizer step | sum |", "|---|---|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as work:
        for model in args.models.split(","):
            runs = {"null": [], "false": []}
            for _ in range(args.reps):
                for fused in ("null", "false"):
                    runs[fused].append(fit_phases(args.trainer, model, fused, env, work))
            for fused in ("null", "false"):
                cells = []
                for key in ("forward", "backward", "optimizer", "sum"):
                    vals = [sum(r[k] for _, k in PHASES) if key == "sum" else r[key] for r in runs[fused]]
                    cells.append("%.2f [%.2f-%.2f]" % (statistics.median(vals), min(vals), max(vals)))
                lines.append("| %s | %s | %s |" % (model, fused, " | ".join(cells)))
    return lines + [""]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", action="append", required=True, help="an optimizer_bench binary (repeatable)")
    ap.add_argument("--python", required=True, help="a Python with torch")
    ap.add_argument("--models", default="mlp,cnn")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--trainer", help="also time `trainer fit` with optimizer.fused=null and false")
    ap.add_argument("--out")
    args = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    lines = ["# Optimizer step on the CPU (%s)" % datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), "",
             "%d runs per side, interleaved; each the median of %d steps after 20 warm-up steps; %d threads. "
             "ms per step: median over runs [min-max]; x: time / PyTorch's default (foreach) optimizer's." %
             (args.reps, args.steps, args.threads), ""]
    for model in args.models.split(","):
        shapes = MODELS[model]
        numel = sum(eval("*".join(s.split("x"))) for s in shapes.split(","))
        results = {}
        for _ in range(args.reps):
            for bench in args.bench:
                for row in run([bench, "--shapes", shapes, "--steps", str(args.steps), "--threads",
                                str(args.threads)], env):
                    results.setdefault(row[:3], []).append(row[3])
            for row in run([args.python, "-c", PEER, shapes, str(args.steps), str(args.threads)], env):
                results.setdefault(row[:3], []).append(row[3])
        lines += ["## model=%s (%s parameters in %d tensors)" % (model, format(numel, ","), len(shapes.split(","))), "",
                  "| optimizer | build | step | ms per step | x PyTorch foreach |", "|---|---|---|---:|---:|"]
        for name in ("adam", "adamw", "sgd"):
            peer = [v for k, v in results.items() if k[1] == name and k[2] == "foreach"]
            peer_ms = statistics.median(peer[0]) if peer else None
            for key in sorted(k for k in results if k[1] == name):
                vals = results[key]
                med = statistics.median(vals)
                ratio = "%.2f" % (med / peer_ms) if peer_ms else "-"
                lines.append("| %s | %s | %s | %.3f [%.3f-%.3f] | %s |" % (name, key[0], key[2], med, min(vals),
                                                                       max(vals), ratio))
        lines.append("")
    if args.trainer:
        lines += fit_table(args, env)
    text = "\n".join(lines)
    emit(text, args.out)


if __name__ == "__main__":
    sys.exit(main())
