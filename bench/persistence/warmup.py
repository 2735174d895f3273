#!/usr/bin/env python3
"""Warmup of a couchbase bucket: --items documents of --value-size bytes are
written live (mcbp_load, plain SETs from one connection, each key once) into
one syncwrite-server,
which is stopped once its flusher has written them all (SIGTERM), then
started again on the same data_dir. Reported: the RSS with the items written
live, the warmup's time as the server logs and counts it (stats warmup), the
time from spawn to listening, and the RSS after warmup with its ratio to the
live one (issue 54: <= 5 s for 1M items of 100 B, RSS <= 1.3x).

Usage: bench/persistence/warmup.py --bin build/release/bin [--items 1000000]
       [--value-size 100] [--json FILE]
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from loopback import cli_stats, free_port, machine, wait_for_port  # noqa: E402


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def start(bin_dir, config, workdir, name):
    port = free_port()
    log = open(os.path.join(workdir, f"{name}.log"), "w")
    began = time.monotonic()
    server = subprocess.Popen([os.path.join(bin_dir, "syncwrite-server"), "--config", config,
                               "--port", str(port)], stdout=log, stderr=log)
    wait_for_port(port, server, "syncwrite-server", seconds=120)
    return server, port, time.monotonic() - began


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--json")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="syncwrite-warmup-")
    config = os.path.join(workdir, "config.json")
    with open(config, "w") as f:
        json.dump({"data_dir": os.path.join(workdir, "data"),
                   "buckets": {"default": {"bucket_type": "couchbase",
                                           "max_size": 4 << 30}}}, f)
    result = {"machine": machine(), "items": args.items, "value_size": args.value_size}
    server = None
    try:
        server, port, _ = start(args.bin, config, workdir, "live")
        subprocess.run([os.path.join(args.bin, "mcbp_load"), "--port", str(port), "--op", "set",
                        "--keys", str(args.items), "--keys-in-order", "--requests",
                        str(args.items), "--value-size", str(args.value_size),
                        "--connections", "1", "--depth", "128",
                        "--json", os.path.join(workdir, "load.json")],
                       check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(workdir, "load.json")) as f:
            result["load_statuses"] = json.load(f).get("statuses")
        give_up = time.monotonic() + 300
        while int(cli_stats(args.bin, port, "memory")["flusher_items_queued"]) != 0:
            if time.monotonic() > give_up:
                raise RuntimeError("the flusher did not catch up in 300 s")
            time.sleep(0.2)
        result["live_rss_kib"] = rss_kib(server.pid)
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)

        server, port, to_listen = start(args.bin, config, workdir, "warm")
        warm = cli_stats(args.bin, port, "warmup")
        result["spawn_to_listen_s"] = round(to_listen, 3)
        result["warmup_s"] = int(warm["ep_warmup_time"]) / 1e6
        result["warmup_items"] = int(warm["ep_warmup_key_count"])
        result["warm_rss_kib"] = rss_kib(server.pid)
        result["rss_ratio"] = round(result["warm_rss_kib"] / result["live_rss_kib"], 3)
    finally:
        if server is not None and server.poll() is None:
            server.kill()
            server.wait()
        shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
