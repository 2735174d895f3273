#!/usr/bin/env python3
"""A replica goes silent: N SyncWrites time out at once. What it costs, and who waits.

For each N and timeout mode, twice (the storm alone, then with the
bystander), starts syncwrite-server with two buckets:
"storm" (one replica, which nothing simulates: it never acknowledges) and
"bystander" (no replicas). Then, at once:
  - the storm: bench/mcbp_load sends N durable SETs (majority, --timeout-ms)
    to "storm", each key once, on enough connections that the server's flow
    control (1024 requests per connection) never holds one back; each is
    answered SyncWriteAmbiguous when its timeout passes;
  - the bystander: another mcbp_load keeps one GET or SET (half each) in
    flight on "bystander" for the whole run, on its own connection.
While the writes wait, it reads the server's RSS to price a pending write.

Per run it reports: how fast the writes were accepted; RSS per pending write
(and the whole process's peak);
answer latency minus the timeout, which is how late the answer came (an
upper bound: the deadline runs from the server's receipt, which is after the
send); early answers (any latency below the timeout); every answer's status
(all N must be 0xa3 SyncWriteAmbiguous: mcbp_load fails on an answer to no
request or a request never answered, so lost and doubled answers fail the
run); server CPU per write (arrival and timeout together, from the storm
run alone, and the resolution alone: from the moment every write was pending
to the last answer); the server's own lateness stats (timeout_late_*_us:
deadline to answer handed to the connection, which no client can see, since
the deadline runs from the server's receipt); and the bystander's latency
p50/p99/max over the second run. Last, per N and mode, SIGTERM with N
writes pending (60 s timeouts) twice: once after their clients were killed
(nobody is owed an answer), once with them connected (each is answered
ambiguous "shutdown" first): the seconds from the signal to the exit. And a
commit storm: N writes pending on a paused simulated replica (acking at
once), then resumed; from the resume to the last answer, all must be 0x00,
with the bystander running meanwhile. And an arrival burst: N durable SETs
sent at once while a simulated replica acks each at once, so they commit as
they are read; from the first send to the last answer, all must be 0x00,
with the bystander running meanwhile.

The bystander logs each request slower than STALL_US (mcbp_load
--slow-log-us); the report places its worst ones on the storm's timeline
(seconds after the first send, or after the resume), so a stall can be
told apart by phase: arrival, timeouts, commits, the writers' exit. The
writers run SCHED_IDLE unless --writers-sched normal (see WRITERS_SCHED), on
--writer-threads threads (see WRITER_THREADS).

Usage (./dev bench storm runs it):
  storm.py --bin build/release/bin [--n 10000,100000,300000] [--modes event-driven,polling]
           [--timeout-ms 4000] [--json out.json] [--shutdown-only] [--writers-sched idle|normal]
           [--writer-threads 2] [--keep DIR]

--keep DIR keeps each run's files (the bystander's slow requests and pid among
them) in DIR/<N>_<mode>, emptied first, and the clock offset stall_anatomy.py
needs to place them in a `perf sched` record.
"""

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from loopback import free_port, wait_for_port  # noqa: E402

PER_CONNECTION = 1000  # below the server's 1024 requests in flight per connection

# The writers' scheduling policy (--writers-sched). "idle" runs them as
# SCHED_IDLE: on this 2-vCPU machine their N/1000 threads share the cores
# with the server, and at normal priority they preempted its I/O threads for
# tens of ms at a time (perf sched: an I/O thread runnable and not running
# for 57 ms while writer threads ran), which is what a bystander measured.
# On a real deployment the writers run elsewhere; SCHED_IDLE is the nearest
# this machine has to that. The bystander always runs at normal priority,
# and so do the writers of the storm run without it (accept rate, RSS, CPU):
# as SCHED_IDLE they take longer than the timeout to send 300k writes.
WRITERS_SCHED = "idle"

# The threads the writers' mcbp_load drives its N/1000 connections from
# (--writer-threads; 0: one per connection, as before 2026-11-26). A client
# machine runs its SDK's connections on a few event loops; 300 threads
# receiving their answers took the cores from the server's I/O threads even
# as SCHED_IDLE (perf sched: 14-41 ms of writer CPU in each bystander stall
# window over 15 ms, against 5-9 ms for the server's I/O threads).
WRITER_THREADS = 2


