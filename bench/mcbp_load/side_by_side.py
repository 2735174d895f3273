#!/usr/bin/env python3
"""syncwrite-server and Debian's memcached side by side under bench/mcbp_load.

Starts both servers on free ports, then runs every row of the table against
each, alternating server by server and row by row, --rounds times, so that
noise from the shared machine falls on both alike. Prints the machine, then a
Markdown table of the medians (ops/s, server CPU per op, p99) and of the
ratios, and writes every run as JSON. A ratio is the median of the rounds'
ratios: each round runs the servers back to back, so a slow minute of the
machine falls on both sides of one ratio, where a ratio of the two medians
could pair a good minute of one with a bad minute of the other.

The durable SET row is a syncwrite-only figure compared with the plain SET
row (its server CPU per op over plain's, issue 17's bound of 1.5x). So that
both halves of that ratio see about the same minute of the machine, each
round runs the durable row next after the plain SET row (only the other
servers' plain SET runs come between), and the ratio is the median of the
rounds' ratios, like the others. (Files before fee3a55 ran it last, after
the GET rows; GET now runs on a server that has also taken the durable
SETs.)

With --before PATH, a second syncwrite-server binary (e.g. the build of an
earlier commit) runs beside them with the same configuration: the project's
before and after in one run.

Usage (./dev bench load runs it):
  side_by_side.py --bin build/release/bin [--duration 10] [--rounds 3] [--json out.json]
                  [--before /path/to/older/syncwrite-server] [--rows N,N]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from loopback import free_port, machine, wait_for_port  # noqa: E402

# Each row: a name, the mcbp_load flags, and whether memcached can run it
# (it has no SyncWrites).
ROWS = [
    ("SET, 32 in flight", ["--op", "set", "--depth", "32"], True),
    ("GET, 32 in flight", ["--op", "get", "--depth", "32", "--preload"], True),
    ("SET, 1 in flight", ["--op", "set", "--depth", "1"], True),
    ("SETQ, 4 batches of 16 + NOOP in flight",
     ["--op", "set", "--depth", "4", "--quiet-batch", "16"], True),
    ("GETKQ, 4 batches of 16 + NOOP in flight",
     ["--op", "get", "--depth", "4", "--quiet-batch", "16", "--preload"], True),
    ("durable SET (majority, replica acks at once), 32 in flight",
     ["--op", "set", "--depth", "32", "--durability", "majority",
      "--durability-timeout-ms", "5000"], False),
    ("SET of a 100-byte JSON document, 32 in flight",
     ["--op", "set", "--depth", "32", "--value-json"], True),
]

# One bucket, one simulated replica that acks at once, no users (the server
# then accepts mcbp_load's PLAIN login unchecked). mcbp_load selects the
# bucket, so an older server without default_bucket can run it too.
SYNCWRITE_CONFIG = {
    "buckets": {"default": {
        "replicas": ["replica1"],
        "simulated_replicas": {"replica1": {"ack_delay_ms": 0}},
    }},
}


def start_syncwrite(binary, config, name, workdir):
    port = free_port()
    log = open(os.path.join(workdir, name + ".log"), "w")
    process = subprocess.Popen([binary, "--config", config, "--port", str(port)],
                               stdout=log, stderr=log)
    wait_for_port(port, process, name)
    return process, port


def start_servers(bin_dir, before, workdir):
    config = os.path.join(workdir, "syncwrite.json")
    with open(config, "w") as f:
        json.dump(SYNCWRITE_CONFIG, f)
    servers = {}
    if before:
        servers["before"] = start_syncwrite(before, config, "before", workdir)
    servers["syncwrite"] = start_syncwrite(os.path.join(bin_dir, "syncwrite-server"), config,
                                           "syncwrite", workdir)
    mc_port = free_port()
    # -t 2: one worker thread per core here, as syncwrite's two I/O threads;
    # -U 0: no UDP. As root memcached needs -u.
    memcached = ["memcached", "-p", str(mc_port), "-t", "2", "-m", "1024", "-U", "0"]
    if os.geteuid() == 0:
        memcached += ["-u", "root"]
    mc = subprocess.Popen(memcached, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(mc_port, mc, "memcached")
    servers["memcached"] = (mc, mc_port)
    return servers


def run_load(bin_dir, server, port, pid, flags, duration, workdir):
    out = os.path.join(workdir, "run.json")
    command = [os.path.join(bin_dir, "mcbp_load"), "--port", str(port), "--server-pid", str(pid),
               "--duration", str(duration), "--json", out] + flags
    if server == "memcached":
        command.append("--plain-memcached")
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        sys.exit(f"side_by_side: {' '.join(command)} failed:\n{done.stdout}")
    with open(out) as f:
        return json.load(f)


def median(runs, key):
    values = [r[key] for r in runs if key in r]
    return statistics.median(values) if values else None


def p99(run):
    return run["latency_us"]["p99"]


def paired_ratio(runs, others):
    """The median over rounds of runs[i] / others[i] in ops/s (None without
    `others`), and the per-round ratios."""
    ratios = [a["ops_per_s"] / b["ops_per_s"] for a, b in zip(runs, others) if b["ops_per_s"]]
    return (statistics.median(ratios) if ratios else None), ratios


PLAIN_SET = "SET, 32 in flight"


def is_durable(name):
    return name.startswith("durable")


def run_order(rows):
    """The rows in the order a round runs them: as given, except that a
    durable row runs next after the plain SET row when both are there."""
    names = [name for name, _, _ in rows]
    if PLAIN_SET not in names:
        return rows
    order = [row for row in rows if not is_durable(row[0])]
    at = next(i for i, row in enumerate(order) if row[0] == PLAIN_SET) + 1
    return order[:at] + [row for row in rows if is_durable(row[0])] + order[at:]


def durable_over_plain(runs):
    """The median over rounds of a durable SET's server CPU per op over the
    plain SET's in the same round, and the per-round ratios; None without
    both rows."""
    durable = next((v for (name, server), v in runs.items()
                    if is_durable(name) and server == "syncwrite"), None)
    plain = runs.get((PLAIN_SET, "syncwrite"))
    if not durable or not plain:
        return None, []
    key = "server_cpu_us_per_op"
    ratios = [d[key] / p[key] for d, p in zip(durable, plain) if p.get(key) and d.get(key)]
    return (statistics.median(ratios) if ratios else None), ratios


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="directory with syncwrite-server, mcbp_load")
    parser.add_argument("--duration", type=float, default=10, help="seconds per run")
    parser.add_argument("--rounds", type=int, default=3, help="runs per row and server")
    parser.add_argument("--json", help="write every run here")
    parser.add_argument("--before", help="an older syncwrite-server binary to run beside")
    parser.add_argument("--rows", help="comma-separated row numbers (from 1) to run; default all")
    args = parser.parse_args()
    rows = ROWS
    if args.rows:
        rows = [ROWS[int(n) - 1] for n in args.rows.split(",")]

    with tempfile.TemporaryDirectory(prefix="side_by_side_") as workdir:
        servers = start_servers(args.bin, args.before, workdir)
        runs = {}  # (row, server) -> [report]
        try:
            for round_no in range(args.rounds):
                for name, flags, memcached_too in run_order(rows):
                    for server, (process, port) in servers.items():
                        if server == "memcached" and not memcached_too:
                            continue
                        print(f"round {round_no + 1}/{args.rounds}: {server}: {name}",
                              file=sys.stderr)
                        report = run_load(args.bin, server, port, process.pid, flags,
                                          args.duration, workdir)
                        if report["errors"]:
                            sys.exit(f"side_by_side: {server}, {name}: {report['errors']}")
                        runs.setdefault((name, server), []).append(report)
        finally:
            for process, _ in servers.values():
                process.terminate()
                process.wait()

    host = machine()
    print(f"machine: {host['cpu_model']}, {host['cpus']} CPUs, Linux {host['kernel']}")
    before_header = "| before ops/s | after / before | before CPU µs/op " if args.before else ""
    print(f"| load ({args.rounds} runs of {args.duration:g} s each, medians; "
          "ratios: median of the rounds' ratios) "
          "| syncwrite ops/s | memcached ops/s | ratio | server CPU µs/op (sw / mc) "
          f"| p99 µs (sw / mc) {before_header}|")
    print("|---|---|---|---|---|---|" + ("---|---|---|" if args.before else ""))
    table = []
    for name, _, memcached_too in rows:
        sw = runs[(name, "syncwrite")]
        mc = runs.get((name, "memcached"), [])
        sw_ops, mc_ops = median(sw, "ops_per_s"), median(mc, "ops_per_s")
        sw_cpu, mc_cpu = median(sw, "server_cpu_us_per_op"), median(mc, "server_cpu_us_per_op")
        sw_p99 = statistics.median(p99(r) for r in sw)
        mc_p99 = statistics.median(p99(r) for r in mc) if mc else None
        ratio, ratios = paired_ratio(sw, mc)

        def fmt(v, spec):
            return "—" if v is None else format(v, spec)

        row = {"load": name, "syncwrite_ops_per_s": sw_ops, "memcached_ops_per_s": mc_ops,
               "ratio": ratio, "round_ratios": ratios, "syncwrite_cpu_us_per_op": sw_cpu,
               "memcached_cpu_us_per_op": mc_cpu}
        before_cells = ""
        if args.before:
            bf = runs[(name, "before")]
            bf_ops, bf_cpu = median(bf, "ops_per_s"), median(bf, "server_cpu_us_per_op")
            after_before, after_before_rounds = paired_ratio(sw, bf)
            before_cells = (f" {fmt(bf_ops, ',.0f')} | {fmt(after_before, '.2f')} "
                            f"| {fmt(bf_cpu, '.2f')} |")
            row.update({"before_ops_per_s": bf_ops, "before_cpu_us_per_op": bf_cpu,
                        "after_before": after_before,
                        "after_before_round_ratios": after_before_rounds})
        print(f"| {name} | {fmt(sw_ops, ',.0f')} | {fmt(mc_ops, ',.0f')} | {fmt(ratio, '.2f')} "
              f"| {fmt(sw_cpu, '.2f')} / {fmt(mc_cpu, '.2f')} "
              f"| {fmt(sw_p99, '.0f')} / {fmt(mc_p99, '.0f')} |{before_cells}")
        table.append(row)
    # The spread behind each ratio: a median of rounds that range 0.8-1.2 says
    # less than one of rounds that range 0.98-1.02.
    print()
    for row in table:
        spreads = []
        for label, key in (("syncwrite / memcached", "round_ratios"),
                           ("after / before", "after_before_round_ratios")):
            if row.get(key):
                spreads.append(f"{label} " + ", ".join(f"{r:.2f}" for r in row[key]))
        if spreads:
            print(f"{row['load']}, per round: " + "; ".join(spreads))
    cpu_ratio, cpu_ratios = durable_over_plain(runs)
    if cpu_ratio is not None:
        print(f"durable SET / plain SET, server CPU per op: {cpu_ratio:.2f} (rounds "
              + ", ".join(f"{r:.2f}" for r in cpu_ratios) + ")")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": host, "table": table,
                       "durable_over_plain_cpu": {"ratio": cpu_ratio, "round_ratios": cpu_ratios},
                       "runs": {f"{k[0]} | {k[1]}": v for k, v in runs.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
