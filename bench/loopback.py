"""Helpers the bench scripts share to run servers on loopback."""

import json
import os
import platform
import socket
import subprocess
import sys
import time


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, process, what, seconds=10):
    """Returns once `process` accepts connections on `port`; exits the
    script, naming `what`, if it exits first or does not listen in time."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"{what} exited with {process.returncode} at start")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"{what} did not listen on port {port} within {seconds} s")


def start_cluster(bin_dir, workdir, names, buckets, what, top=None):
    """Starts a cluster of syncwrite-servers on loopback, one per name of
    `names`, from one file (workdir/cluster.json: `top`'s keys, the "cluster"
    entry naming every node by a port file in workdir, and `buckets`), each
    with --node NAME and its output in workdir/NAME.log. Returns
    ({name: process}, {name: port}) once each listens; exits the script,
    naming `what`, if one does not start. The caller stops the processes."""
    config = dict(top or {})
    config["cluster"] = {"nodes": {name: {"host": "127.0.0.1",
                                          "port_file": os.path.join(workdir, name + ".port")}
                                   for name in names}}
    config["buckets"] = buckets
    path = os.path.join(workdir, "cluster.json")
    with open(path, "w") as f:
        json.dump(config, f)
    processes, ports = {}, {}
    for name in names:
        port_file = config["cluster"]["nodes"][name]["port_file"]
        if os.path.exists(port_file):  # a previous run's, naming a port nobody listens on
            os.remove(port_file)
        with open(os.path.join(workdir, name + ".log"), "w") as log:
            processes[name] = subprocess.Popen(
                [os.path.join(bin_dir, "syncwrite-server"), "--config", path, "--node", name,
                 "--port", "0", "--port-file", port_file], stdout=log, stderr=log)
        deadline = time.monotonic() + 10
        while not os.path.exists(port_file):
            if time.monotonic() > deadline or processes[name].poll() is not None:
                sys.exit(f"{what}: {name} did not start (see {workdir})")
            time.sleep(0.02)
        with open(port_file) as f:
            ports[name] = int(f.read())
        wait_for_port(ports[name], processes[name], name)
    return processes, ports


def cli_stats(bin_dir, port, group="", bucket=None):
    """STAT `group` of `bucket` (the default one when None) through
    syncwrite-cli, as a dict of name -> value text; raises if the CLI fails."""
    args = [os.path.join(bin_dir, "syncwrite-cli"), "--port", str(port)]
    if bucket is not None:
        args += ["--bucket", bucket]
    out = subprocess.run(args + ["stats", group], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, check=True).stdout
    return dict(line.split(None, 1) for line in out.splitlines() if " " in line)


def machine():
    """What the figures were measured on: the CPU's model name (the first
    "model name" of /proc/cpuinfo, as `lscpu` shows it), the CPUs this process
    may run on, and the kernel. Benchmarks print it beside their figures,
    since guests of different CPUs give figures 20-40% apart."""
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    model = value.strip()
                    break
    except OSError:
        pass
    return {"cpu_model": model, "cpus": len(os.sched_getaffinity(0)),
            "kernel": platform.release()}