def start_writers(args, beside_bystander=True, **kwargs):
    """subprocess.Popen for the writers' mcbp_load, under WRITERS_SCHED when
    a bystander measures beside them."""
    if WRITERS_SCHED == "idle" and beside_bystander:
        kwargs["preexec_fn"] = lambda: os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    return subprocess.Popen(args, **kwargs)


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def durability_stats(bin_dir, port):
    done = subprocess.run([os.path.join(bin_dir, "syncwrite-cli"), "--port", str(port),
                           "--bucket", "storm", "stats", "durability"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    stats = {}
    for line in done.stdout.splitlines():
        name, _, value = line.partition(" ")
        stats[name] = value
    return stats


def in_flight(bin_dir, port):
    return int(durability_stats(bin_dir, port).get("sync_writes_in_flight", -1))


def cpu_seconds(pid):
    """utime + stime of the process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(bin_dir, config, workdir, name):
    """Starts syncwrite-server with `config` (written to workdir/name.json,
    its output to workdir/name.log); returns (process, port, log path). The
    caller waits for the port (wait_for_port) and stops the process."""
    config_path = os.path.join(workdir, f"{name}.json")
    # Room for the writers' connections (N / PER_CONNECTION: 1,000 at N = 1M,
    # the server's default max_connections) and the probes beside them.
    config = {"max_connections": 4096, **config}
    with open(config_path, "w") as f:
        json.dump(config, f)
    port = free_port()
    log_path = os.path.join(workdir, f"{name}.log")
    with open(log_path, "w") as log:
        server = subprocess.Popen([os.path.join(bin_dir, "syncwrite-server"), "--config",
                                   config_path, "--port", str(port)], stdout=log, stderr=log)
    return server, port, log_path


def writers_args(bin_dir, port, n, timeout_ms):
    """mcbp_load sending N durable SETs (majority) to "storm", each key once,
    on enough connections that flow control never holds one back."""
    connections = max(1, -(-n // PER_CONNECTION))
    return [os.path.join(bin_dir, "mcbp_load"), "--port", str(port), "--bucket", "storm",
            "--durability", "majority", "--durability-timeout-ms", str(timeout_ms),
            "--keys", str(n), "--keys-in-order", "--connections", str(connections),
            "--depth", str(-(-n // connections)), "--requests", str(n),
            "--threads", str(WRITER_THREADS)]


STALL_US = 5000  # a bystander request slower than this is placed on the timeline


def start_bystander_process(bin_dir, port, duration_s, json_path):
    """The bystander's mcbp_load (bystander_args), its pid written beside its
    JSON (json_path + ".pid") for stall_anatomy.py."""
    process = subprocess.Popen(bystander_args(bin_dir, port, duration_s, json_path),
                               stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    with open(json_path + ".pid", "w") as f:
        f.write(str(process.pid))
    return process


def bystander_args(bin_dir, port, duration_s, json_path):
    """mcbp_load keeping one GET or SET (half each) in flight on "bystander"."""
    return [os.path.join(bin_dir, "mcbp_load"), "--port", str(port), "--bucket", "bystander",
            "--op", "mix", "--set-ratio", "0.5", "--keys", "1000", "--connections", "1",
            "--depth", "1", "--duration", str(duration_s), "--json", json_path,
            "--slow-log-us", str(STALL_US)]


def stalls(bystander_report, since_unix_s, worst=8):
    """The bystander's slowest requests (over STALL_US) as (seconds after
    since_unix_s that the answer came, latency ms), the worst first; and how
    many there were."""
    slow = bystander_report.get("slow_requests", [])
    ranked = sorted(slow, key=lambda r: -r["latency_us"])[:worst]
    return {"count": len(slow),
            "worst": [(round(r["answered_unix_s"] - since_unix_s, 3),
                       round(r["latency_us"] / 1000, 1)) for r in ranked]}


BYSTANDER_LEAD_S = 0.5  # the bystander starts this long before the storm


def window_covered(what, window_s, storm_s):
    """Whether the bystander's window (window_s, started BYSTANDER_LEAD_S
    before the storm) lasted until the storm's last answer (storm_s after its
    start); warns when not, since its figures then miss the storm's end."""
    if storm_s <= window_s - BYSTANDER_LEAD_S:
        return True
    print(f"storm: {what} took {storm_s:.1f} s, longer than the bystander's window after it "
          f"started ({window_s - BYSTANDER_LEAD_S:.1f} s): its figures miss the end",
          file=sys.stderr)
    return False


