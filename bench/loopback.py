"""Helpers the bench scripts share to run servers on loopback."""

import os
import platform
import socket
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
