#!/usr/bin/env python3
"""What a fit-trace.json holds, for the GPU checks: events per category, the trainer's ranges and
whether they nest, the GPU kernels and copies, and how much of each recorded step the GPU was busy.

    trace_summary.py TRACE_JSON

Exits 1 when the trace has no train_step# range, a phase range that is not inside a step, or (with
a CUDA device in the trace) no kernel events.
"""
import collections
import json
import sys

PHASES = ("data", "forward", "backward", "optimizer")


def main() -> int:
    with open(sys.argv[1]) as f:
        trace = json.load(f)
    events = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X"]
    cats = collections.Counter(e.get("cat", "") for e in events)
    print("events per category:", dict(cats.most_common()))
    print("deviceProperties:", [d.get("name") for d in trace.get("deviceProperties", [])])

    annotations = [e for e in events if e.get("cat") == "user_annotation"]
    steps = sorted((e for e in annotations if e["name"].startswith("train_step#")), key=lambda e: e["ts"])
    print("steps:", [e["name"] for e in steps])
    problems = []
    if not steps:
        problems.append("no train_step# range")
    for phase in PHASES:
        ranges = [e for e in annotations if e["name"] == phase]
        outside = [r for r in ranges
                   if not any(s["ts"] <= r["ts"] and r["ts"] + r["dur"] <= s["ts"] + s["dur"] for s in steps)]
        print(f"phase {phase}: {len(ranges)} ranges, {len(outside)} outside every train_step#")
        if not ranges or outside:
            problems.append(f"phase {phase}: {len(ranges)} ranges, {len(outside)} outside a step")

    kernels = [e for e in events if e.get("cat") == "kernel"]
    copies = [e for e in events if e.get("cat") in ("gpu_memcpy", "gpu_memset")]
    gpu_ranges = [e for e in events if e.get("cat") == "gpu_user_annotation"]
    runtime = [e for e in events if e.get("cat") == "cuda_runtime"]
    print(f"kernels: {len(kernels)}, gpu copies/memsets: {len(copies)}, cuda runtime calls: {len(runtime)}, "
          f"gpu_user_annotation ranges: {len(gpu_ranges)} ({sorted({e['name'] for e in gpu_ranges})[:8]})")
    by_name = collections.defaultdict(float)
    for k in kernels:
        by_name[k["name"]] += k["dur"]
    total = sum(by_name.values())
    for name, dur in sorted(by_name.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {dur / max(total, 1e-9):6.1%}  {dur / 1000:8.2f} ms  {name[:110]}")
    for c in copies[:3]:
        print(f"  copy: {c['name']} {c['dur']} us bytes={c.get('args', {}).get('bytes')}")
    if cats.get("kernel", 0) == 0 and trace.get("deviceProperties"):
        problems.append("a CUDA device but no kernel events")
    # GPU busy share of each recorded step: kernels that start inside the step's wall-clock window.
    for s in steps:
        inside = [k for k in kernels if s["ts"] <= k["ts"] < s["ts"] + s["dur"]]
        busy = sum(k["dur"] for k in inside)
        print(f"{s['name']}: {s['dur'] / 1000:.2f} ms wall, {len(inside)} kernels, kernel time {busy / 1000:.2f} ms "
              f"({busy / max(s['dur'], 1e-9):.0%})")
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
