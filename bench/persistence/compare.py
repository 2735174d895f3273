#!/usr/bin/env python3
"""What persistence costs: one syncwrite-server with two buckets side by side,
"ephemeral" (bucket_type ephemeral) and "couchbase" (bucket_type couchbase, in
a temporary data_dir), each with one simulated replica that acks at once. In
each round, in turn:

  plain SET on the ephemeral bucket, plain SET on the couchbase bucket,
  majority, majority_and_persist_on_master and persist_to_majority SETs on
  the couchbase bucket,

each for --duration seconds of mcbp_load (4 connections; 32 in flight for
plain SETs, 64 for durable ones: issue 54's 4 x 64). Reported per row: the
median ops/s over the rounds, and on the couchbase bucket the records its
flusher wrote per synced write batch (each batch is one fsync) during the
row's runs. Then the ratios the issue sets targets for: plain couchbase /
plain ephemeral (>= 0.8), and each persist level / majority (>= 0.5), as
medians of the rounds' paired ratios.

Usage: bench/persistence/compare.py --bin build/release/bin [--rounds 3]
       [--duration 5] [--json FILE]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from loopback import cli_stats, free_port, machine, wait_for_port  # noqa: E402

ROWS = [
    ("plain SET, ephemeral", "ephemeral", "none", 32),
    ("plain SET, couchbase", "couchbase", "none", 32),
    ("majority, couchbase", "couchbase", "majority", 64),
    ("majority_and_persist_on_master, couchbase", "couchbase", "majority_and_persist_on_master", 64),
    ("persist_to_majority, couchbase", "couchbase", "persist_to_majority", 64),
]


def bucket(bucket_type):
    return {"bucket_type": bucket_type, "replicas": ["replica1"],
            "simulated_replicas": {"replica1": {"ack_delay_ms": 0}}}


def flusher_counts(bin_dir, port):
    """(batches, items flushed) of the couchbase bucket's flusher."""
    stats = cli_stats(bin_dir, port, "memory", bucket="couchbase")
    return int(stats["flusher_batches"]), int(stats["flusher_items_flushed"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=5)
    parser.add_argument("--json")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="syncwrite-persistence-")
    config = os.path.join(workdir, "config.json")
    with open(config, "w") as f:
        json.dump({"data_dir": os.path.join(workdir, "data"),
                   "buckets": {"ephemeral": bucket("ephemeral"),
                               "couchbase": bucket("couchbase")}}, f)
    port = free_port()
    log = open(os.path.join(workdir, "server.log"), "w")
    server = subprocess.Popen([os.path.join(args.bin, "syncwrite-server"), "--config", config,
                               "--port", str(port)], stdout=log, stderr=log)
    runs = {name: [] for name, *_ in ROWS}
    per_batch = {name: [0, 0] for name, *_ in ROWS}
    try:
        wait_for_port(port, server, "syncwrite-server")
        for round_no in range(args.rounds):
            for name, bucket_name, level, depth in ROWS:
                before = flusher_counts(args.bin, port)
                out = os.path.join(workdir, "run.json")
                command = [os.path.join(args.bin, "mcbp_load"), "--port", str(port),
                           "--server-pid", str(server.pid), "--bucket", bucket_name,
                           "--durability", level, "--depth", str(depth), "--connections", "4",
                           "--duration", str(args.duration), "--json", out]
                done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True)
                if done.returncode != 0:
                    sys.exit(f"compare: {' '.join(command)} failed:\n{done.stdout}")
                with open(out) as f:
                    runs[name].append(json.load(f))
                after = flusher_counts(args.bin, port)
                per_batch[name][0] += after[0] - before[0]
                per_batch[name][1] += after[1] - before[1]
                print(f"round {round_no + 1} {name}: {runs[name][-1]['ops_per_s']:.0f} ops/s",
                      file=sys.stderr)
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()

    def ratio(a, b):
        return statistics.median(x["ops_per_s"] / y["ops_per_s"]
                                 for x, y in zip(runs[a], runs[b]))

    result = {"machine": machine(), "rounds": args.rounds, "duration_s": args.duration, "rows": []}
    print(f"{'row':45} {'ops/s (median)':>15} {'records per fsync':>18}")
    for name, bucket_name, _, _ in ROWS:
        ops = statistics.median(r["ops_per_s"] for r in runs[name])
        batches, items = per_batch[name]
        per_fsync = items / batches if bucket_name == "couchbase" and batches else None
        result["rows"].append({"row": name, "ops_per_s": ops, "records_per_fsync": per_fsync})
        shown = f"{per_fsync:.1f}" if per_fsync is not None else "-"
        print(f"{name:45} {ops:15.0f} {shown:>18}")
    result["plain_couchbase_over_ephemeral"] = ratio("plain SET, couchbase", "plain SET, ephemeral")
    for level in ("majority_and_persist_on_master", "persist_to_majority"):
        result[f"{level}_over_majority"] = ratio(f"{level}, couchbase", "majority, couchbase")
    for key in ("plain_couchbase_over_ephemeral", "majority_and_persist_on_master_over_majority",
                "persist_to_majority_over_majority"):
        print(f"{key}: {result[key]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