def wait_all_pending(bin_dir, port, n, writers, what):
    """Until all N writes are in flight; exits the run if the writers ended
    first or 30 s passed."""
    deadline = time.monotonic() + 30
    while in_flight(bin_dir, port) < n:
        if time.monotonic() > deadline or writers.poll() is not None:
            sys.exit(f"storm: {what}: the writes never all pended")
        time.sleep(0.05)


def timeout_answers(report, timeout_ms, server_late):
    """What a timeout storm's answers say, from the writers' mcbp_load
    `report` and the server's durability stats after it (`server_late`):
    lateness as the client saw it (answer latency minus the timeout, an upper
    bound) and as the server did (deadline to answer handed over), whether
    any came early, and the statuses (all must be 0xa3 SyncWriteAmbiguous)."""
    lat = report["latency_us"]
    ambiguous = report["statuses"].get("0xa3", 0)
    return {
        "late_ms": {k: (lat[k] / 1000 - timeout_ms) for k in ("p50", "p99", "p99_9", "max")},
        "fastest_answer_ms": lat["min"] / 1000,
        # The send comes before the server's receipt: an answer sooner than
        # the timeout after the send is early for certain.
        "early": lat["min"] / 1000 < timeout_ms,
        "statuses": report["statuses"],
        "ambiguous": ambiguous,
        "not_ambiguous": report["ops"] - ambiguous,
        "server_late_ms": {k: int(server_late.get(f"timeout_late_{k}_us", -1)) / 1000
                           for k in ("p50", "p99", "max")},
    }


