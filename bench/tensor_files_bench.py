"""Issue 19's tensor-files benchmark: time to the first training step, and peak memory, on a 4 GiB
.npy file, `trainer fit data=tensors` (memory-mapped) against plain PyTorch reading the same file
two ways: NumPy's memory map (np.load(mmap_mode="r")) behind a Dataset and DataLoader, and the file
loaded whole (np.load), the way a script that does not think about it reads its arrays.

Every side is timed from its process's start to one optimizer step of the same mlp on its first
shuffled batch of 128, and its own peak RSS (GNU time's %M). Each runs cold (the page cache dropped
first, when this user may: /proc/sys/vm/drop_caches) and then warm (the file just read).

The file is made once (--dir; about 4.3 GB): inputs.npy, uint8 [N, 4096] with N = 1,048,576 rows
of random bytes, and targets.npy, int64 [N] in 0..9.

  bench/tensor_files_bench.py --trainer build/debian/trainer \\
      --python ~/.cache/trainer/venv-torch-2.11.0/bin/python --dir /tmp/tensor_files --out result.md
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import tempfile
import time

MAKE_FILES = r"""
import sys
import numpy as np
out, rows, width = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
inputs = np.lib.format.open_memmap(out + "/inputs.npy.part", mode="w+", dtype=np.uint8, shape=(rows, width))
chunk = 65536
for start in range(0, rows, chunk):
    inputs[start:start + chunk] = rng.integers(0, 256, size=(min(chunk, rows - start), width), dtype=np.uint8)
inputs.flush()
del inputs
np.save(out + "/targets.npy", rng.integers(0, 10, size=rows, dtype=np.int64))
import os
os.replace(out + "/inputs.npy.part", out + "/inputs.npy")
"""

# PyTorch's side: from the interpreter's start (the caller times the process) to one step of the
# same mlp (4096-256-128-10) on the first shuffled batch. argv: DIR mmap|whole
PEER_FIRST_STEP = r"""
import sys
import numpy as np
import torch
from torch import nn
mode = sys.argv[2]
inputs = np.load(sys.argv[1] + "/inputs.npy", mmap_mode="r" if mode == "mmap" else None)
targets = np.load(sys.argv[1] + "/targets.npy")

class Arrays(torch.utils.data.Dataset):
    def __len__(self):
        return len(targets)

    def __getitem__(self, i):
        return torch.from_numpy(np.array(inputs[i], dtype=np.float32) / 255.0), int(targets[i])

