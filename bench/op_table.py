#!/usr/bin/env python3
"""The per-operator account of a CPU training step (issue 22): from a `trainer fit
trainer.profiler=pytorch` trace (fit-trace.json), each ATen operator's own time (its duration less
that of the operators it called) per recorded step, within the trainer's forward, backward and
optimizer ranges, largest first.

    bench/op_table.py RUN_DIR/fit-trace.json [--top 12]
"""
import argparse
import collections
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    with open(args.trace) as f:
        events = [e for e in json.load(f).get("traceEvents", []) if e.get("ph") == "X"]
    steps = [e for e in events if e.get("cat") == "user_annotation" and e["name"].startswith("train_step#")]
    phases = [e for e in events if e.get("cat") == "user_annotation" and e["name"] in ("forward", "backward", "optimizer")]
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    # Own time: an op's duration less its direct children's, per thread (events nest by time).
    by_thread = collections.defaultdict(list)
    for e in ops:
        by_thread[e.get("tid")].append(e)
    own = {}
    for tid, evs in by_thread.items():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
                stack.pop()
            own[id(e)] = e["dur"]
            if stack:
                own[id(stack[-1])] -= e["dur"]
            stack.append(e)

    def phase_of(e):
        for p in phases:
            if p["ts"] <= e["ts"] < p["ts"] + p["dur"]:
                return p["name"]
        return "other"

    n_steps = max(1, len(steps))
    step_us = sum(s["dur"] for s in steps) / n_steps
    print("%d recorded steps, %.2f ms each on average" % (len(steps), step_us / 1e3))
    table = collections.defaultdict(lambda: collections.defaultdict(lambda: [0.0, 0]))
    for e in ops:
        cell = table[phase_of(e)][e["name"]]
        cell[0] += own[id(e)]
        cell[1] += 1
    for phase in ("forward", "backward", "optimizer", "other"):
        rows = table.get(phase)
        if not rows:
            continue
        total = sum(v[0] for v in rows.values()) / n_steps
        print("\n%s: operators' own time %.3f ms per step" % (phase, total / 1e3))
        print("| operator | calls per step | own ms per step |\n|---|---:|---:|")
        for name, (us, calls) in sorted(rows.items(), key=lambda kv: -kv[1][0])[:args.top]:
            print("| %s | %.1f | %.3f |" % (name, calls / n_steps, us / n_steps / 1e3))


if __name__ == "__main__":
    sys.exit(main())
