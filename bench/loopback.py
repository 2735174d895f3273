"""Helpers the bench scripts share to run servers on loopback."""

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