loader = torch.utils.data.DataLoader(Arrays(), batch_size=128, shuffle=True)
model = nn.Sequential(nn.Flatten(), nn.Linear(4096, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
optimizer = torch.optim.Adam(model.parameters(), 1e-3)
x, y = next(iter(loader))
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
optimizer.step()
print("first step", len(targets), flush=True)
"""


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def drop_caches() -> bool:
    try:
        subprocess.run(["sync"], check=True)
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("1\n")
        return True
    except OSError:
        return False


def timed(argv):
    """Runs argv; its wall time, exit code, output and peak RSS (MiB, from wait4)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    return {"rc": proc.returncode, "wall_s": wall, "out": out, "err": err}


def with_rss(argv):
    """As timed(), under /usr/bin/time -f %M: the process's own peak RSS in MiB."""
    r = timed(["/usr/bin/time", "-f", "maxrss_kb=%M"] + argv)
    m = re.search(r"maxrss_kb=(\d+)", r["err"])
    r["peak_rss_mib"] = int(m.group(1)) / 1024 if m else None
    return r


def trainer_first_step(opts, run_dir):
    argv = [opts.trainer, "fit", "data=tensors", f"data.inputs={opts.dir}/inputs.npy",
            f"data.targets={opts.dir}/targets.npy", "data.batch_size=128", "model=mlp", "model.hidden_sizes=[256,128]",
            "trainer.max_steps=1", "test_after_fit=false", "trainer.enable_progress_bar=false",
            f"hydra.run.dir={run_dir}"]
    r = with_rss(argv)
    text = r["out"] + r["err"]
    first = re.search(r"first training step done ([0-9.]+) s after the process started", text)
    return {"argv": argv, "rc": r["rc"], "wall_s": r["wall_s"], "peak_rss_mib": r["peak_rss_mib"],
            "first_step_s": float(first.group(1)) if first else None,
            "error": None if r["rc"] == 0 else text[-2000:]}


def peer_first_step(opts, mode):
    r = with_rss([opts.python, "-c", PEER_FIRST_STEP, opts.dir, mode])
    return {"mode": mode, "rc": r["rc"], "first_step_s": r["wall_s"], "peak_rss_mib": r["peak_rss_mib"],
            "error": None if r["rc"] == 0 else r["err"][-2000:]}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--trainer", required=True)
    p.add_argument("--python", required=True, help="a Python with torch and numpy")
    p.add_argument("--dir", required=True, help="where inputs.npy and targets.npy are (made when absent)")
    p.add_argument("--rows", type=int, default=1 << 20)
    p.add_argument("--width", type=int, default=4096)
    p.add_argument("--out", required=True)
    opts = p.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc)
    os.makedirs(opts.dir, exist_ok=True)
    if not os.path.exists(os.path.join(opts.dir, "inputs.npy")):
        t = time.perf_counter()
        subprocess.run([opts.python, "-c", MAKE_FILES, opts.dir, str(opts.rows), str(opts.width)], check=True)
        print(f"wrote the files in {time.perf_counter() - t:.0f} s", flush=True)
    size_gib = os.path.getsize(os.path.join(opts.dir, "inputs.npy")) / 2**30
    records = {"load_start": load(), "inputs_gib": size_gib}
    cold = drop_caches()
    records["cold"] = cold
    with tempfile.TemporaryDirectory() as tmp:
        for when in (["cold", "warm"] if cold else ["warm"]):
            for side in ("trainer", "mmap", "whole"):
                if when == "cold":
                    drop_caches()
                key = f"{side}_{when}"
                records[key] = (trainer_first_step(opts, os.path.join(tmp, key)) if side == "trainer"
                                else peer_first_step(opts, side))
                print(key, {k: v for k, v in records[key].items() if k not in ("argv", "error")}, flush=True)
    records["load_end"] = load()
    r = records
    fmt = lambda x, f: "n/a" if x is None else f.format(x)
    lines = [f"tensor files benchmark {started:%Y-%m-%d %H:%M} UTC: inputs.npy uint8 {opts.rows} x {opts.width} "
             f"({size_gib:.2f} GiB) + targets.npy int64, mlp 4096-256-128-10, batch 128, cores {os.cpu_count()}, "
             f"load {r['load_start']} -> {r['load_end']}", "",
             "| page cache | side | process start to first step (s) | peak RSS (MiB) | trainer sooner by |",
             "|---|---|---:|---:|---:|"]
    for when in (["cold", "warm"] if cold else ["warm"]):
        t = r[f"trainer_{when}"]
        for side, label in (("trainer", "trainer fit data=tensors (memory-mapped)"),
                            ("mmap", "PyTorch: np.load(mmap_mode='r') + DataLoader"),
                            ("whole", "PyTorch: np.load (the whole file) + DataLoader")):
            s = r[f"{side}_{when}"]
            ratio = (s["first_step_s"] / t["first_step_s"]) if side != "trainer" and s["first_step_s"] and \
                t["first_step_s"] else None
            lines.append(f"| {when} | {label} | {fmt(s['first_step_s'], '{:.2f}')} | "
                         f"{fmt(s['peak_rss_mib'], '{:.0f}')} | {fmt(ratio, '{:.1f}x') if side != 'trainer' else ''} |")
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    with open(opts.out, "w") as f:
        f.write(text + "\nraw (JSON):\n" + json.dumps(records, indent=1) + "\n")
    return 0 if all(v.get("error") is None for v in records.values() if isinstance(v, dict)) else 1


if __name__ == "__main__":
    raise SystemExit(main())
