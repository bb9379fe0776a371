"""Issue 19's CSV load benchmark: reading a table into float32 inputs, trainer against pandas.

The table is the real Fashion-MNIST written as Kaggle's CSV (label, pixel1 .. pixel784; 60,000
rows, 785 integer columns, ~125 MB) and, to weigh floats too, the same pixels / 255 with six
decimals (~290 MB). Both are made once, into --dir.

  pandas   `pandas.read_csv(path)` and the feature matrix as float32 (`df.drop(columns="label")
           .to_numpy(numpy.float32)`), timed inside Python (imports excluded), the best of --reps.
  trainer  `trainer fit data=csv` stopped after one step; its log's "data: read <path>, ... in X s"
           (mapping, tokenising and parsing every cell) plus "data: encoded ... in Y s" (the
           classes, the split, the training split's statistics and the float32 input tensor), the
           best of --reps.

  bench/csv_load_bench.py --trainer build/debian/trainer \\
      --python ~/.cache/trainer/venv-torch-2.11.0/bin/python --dir /tmp/csv_bench --out result.md
"""
import argparse
import datetime
import os
import re
import shutil
import subprocess

MAKE = r"""
import gzip, struct, sys, numpy as np, pandas as pd
out, idx = sys.argv[1], sys.argv[2]
with gzip.open(idx + "/train-images-idx3-ubyte.gz", "rb") as f:
    _, n, r, c = struct.unpack(">IIII", f.read(16)); pixels = np.frombuffer(f.read(), np.uint8).reshape(n, r * c)
with gzip.open(idx + "/train-labels-idx1-ubyte.gz", "rb") as f:
    f.read(8); labels = np.frombuffer(f.read(), np.uint8)
names = ["pixel%d" % i for i in range(1, 785)]
ints = pd.DataFrame(pixels, columns=names); ints.insert(0, "label", labels)
ints.to_csv(out + "/fashion_int.csv", index=False)
floats = pd.DataFrame(pixels / 255.0, columns=names); floats.insert(0, "label", labels)
floats.to_csv(out + "/fashion_float.csv", index=False, float_format="%.6f")
"""

PANDAS = r"""
import sys, time, numpy as np, pandas as pd
path, reps = sys.argv[1], int(sys.argv[2])
best = 1e9
for _ in range(reps):
    t = time.perf_counter()
    df = pd.read_csv(path)
    x = df.drop(columns="label").to_numpy(np.float32)
    best = min(best, time.perf_counter() - t)
    del df, x
print(best)
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trainer", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--dir", default="/tmp/csv_bench")
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    if not os.path.exists(os.path.join(args.dir, "fashion_float.csv")):
        subprocess.run([args.python, "-c", MAKE, args.dir, args.data], check=True)

    rows = []
    for name in ("fashion_int.csv", "fashion_float.csv"):
        path = os.path.join(args.dir, name)
        size = os.path.getsize(path) / 1e6
        pandas_s = float(subprocess.run([args.python, "-c", PANDAS, path, str(args.reps)], check=True,
                                        capture_output=True, text=True).stdout)
        trainer_s = 1e9
        for rep in range(args.reps):
            run_dir = os.path.join(args.dir, "run%d" % rep)
            shutil.rmtree(run_dir, ignore_errors=True)
            run = subprocess.run([args.trainer, "fit", "data=csv", "data.path=" + path, "data.target=label",
                                  "trainer.max_steps=1", "trainer.limit_val_batches=0", "test_after_fit=false",
                                  "hydra.run.dir=" + run_dir],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                raise SystemExit(run.stderr)
            read = re.search(r"data: read .*? in ([0-9.]+) s", run.stderr)
            encoded = re.search(r"data: encoded .*? in ([0-9.]+) s", run.stderr)
            trainer_s = min(trainer_s, float(read.group(1)) + float(encoded.group(1)))
        rows.append((name, size, pandas_s, trainer_s))

    load = os.getloadavg()[0]
    lines = ["CSV load, %s UTC, load average %.2f at the end, best of %d" %
             (datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"), load, args.reps), "",
             "| table | MB | pandas.read_csv + to_numpy (s) | trainer (s) | pandas / trainer |",
             "|---|---:|---:|---:|---:|"]
    for name, size, p, t in rows:
        lines.append("| %s | %.0f | %.2f | %.2f | %.2f |" % (name, size, p, t, p / t))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
