#!/usr/bin/env python3
"""Medians of a run's metrics.csv columns, for the GPU monitor checks.

    metrics_summary.py RUN_DIR [COLUMN_PREFIX ...]

Prints one line per column whose name starts with a prefix (all columns without one): the column,
how many rows logged it, and the median of its values. The first logged row of each column is
left out when there are more than two (it holds start-up: the first step's cuDNN autotuning and the
allocator's growth).
"""
import csv
import statistics
import sys


def main() -> int:
    run_dir, prefixes = sys.argv[1], sys.argv[2:]
    with open(f"{run_dir}/metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print(f"{run_dir}/metrics.csv: no rows")
        return 1
    for column in rows[0].keys():
        if prefixes and not any(column.startswith(p) for p in prefixes):
            continue
        values = [float(r[column]) for r in rows if r.get(column) not in (None, "")]
        if not values:
            continue
        steady = values[1:] if len(values) > 2 else values
        print(f"{column}: n={len(values)} median={statistics.median(steady):.6g} "
              f"min={min(steady):.6g} max={max(steady):.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
