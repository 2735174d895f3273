#!/usr/bin/env python3
"""The timeout storm against a replica that is a real process, killed.

For each timeout mode: starts a cluster of two syncwrite-server processes on
loopback (bucket "storm", one vbucket, active on n1 and replicated over DCP to
n2), waits until n2 streams it, SIGKILLs n2, then sends N durable SETs
(majority, --timeout-ms) to n1 as storm.py's timeout storm does (each key once,
N/1000 connections). Every write must be answered SyncWriteAmbiguous, none
before its timeout; it reports the server's lateness (timeout_late_*_us:
deadline to answer handed over), the client's (answer latency minus the
timeout, an upper bound), the statuses, and server CPU per write (arrival and
timeout together). Beside each, in the same run, storm.py's timeout storm
alone against a replica nobody simulates (one process, no cluster), so the
two read as a pair; the targets of docs/benchmarks.md ("timeout_storm") bound
both.

Usage (./dev bench storm runs it after storm.py):
  replica_death.py --bin build/release/bin [--n 100000] [--modes event-driven,polling]
                   [--timeout-ms 4000] [--json out.json]
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from loopback import machine, start_cluster  # noqa: E402
import storm  # noqa: E402
from storm import cpu_seconds, durability_stats, in_flight, writers_args  # noqa: E402


def stat(bin_dir, port, name):
    done = subprocess.run([os.path.join(bin_dir, "syncwrite-cli"), "--port", str(port),
                           "--bucket", "storm", "stats"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in done.stdout.splitlines():
        key, _, value = line.partition(" ")
        if key == name:
            return value
    return None


def run_one(bin_dir, n, mode, timeout_ms, workdir):
    processes, ports = start_cluster(
        bin_dir, workdir, ("n1", "n2"),
        {"storm": {"num_replicas": 1, "max_vbuckets": 1, "durability_timeout_mode": mode,
                   "max_size": 8 << 30}},
        "replica_death", top={"max_connections": 4096})
    try:
        deadline = time.monotonic() + 10
        while stat(bin_dir, ports["n2"], "replication_streams") != "1":
            if time.monotonic() > deadline:
                sys.exit("replica_death: n2 never streamed the vbucket")
            time.sleep(0.05)
        processes["n2"].send_signal(signal.SIGKILL)
        processes["n2"].wait()
        server = processes["n1"]
        storm_json = os.path.join(workdir, "storm_run.json")
        cpu_before = cpu_seconds(server.pid)
        writers = subprocess.Popen(
            writers_args(bin_dir, ports["n1"], n, timeout_ms) +
            ["--vbuckets", "1", "--user", "", "--server-pid", str(server.pid),
             "--json", storm_json],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # Every write pending: from here to the last answer is the timeouts alone.
        cpu_pending = None
        while writers.poll() is None and cpu_pending is None:
            if in_flight(bin_dir, ports["n1"]) >= n:
                cpu_pending = cpu_seconds(server.pid)
            time.sleep(0.02)
        output = writers.communicate()[0]
        if writers.returncode != 0:
            sys.exit(f"replica_death: mcbp_load (N={n}, {mode}) failed:\n{output}")
        cpu = cpu_seconds(server.pid) - cpu_before
        server_late = durability_stats(bin_dir, ports["n1"])
        left = in_flight(bin_dir, ports["n1"])
        with open(storm_json) as f:
            report = json.load(f)
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.terminate()
                process.wait()
    return {
        "n": n, "mode": mode, "timeout_ms": timeout_ms,
        **storm.timeout_answers(report, timeout_ms, server_late),
        "server_cpu_us_per_write": cpu * 1e6 / n,
        "resolve_cpu_us_per_write": ((cpu_before + cpu - cpu_pending) * 1e6 / n
                                     if cpu_pending is not None else None),
        "in_flight_after": left,
    }


def us(value):
    return "n/a" if value is None else f"{value:.2f} us"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--n", type=int, default=100000)
    parser.add_argument("--modes", default="event-driven,polling")
    parser.add_argument("--timeout-ms", type=int, default=4000)
    parser.add_argument("--json")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="replica-death-") as workdir:
        for mode in args.modes.split(","):
            simulated = storm.run_one(args.bin, args.n, mode, args.timeout_ms, workdir, False)
            result = run_one(args.bin, args.n, mode, args.timeout_ms, workdir)
            result["simulated_silent_replica"] = {
                k: simulated[k] for k in ("server_late_ms", "late_ms", "early", "not_ambiguous",
                                          "server_cpu_us_per_write", "resolve_cpu_us_per_write")}
            results.append(result)
            print(f"N={args.n} {mode}, silent simulated replica: server late p50/p99/max "
                  f"{simulated['server_late_ms']['p50']}/{simulated['server_late_ms']['p99']}/"
                  f"{simulated['server_late_ms']['max']} ms, client late max "
                  f"{simulated['late_ms']['max']:.1f} ms, early {simulated['early']}, "
                  f"not ambiguous {simulated['not_ambiguous']}, "
                  f"CPU a write {simulated['server_cpu_us_per_write']:.2f} us, of its timeout "
                  f"{us(simulated['resolve_cpu_us_per_write'])}")
            print(f"N={args.n} {mode}, killed replica process: server late p50/p99/max "
                  f"{result['server_late_ms']['p50']}/{result['server_late_ms']['p99']}/"
                  f"{result['server_late_ms']['max']} ms, client late max "
                  f"{result['late_ms']['max']:.1f} ms, early {result['early']}, "
                  f"not ambiguous {result['not_ambiguous']}, "
                  f"CPU a write {result['server_cpu_us_per_write']:.2f} us, of its timeout "
                  f"{us(result['resolve_cpu_us_per_write'])}")
    failed = [r for r in results
              if r["early"] or r["not_ambiguous"] or r["in_flight_after"] or
              r["simulated_silent_replica"]["early"] or
              r["simulated_silent_replica"]["not_ambiguous"]]
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine(), "results": results}, f, indent=1)
    if failed:
        sys.exit("replica_death: an early, unanswered or non-ambiguous write (see above)")


if __name__ == "__main__":
    main()