def run_one(bin_dir, n, mode, timeout_ms, workdir, with_bystander):
    config = {"buckets": {
        "storm": {"replicas": ["replica1"], "durability_timeout_mode": mode,
                  # Room for a million pending 100-byte writes: the quota is
                  # not what this measures.
                  "max_size": 8 << 30},
        "bystander": {},
    }}
    server, port, _ = start_server(bin_dir, config, workdir, "storm")
    try:
        wait_for_port(port, server, "syncwrite-server")
        time.sleep(0.5)
        rss_before = rss_kb(server.pid)
        connections = max(1, -(-n // PER_CONNECTION))
        depth = -(-n // connections)
        storm_json = os.path.join(workdir, "storm_run.json")
        bystander_json = os.path.join(workdir, "bystander_run.json")
        bystander = None
        window_s = timeout_ms / 1000 + 3 + n / 100000
        if with_bystander:
            bystander = start_bystander_process(bin_dir, port, window_s, bystander_json)
            time.sleep(BYSTANDER_LEAD_S)
        started = time.monotonic()
        started_unix = time.time()
        storm = start_writers(
            writers_args(bin_dir, port, n, timeout_ms) +
            ["--server-pid", str(server.pid), "--json", storm_json], with_bystander,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # Accepted: every write pending (or the timeout is near).
        accepted_s, peak_rss, cpu_at_accept = None, 0, None
        while storm.poll() is None:
            pending = in_flight(bin_dir, port)
            peak_rss = max(peak_rss, rss_kb(server.pid))
            if pending >= n and accepted_s is None:
                accepted_s = time.monotonic() - started
                peak_rss = rss_kb(server.pid)
                cpu_at_accept = cpu_seconds(server.pid)
            if accepted_s is not None or time.monotonic() - started > timeout_ms / 1000 * 0.9:
                break
            time.sleep(0.02)
        output = storm.communicate()[0]
        storm_s = time.monotonic() - started
        if storm.returncode != 0:
            sys.exit(f"storm: mcbp_load (storm, N={n}, {mode}) failed:\n{output}")
        # Every write answered: the resolution's CPU, and the server's own
        # lateness figures (deadline to answer handed to the connection).
        resolve_cpu = cpu_seconds(server.pid) - cpu_at_accept if accepted_s else None
        server_late = durability_stats(bin_dir, port)
        with open(storm_json) as f:
            storm_report = json.load(f)
        bystander_report = None
        covered = None
        if bystander:
            covered = window_covered(f"timeout storm (N={n}, {mode})", window_s, storm_s)
            bystander.wait()
            with open(bystander_json) as f:
                bystander_report = json.load(f)
    finally:
        server.terminate()
        server.wait()
    return {
        "n": n, "mode": mode, "timeout_ms": timeout_ms,
        "connections": connections, "depth": depth,
        "accepted_s": accepted_s,
        "accept_rate_per_s": n / accepted_s if accepted_s else None,
        "rss_per_pending_write_bytes": (peak_rss - rss_before) * 1024 / n if accepted_s else None,
        # The whole process with every write pending (issue 23: 1M in 400 MiB).
        "peak_rss_mib": peak_rss / 1024 if accepted_s else None,
        **timeout_answers(storm_report, timeout_ms, server_late),
        "server_cpu_us_per_write": storm_report.get("server_cpu_us_per_op"),
        # From the moment every write was pending to the last answer: the
        # timeouts alone (an upper bound: the prober's requests count too).
        "resolve_cpu_us_per_write": resolve_cpu * 1e6 / n if resolve_cpu is not None else None,
        "bystander_us": bystander_report["latency_us"] if bystander_report else None,
        "bystander_errors": bystander_report["errors"] if bystander_report else [],
        "bystander_window_covered": covered,
        # When the bystander stalled, in seconds after the storm's first send.
        "bystander_stalls": stalls(bystander_report, started_unix) if bystander_report else None,
    }


def commit_storm(bin_dir, n, mode, workdir):
    """A paused replica resumes with N SyncWrites pending (60 s timeouts):
    its acks commit them all at once. Reports the time from the resume to the
    last answer, the server CPU per committed write over that span, the
    statuses (all N must be 0x00), and the bystander's latency meanwhile."""
    result = committing_run(bin_dir, n, mode, workdir, held=True)
    result["resume_to_last_answer_s"] = result.pop("seconds")
    return result


def arrival_burst(bin_dir, n, mode, workdir):
    """N durable SETs arrive at once (N/1000 connections, each sending its
    1,000 in one go) while a simulated replica acks each at once, so they
    commit as they are read. Reports the time from the first send to the last
    answer, the server CPU per write, the statuses (all N must be 0x00), and
    the bystander's latency over a window that covers the burst."""
    result = committing_run(bin_dir, n, mode, workdir, held=False)
    result["first_send_to_last_answer_s"] = result.pop("seconds")
    return result


def committing_run(bin_dir, n, mode, workdir, held):
    """N durable SETs (60 s timeouts) that a simulated replica acks at once,
    the bystander beside them. held: the replica starts paused, the bystander
    starts once all N are pending, and the clock starts at the resume (the
    commit storm); otherwise the bystander starts first and the clock at the
    first send (the arrival burst). Returns seconds (to the last answer),
    committed / not_committed, cpu_us_per_write over those seconds, and the
    bystander's latency, errors and stalls (seconds after the clock's start)."""
    name = "commit" if held else "arrival"
    replica = {"replicas": ["replica1"], "durability_timeout_mode": mode,
               "simulated_replicas": {"replica1": {"ack_delay_ms": 0}}, "max_size": 8 << 30}
    if held:
        replica["simulated_replicas_paused"] = "*"
    server, port, _ = start_server(bin_dir, {"buckets": {"storm": replica, "bystander": {}}},
                                   workdir, name)
    storm_json = os.path.join(workdir, f"{name}_run.json")
    bystander_json = os.path.join(workdir, f"{name}_bystander.json")
    procs = []

    def start_storm():
        storm = start_writers(writers_args(bin_dir, port, n, 60000) + ["--json", storm_json],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(storm)
        return storm

    def start_bystander(seconds):
        procs.append(start_bystander_process(bin_dir, port, seconds, bystander_json))
        time.sleep(BYSTANDER_LEAD_S)
        return procs[-1]

    try:
        wait_for_port(port, server, "syncwrite-server")
        if held:
            storm = start_storm()
            wait_all_pending(bin_dir, port, n, storm, f"{name} run (N={n}, {mode})")
            window_s = 2 + n / 100000
            bystander = start_bystander(window_s)
        else:
            time.sleep(0.3)
            # The window: the burst took 4.5-5.4 s at 300k here (the writers
            # SCHED_IDLE); past the last answer the bystander's requests are
            # quiet ones. Checked below.
            window_s = 3 + n / 50000
            bystander = start_bystander(window_s)
        cpu_before = cpu_seconds(server.pid)
        started = time.monotonic()
        started_unix = time.time()
        if held:
            subprocess.run([os.path.join(bin_dir, "syncwrite-cli"), "--port", str(port),
                            "--bucket", "storm", "set-param", "simulated_replicas_paused", ""],
                           check=True, stdout=subprocess.DEVNULL)
        else:
            storm = start_storm()
        output = storm.communicate()[0]
        seconds = time.monotonic() - started
        covered = window_covered(f"{'commit storm' if held else 'arrival burst'} (N={n}, "
                                 f"{mode})", window_s, seconds)
        cpu = cpu_seconds(server.pid) - cpu_before
        if storm.returncode != 0:
            sys.exit(f"storm: mcbp_load ({name}, N={n}, {mode}) failed:\n{output}")
        bystander.wait()
        with open(storm_json) as f:
            storm_report = json.load(f)
        with open(bystander_json) as f:
            bystander_report = json.load(f)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        server.terminate()
        server.wait()
    committed = storm_report["statuses"].get("0x00", 0)
    return {"seconds": seconds, "committed": committed,
            "not_committed": storm_report["ops"] - committed,
            # An upper bound: the bystander's requests count too.
            "cpu_us_per_write": cpu * 1e6 / n,
            "bystander_us": bystander_report["latency_us"],
            "bystander_errors": bystander_report["errors"],
            "bystander_window_covered": covered,
            "bystander_stalls": stalls(bystander_report, started_unix)}


def shutdown_seconds(bin_dir, n, mode, workdir, departed):
    """SIGTERM with N SyncWrites pending (60 s timeouts): how long until the
    server exits. departed: the writers were killed first (their answers are
    owed to nobody); otherwise they are still connected and read them."""
    config = {"buckets": {"storm": {"replicas": ["replica1"], "durability_timeout_mode": mode,
                                    "max_size": 8 << 30}}}
    server, port, log_path = start_server(bin_dir, config, workdir, "shutdown")
    writers = None
    try:
        wait_for_port(port, server, "syncwrite-server")
        writers = start_writers(writers_args(bin_dir, port, n, 60000), False,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_all_pending(bin_dir, port, n, writers, f"shutdown run (N={n}, {mode})")
        if departed:
            writers.kill()
            writers.wait()
            time.sleep(0.5)  # the server reads every connection's end
        started = time.monotonic()
        server.send_signal(15)
        server.wait(timeout=60)
        seconds = time.monotonic() - started
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        if writers and writers.poll() is None:
            writers.kill()
            writers.wait()
    with open(log_path) as f:
        drained = "did not drain" not in f.read()
    return {"seconds": seconds, "exit_code": server.returncode, "drained": drained}


def run_pair(bin_dir, n, mode, timeout_ms, workdir):
    """The storm alone (its CPU, RSS and lateness are the server's for the
    storm only), then again with the bystander (whose latency it reports)."""
    alone = run_one(bin_dir, n, mode, timeout_ms, workdir, with_bystander=False)
    beside = run_one(bin_dir, n, mode, timeout_ms, workdir, with_bystander=True)
    alone["bystander_us"] = beside["bystander_us"]
    alone["bystander_errors"] = beside["bystander_errors"]
    alone["bystander_stalls"] = beside["bystander_stalls"]
    alone["bystander_window_covered"] = beside["bystander_window_covered"]
    alone["accepted_s_with_bystander"] = beside["accepted_s"]
    alone["late_ms_with_bystander"] = beside["late_ms"]
    alone["early"] = alone["early"] or beside["early"]
    alone["not_ambiguous"] += beside["not_ambiguous"]
    alone["commit"] = commit_storm(bin_dir, n, mode, workdir)
    alone["arrival"] = arrival_burst(bin_dir, n, mode, workdir)
    alone["shutdown_departed"] = shutdown_seconds(bin_dir, n, mode, workdir, departed=True)
    alone["shutdown_connected"] = shutdown_seconds(bin_dir, n, mode, workdir, departed=False)
    return alone


@contextlib.contextmanager
def work_directory(keep):
    """A temporary directory, or `keep` (created if need be, never removed)
    with clock.json in it: wall clock minus CLOCK_MONOTONIC, which perf
    sched records with -k CLOCK_MONOTONIC (stall_anatomy.py)."""
    if not keep:
        with tempfile.TemporaryDirectory(prefix="storm_") as workdir:
            yield workdir
        return
    os.makedirs(keep, exist_ok=True)
    with open(os.path.join(keep, "clock.json"), "w") as f:
        json.dump({"unix_minus_monotonic_s": time.time() - time.monotonic()}, f)
    yield keep


def run_directory(workdir, n, mode):
    """Where one N and mode's run files go: emptied first, so that a kept
    directory never mixes this run's files with an earlier one's."""
    path = os.path.join(workdir, f"{n}_{mode}")
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def shutdown_only(args):
    """SIGTERM to exit for each N and mode, the clients gone and connected."""
    print("| N | mode | SIGTERM to exit: clients gone | clients connected |")
    print("|---|---|---|---|")
    failed = 0
    with work_directory(args.keep) as workdir:
        for n in (int(x) for x in args.n.split(",")):
            for mode in args.modes.split(","):
                runs = [shutdown_seconds(args.bin, n, mode, run_directory(workdir, n, mode),
                                         departed=gone)
                        for gone in (True, False)]
                failed += sum(r["exit_code"] != 0 or not r["drained"] for r in runs)
                print(f"| {n:,} | {mode} | {runs[0]['seconds']:.2f} s | {runs[1]['seconds']:.2f} s |")
    if failed:
        sys.exit(f"storm: {failed} shutdown(s) did not drain or exit 0")


def main():
    global WRITERS_SCHED, WRITER_THREADS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="directory with syncwrite-server, "
                        "syncwrite-cli and mcbp_load")
    parser.add_argument("--n", default="10000,100000,300000", help="comma-separated write counts")
    parser.add_argument("--modes", default="event-driven,polling")
    # 4 s: at 300k the writes take 1.8-2.2 s to arrive here (writers at normal
    # priority on two threads). With the 2 s used before 2026-11-26 the first
    # deadlines passed before the last write arrived, often before all were
    # pending, and the run then had no RSS or resolution figures.
    parser.add_argument("--timeout-ms", type=int, default=4000)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--keep", help="keep each run's files in this directory "
                        "(for stall_anatomy.py)")
    parser.add_argument("--writers-sched", choices=("idle", "normal"), default="idle",
                        help="the writers' scheduling policy: SCHED_IDLE (default: they stand "
                        "for clients on other machines) or normal")
    parser.add_argument("--writer-threads", type=int, default=WRITER_THREADS,
                        help="threads driving the writers' connections (mcbp_load --threads); "
                        "0: one per connection")
    parser.add_argument("--shutdown-only", action="store_true",
                        help="only SIGTERM to exit, clients gone and connected")
    args = parser.parse_args()
    WRITERS_SCHED = args.writers_sched
    WRITER_THREADS = args.writer_threads
    print(f"storm: writers run {'SCHED_IDLE' if WRITERS_SCHED == 'idle' else 'at normal priority'}"
          f" on {WRITER_THREADS or 'one per connection'} thread(s)", file=sys.stderr)

    if args.shutdown_only:
        shutdown_only(args)
        return
    results = []
    with work_directory(args.keep) as workdir:
        for n in (int(x) for x in args.n.split(",")):
            for mode in args.modes.split(","):
                print(f"storm: N={n}, {mode}", file=sys.stderr)
                results.append(run_pair(args.bin, n, mode, args.timeout_ms,
                                        run_directory(workdir, n, mode)))

    print(f"| N | mode | accepted in | RSS per pending write (whole RSS) | late p50 / p99 / max "
          f"(answer − {args.timeout_ms} ms timeout) | server: late p50 / p99 / max | early "
          "| not ambiguous | server CPU per write (all / resolution) "
          "| bystander p50 / p99 / max | SIGTERM to exit: clients gone / connected |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")

    def f(v, spec, unit=""):
        return "—" if v is None else format(v, spec) + unit

    def shutdown(s):
        return f"{s['seconds']:.2f} s" + ("" if s["exit_code"] == 0 and s["drained"] else
                                           f" (exit {s['exit_code']}, drained: {s['drained']})")

    for r in results:
        late, by, sl = r["late_ms"], r["bystander_us"], r["server_late_ms"]
        print(f"| {r['n']:,} | {r['mode']} | {f(r['accepted_s'], '.2f', ' s')} "
              f"| {f(r['rss_per_pending_write_bytes'], '.0f', ' B')} "
              f"({f(r['peak_rss_mib'], '.0f', ' MiB')}) "
              f"| {late['p50']:.0f} / {late['p99']:.0f} / {late['max']:.0f} ms "
              f"| ≤ {sl['p50']:.1f} / ≤ {sl['p99']:.1f} / {sl['max']:.1f} ms "
              f"| {'yes' if r['early'] else 0} | {r['not_ambiguous']} "
              f"| {f(r['server_cpu_us_per_write'], '.1f')} / "
              f"{f(r['resolve_cpu_us_per_write'], '.1f', ' µs')} "
              f"| {by['p50'] / 1000:.2f} / {by['p99'] / 1000:.2f} / {by['max'] / 1000:.1f} ms "
              f"| {shutdown(r['shutdown_departed'])} / {shutdown(r['shutdown_connected'])} |")
    for key, what, seconds in (("commit", "commit storm: resume to last answer",
                                "resume_to_last_answer_s"),
                               ("arrival", "arrival burst (replica acking): first send to last "
                                "answer", "first_send_to_last_answer_s")):
        print()
        print(f"| N | mode | {what} | not committed | server CPU per write "
              "| bystander p50 / p99 / max |")
        print("|---|---|---|---|---|---|")
        for r in results:
            c = r[key]
            by = c["bystander_us"]
            print(f"| {r['n']:,} | {r['mode']} | {c[seconds]:.2f} s "
                  f"| {c['not_committed']} | {c['cpu_us_per_write']:.1f} µs "
                  f"| {by['p50'] / 1000:.2f} / {by['p99'] / 1000:.2f} / {by['max'] / 1000:.1f} ms |")
    print()
    print(f"Bystander stalls over {STALL_US / 1000:g} ms, the worst first, as (seconds after the "
          "storm's first send, or after the resume: latency ms):")
    for r in results:
        for what, st, covered in (
                ("timeout storm", r["bystander_stalls"], r["bystander_window_covered"]),
                ("commit storm", r["commit"]["bystander_stalls"],
                 r["commit"]["bystander_window_covered"]),
                ("arrival burst", r["arrival"]["bystander_stalls"],
                 r["arrival"]["bystander_window_covered"])):
            worst = ", ".join(f"{t:.2f} s: {ms:g}" for t, ms in st["worst"])
            if not covered:
                worst += " (the bystander's window ended before the storm did)"
            pending = r["accepted_s_with_bystander"]
            pending = (f"all pending at {pending:.2f} s" if pending is not None else
                       "not all pending by 90% of the timeout")
            phases = (f" ({pending}, deadlines from {r['timeout_ms'] / 1000:g} s)"
                      if what == "timeout storm" else "")
            print(f"- {r['n']:,} {r['mode']}, {what}{phases}: {st['count']} stalls; {worst}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)
    bad = [r for r in results if r["early"] or r["not_ambiguous"] or r["bystander_errors"] or
           r["commit"]["not_committed"] or r["commit"]["bystander_errors"] or
           r["arrival"]["not_committed"] or r["arrival"]["bystander_errors"] or
           any(r[k]["exit_code"] != 0 or not r[k]["drained"]
               for k in ("shutdown_departed", "shutdown_connected"))]
    if bad:
        sys.exit(f"storm: {len(bad)} run(s) had early answers, answers other than "
                 "SyncWriteAmbiguous, bystander errors, or a shutdown that did not drain "
                 "or exit 0, or a commit storm or arrival burst that did not commit every write "
                 "(see above)")


if __name__ == "__main__":
    main()
