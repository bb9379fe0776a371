"""logger=mlflow's cost to training, and the synchronous logging it replaces.

A real `mlflow server` (SQLite store) runs on the loopback interface. `trainer fit` (the mlp on the
real Fashion-MNIST, --epochs epochs, `trainer.log_every_n_steps=1` so that every one of its 422
steps a epoch logs: the heaviest logging there is) runs with:

  csv          logger=csv, the baseline
  mlflow-rest  logger=mlflow to the server
  mlflow-file  logger=mlflow to an mlruns/ file store
  mlflow-down  logger=mlflow to a port nothing listens on (the server is down)

interleaved, --reps times each; the figure is each run's "fit finished in X s", median over reps,
and its ratio to csv. The peer: what Lightning's MLFlowLogger does at each logging step, one
synchronous `MlflowClient.log_batch` of that step's metrics, timed against the same server
(milliseconds a call, median of --calls); that cost falls on the training loop there, and is the
work trainer's background thread does instead.

  bench/mlflow_bench.py --trainer build/debian/trainer \\
      --mlflow-python ~/.cache/trainer/venv-mlflow-3.17.2/bin/python --out result.md
"""
import argparse
import datetime
import os
import re
import shutil
import socket
import statistics
import subprocess
import time

PEER = r"""
import sys, time
from mlflow.tracking import MlflowClient
from mlflow.entities import Metric
uri, calls = sys.argv[1], int(sys.argv[2])
client = MlflowClient(tracking_uri=uri)
exp = client.get_experiment_by_name("peer") or client.get_experiment(client.create_experiment("peer"))
run = client.create_run(exp.experiment_id)
names = ["train/loss", "train/acc", "samples_per_sec", "batches_per_sec", "flops_per_sec", "lr-Adam", "epoch"]
times = []
for step in range(calls):
    now = int(time.time() * 1000)
    metrics = [Metric(n, 0.5, now, step) for n in names]
    t = time.perf_counter()
    client.log_batch(run.info.run_id, metrics=metrics)
    times.append(time.perf_counter() - t)
times.sort()
print(times[len(times) // 2] * 1000, sum(times) * 1000 / len(times))
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fit_seconds(trainer, cwd, extra, epochs):
    run_dir = os.path.join(cwd, "run")
    shutil.rmtree(run_dir, ignore_errors=True)
    cmd = [trainer, "fit", "model=mlp", "trainer.max_epochs=%d" % epochs, "test_after_fit=false",
           "trainer.log_every_n_steps=1", "trainer.enable_progress_bar=false", "hydra.run.dir=" + run_dir] + extra
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("failed: %s\n%s" % (" ".join(cmd), out.stderr[-3000:]))
    found = re.search(r"fit finished in ([0-9.]+) s", out.stderr)
    return float(found.group(1)), out.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trainer", required=True)
    parser.add_argument("--mlflow-python", required=True)
    parser.add_argument("--dir", default="/tmp/mlflow_bench")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    trainer = os.path.abspath(args.trainer)
    shutil.rmtree(args.dir, ignore_errors=True)
    os.makedirs(args.dir)
    port = free_port()
    server = subprocess.Popen(
        [args.mlflow_python, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
         "--backend-store-uri", "sqlite:///" + os.path.join(args.dir, "mlflow.db"),
         "--default-artifact-root", os.path.join(args.dir, "artifacts"), "--workers", "1"],
        stdout=open(os.path.join(args.dir, "server.log"), "w"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        for _ in range(600):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        uri = "http://127.0.0.1:%d" % port
        peer = subprocess.run([args.mlflow_python, "-c", PEER, uri, str(args.calls)], capture_output=True, text=True)
        if peer.returncode != 0:
            raise SystemExit(peer.stderr)
        peer_median_ms, peer_mean_ms = (float(v) for v in peer.stdout.split())
        cases = {
            "csv": ["logger=csv"],
            "mlflow-rest": ["logger=mlflow", "logger.mlflow.tracking_uri=" + uri],
            "mlflow-file": ["logger=mlflow", "logger.mlflow.tracking_uri=" + os.path.join(args.dir, "mlruns")],
            "mlflow-down": ["logger=mlflow", "logger.mlflow.tracking_uri=http://127.0.0.1:%d" % free_port()],
        }
        times = {name: [] for name in cases}
        fit_seconds(trainer, args.dir, cases["csv"], 1)  # warm the page cache and the engine
        for rep in range(args.reps):
            for name, extra in cases.items():
                seconds, _ = fit_seconds(trainer, args.dir, extra, args.epochs)
                times[name].append(seconds)
                print("rep %d %-12s %.2f s" % (rep, name, seconds), flush=True)
    finally:
        os.killpg(server.pid, 15)
        server.wait()
    steps = 422 * args.epochs
    base = statistics.median(times["csv"])
    load = os.getloadavg()[0]
    lines = ["## MLflow: logger=mlflow's cost to training — %s" % datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
             "",
             "`bench/mlflow_bench.py`: `trainer fit model=mlp` on Fashion-MNIST, %d epochs (%d steps), "
             "`trainer.log_every_n_steps=1` (every step logs), median of %d interleaved runs; load %.1f at the end." %
             (args.epochs, steps, args.reps, load),
             "",
             "| logger | fit (s), median | runs (s) | / csv |",
             "|---|---|---|---|"]
    for name in cases:
        median = statistics.median(times[name])
        lines.append("| %s | %.2f | %s | %.3f |" % (name, median, ", ".join("%.2f" % t for t in times[name]),
                                                    median / base))
    lines += ["",
              "The peer, Lightning's MLFlowLogger: one synchronous `MlflowClient.log_batch` (7 metrics) a logging "
              "step, on the training loop: %.1f ms a call (median of %d; mean %.1f ms), so %.1f s of this run's %d "
              "logging steps (%.0f%% of the csv run's fit time) would be spent waiting on the server." %
              (peer_median_ms, args.calls, peer_mean_ms, peer_mean_ms * steps / 1000, steps,
               100 * peer_mean_ms * steps / 1000 / base)]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
