#!/usr/bin/env python3
"""Durable writes through a real replica process, beside plain SETs on the same cluster.

Starts a cluster of two syncwrite-server processes on loopback (one bucket of one
vbucket, active on n1 and replicated over DCP to n2), then runs bench/mcbp_load
against n1 --rounds times, each round a plain SET run and a durable (majority) SET
run back to back, 4 connections x 32 in flight. For each run it records n1's ops/s
and the CPU time of both processes per write (utime + stime from /proc, before and
after); the ratios are the medians of the rounds' ratios (durable over plain), so a
slow minute of the machine falls on both halves of one ratio.

Then one plain SET run of --lag-duration seconds: every 0.5 s it samples the
active's and the replica's high seqno of the vbucket (GET_ALL_VB_SEQNOS on each)
and both processes' RSS, and prints the replica's largest lag and the RSS at the
start and the end.

Usage (./dev bench replication runs it):
  replication_pair.py --bin build/release/bin [--duration 10] [--rounds 3]
                      [--lag-duration 60] [--json out.json]
"""

import argparse
import json
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from loopback import machine, start_cluster  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_bytes(pid):
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * PAGE


def high_seqno(port):
    """vbucket 0's high seqno (GET_ALL_VB_SEQNOS, no extras: every vbucket not dead)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        select = b"default"
        s.sendall(struct.pack(">BBHBBHIIQ", 0x80, 0x89, len(select), 0, 0, 0, len(select), 1, 0)
                  + select)
        s.sendall(struct.pack(">BBHBBHIIQ", 0x80, 0x48, 0, 0, 0, 0, 0, 2, 0))
        answers = {}
        buffer = b""
        while len(answers) < 2:
            buffer += s.recv(65536)
            while len(buffer) >= 24:
                body = struct.unpack(">I", buffer[8:12])[0]
                if len(buffer) < 24 + body:
                    break
                opaque = struct.unpack(">I", buffer[12:16])[0]
                answers[opaque] = buffer[24:24 + body]
                buffer = buffer[24 + body:]
        value = answers[2]
        return struct.unpack(">Q", value[2:10])[0] if len(value) >= 10 else 0


def run_load(bin_dir, port, flags, duration, workdir):
    out = os.path.join(workdir, "run.json")
    command = [os.path.join(bin_dir, "mcbp_load"), "--port", str(port), "--user", "",
               "--vbuckets", "1", "--connections", "4", "--depth", "32",
               "--duration", str(duration), "--json", out] + flags
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        sys.exit(f"replication_pair: {' '.join(command)} failed:\n{done.stdout}")
    with open(out) as f:
        return json.load(f)


def measured_run(bin_dir, processes, ports, flags, duration, workdir):
    before = {n: cpu_seconds(p.pid) for n, p in processes.items()}
    result = run_load(bin_dir, ports["n1"], flags, duration, workdir)
    after = {n: cpu_seconds(p.pid) for n, p in processes.items()}
    ops = result["ops"]
    if result.get("errors"):
        sys.exit(f"replication_pair: mcbp_load reported errors: {result['errors']}")
    cpu = {n: after[n] - before[n] for n in processes}
    return {"ops_per_s": result["ops_per_s"], "p99_us": result["latency_us"]["p99"],
            "statuses": result["statuses"],
            "cpu_us_per_op": {n: 1e6 * cpu[n] / ops for n in cpu},
            "cpu_us_per_op_both": 1e6 * sum(cpu.values()) / ops}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lag-duration", type=float, default=60)
    parser.add_argument("--json")
    args = parser.parse_args()
    plain = ["--op", "set"]
    durable = ["--op", "set", "--durability", "majority", "--durability-timeout-ms", "5000"]
    report = {"machine": machine(), "rounds": []}
    with tempfile.TemporaryDirectory() as workdir:
        processes, ports = start_cluster(
            args.bin, workdir, ("n1", "n2"), {"default": {"num_replicas": 1, "max_vbuckets": 1}},
            "replication_pair")
        try:
            for _ in range(args.rounds):
                report["rounds"].append({
                    "plain": measured_run(args.bin, processes, ports, plain, args.duration,
                                          workdir),
                    "durable": measured_run(args.bin, processes, ports, durable, args.duration,
                                            workdir),
                })
            lag = {"samples": []}
            load = subprocess.Popen(
                [os.path.join(args.bin, "mcbp_load"), "--port", str(ports["n1"]), "--user", "",
                 "--vbuckets", "1", "--connections", "4", "--depth", "32", "--op", "set",
                 "--duration", str(args.lag_duration)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            while load.poll() is None:
                active = high_seqno(ports["n1"])
                replica = high_seqno(ports["n2"])
                lag["samples"].append({
                    "lag": max(0, active - replica),
                    "rss": {n: rss_bytes(p.pid) for n, p in processes.items()}})
                time.sleep(0.5)
            report["lag"] = lag
        finally:
            for p in processes.values():
                p.terminate()
            for p in processes.values():
                p.wait(timeout=30)
    rounds = report["rounds"]
    ops_ratio = statistics.median(r["durable"]["ops_per_s"] / r["plain"]["ops_per_s"]
                                  for r in rounds)
    cpu_ratio = statistics.median(r["durable"]["cpu_us_per_op_both"] /
                                  r["plain"]["cpu_us_per_op_both"] for r in rounds)
    m = report["machine"]
    print(f"machine: {m['cpu_model']}, {m['cpus']} CPUs, Linux {m['kernel']}")
    print("| run | ops/s (median) | p99 µs | CPU µs/write, both processes (n1 + n2) |")
    print("|---|---|---|---|")
    for kind in ("plain", "durable"):
        runs = [r[kind] for r in rounds]
        print(f"| {kind} SET, 4 x 32 | {statistics.median(r['ops_per_s'] for r in runs):,.0f} | "
              f"{statistics.median(r['p99_us'] for r in runs):,.0f} | "
              f"{statistics.median(r['cpu_us_per_op_both'] for r in runs):.2f} "
              f"({statistics.median(r['cpu_us_per_op']['n1'] for r in runs):.2f} + "
              f"{statistics.median(r['cpu_us_per_op']['n2'] for r in runs):.2f}) |")
    print(f"durable / plain: ops/s x{ops_ratio:.2f}, CPU per write (both) x{cpu_ratio:.2f} "
          f"(medians of {len(rounds)} paired rounds)")
    samples = report["lag"]["samples"]
    if samples:
        print(f"replica lag under {args.lag_duration:.0f} s of plain SETs: max "
              f"{max(s['lag'] for s in samples):,} seqnos over {len(samples)} samples; RSS n1 "
              f"{samples[0]['rss']['n1'] / 2**20:.0f} -> {samples[-1]['rss']['n1'] / 2**20:.0f} "
              f"MiB, n2 {samples[0]['rss']['n2'] / 2**20:.0f} -> "
              f"{samples[-1]['rss']['n2'] / 2**20:.0f} MiB")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
