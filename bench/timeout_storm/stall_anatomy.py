#!/usr/bin/env python3
"""Where a bystander's slow requests spent their time, from the scheduler's
own record.

Record a storm under `perf sched` on the monotonic clock, keeping storm.py's
run files:

  perf sched record -k CLOCK_MONOTONIC -a -o sched.data -- \\
      python3 bench/timeout_storm/storm.py --bin DIR --n 300000 --keep KEEP
  python3 bench/timeout_storm/stall_anatomy.py --perf-data sched.data --keep KEEP

For each request the bystander logged as slow (mcbp_load --slow-log-us), it
splits the latency, from the bystander's last switch-out before its answer
(it had sent the request and slept in poll) to its switch-in with the answer:
  - server: until the server's I/O thread woke the bystander (the answer was
    written); within it, that I/O thread's time running, runnable (woken and
    waiting for a CPU) and asleep, and who woke it meanwhile;
  - client CPU wait: the bystander woken, waiting for a CPU;
  - before send: the rest (the bystander between taking its start time and
    sending).
Timestamps: perf's CLOCK_MONOTONIC, the bystander's wall clock, joined by
the offset storm.py writes to KEEP/clock.json.
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess

LINE = re.compile(r"\s*([\d.]+) \[(\d+)\]\s+(\S+)\s+(.*)$")


def timehist(perf_data, start, end):
    """(wakes, runs) in [start, end]: wakes as (t, waker, wakee); runs as
    (switched_in, switched_out, sch_delay_s, task)."""
    out = subprocess.run(["perf", "sched", "timehist", "-w", "-i", perf_data,
                          "--time", f"{start:.6f},{end:.6f}"],
                         capture_output=True, text=True, check=True).stdout
    wakes, runs = [], []
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        t, task, rest = float(m.group(1)), m.group(3), m.group(4)
        if "awakened:" in rest:
            wakes.append((t, task, rest.split("awakened:")[1].strip()))
            continue
        fields = rest.split()
        if len(fields) >= 3:
            try:
                _, sch_ms, run_ms = (float(x) for x in fields[:3])
            except ValueError:
                continue
            runs.append((t - run_ms / 1000, t, sch_ms / 1000, task))
    return wakes, runs


def overlap(a0, a1, b0, b1):
    return max(0.0, min(a1, b1) - max(a0, b0))


def anatomy(perf_data, offset, request, pid):
    end = request["answered_unix_s"] - offset
    latency = request["latency_us"] / 1e6
    wakes, runs = timehist(perf_data, end - latency - 0.02, end + 0.005)
    # The bystander: the thread of its process (the writers are mcbp_load
    # too) that the server's I/O threads wake most.
    woken = collections.Counter(w for _, waker, w in wakes
                                if waker.startswith("mcbp_io") and w.startswith("mcbp_load")
                                and (pid is None or w.endswith((f"/{pid}]", f"[{pid}]"))))
    if not woken:
        return None
    bystander = woken.most_common(1)[0][0]
    mine = [r for r in runs if r[3] == bystander]
    # The run in which it took its answer.
    answer = next((r for r in mine if r[0] <= end + 0.0005 and r[1] >= end - 0.0005), None)
    if answer is None:
        return None
    woke = answer[0] - answer[2]
    sent = max((r[1] for r in mine if r[1] <= woke + 1e-6), default=end - latency)
    waker = next((wk for t, wk, w in reversed(wakes) if w == bystander and t <= woke + 3e-4), "?")
    io_runs = [r for r in runs if r[3] == waker]
    running = sum(overlap(r[0], r[1], sent, woke) for r in io_runs)
    runnable = sum(overlap(r[0] - r[2], r[0], sent, woke) for r in io_runs)
    woken_by = [f"{wk.split('[')[0]} at +{(t - sent) * 1000:.1f}"
                for t, wk, w in wakes if w == waker and sent <= t <= woke]
    return {
        "latency_ms": latency * 1000,
        "server_ms": (woke - sent) * 1000,
        "io_thread": waker,
        "io_running_ms": running * 1000,
        "io_runnable_ms": runnable * 1000,
        "io_asleep_ms": max(0.0, woke - sent - running - runnable) * 1000,
        "io_woken_by": woken_by,
        "client_cpu_wait_ms": answer[2] * 1000,
        "before_send_ms": max(0.0, latency - (answer[0] - sent)) * 1000,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--perf-data", required=True, help="perf sched record -k CLOCK_MONOTONIC")
    parser.add_argument("--keep", required=True, help="storm.py --keep's directory")
    parser.add_argument("--worst", type=int, default=8, help="requests per run, slowest first")
    args = parser.parse_args()
    with open(os.path.join(args.keep, "clock.json")) as f:
        offset = json.load(f)["unix_minus_monotonic_s"]
    print("| run | latency | server (the waker of the bystander, an I/O thread: running / "
          "runnable / asleep; woken by) "
          "| client CPU wait | before send |")
    print("|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(args.keep, "**", "*bystander*.json"),
                                 recursive=True)):
        with open(path) as f:
            slow = json.load(f).get("slow_requests", [])
        pid = None
        if os.path.exists(path + ".pid"):
            with open(path + ".pid") as f:
                pid = int(f.read())
        for request in sorted(slow, key=lambda r: -r["latency_us"])[:args.worst]:
            a = anatomy(args.perf_data, offset, request, pid)
            name = os.path.relpath(path, args.keep)
            if a is None:
                print(f"| {name} | {request['latency_us'] / 1000:.1f} ms | not in the record | | |")
                continue
            print(f"| {name} | {a['latency_ms']:.1f} ms | {a['server_ms']:.1f} ms "
                  f"({a['io_thread'].split('[')[0]}: "
                  f"{a['io_running_ms']:.1f} / {a['io_runnable_ms']:.1f} / "
                  f"{a['io_asleep_ms']:.1f}; {', '.join(a['io_woken_by']) or '—'}) "
                  f"| {a['client_cpu_wait_ms']:.1f} ms | {a['before_send_ms']:.1f} ms |")


if __name__ == "__main__":
    main()
