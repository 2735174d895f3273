#!/usr/bin/env python3
"""Writes docs/benchmarks.md's "Current figures" table from bench/results/.

Reads the JSON that `./dev bench` leaves in bench/results/ (whichever of the
files below exist), checks each figure against its target, and replaces what
lies between the <!-- CURRENT-FIGURES --> and <!-- /CURRENT-FIGURES --> lines
of the page. A figure whose file is missing is listed as "not measured", never
carried over from an earlier table: the table says only what the files say.

  mcbp_load_side_by_side.json  bench/mcbp_load/side_by_side.py (issue 17)
  mcbp_load_durable_plain.json the same, rows 1 and 6 over 10 rounds: the
                               durable / plain figure when present
  timeout_cpu_<n>.json         timeout_precision at 2,000 timeouts/s (issue 17)
  timeout_precision.json       timeout_precision, the default mix (issue 16)
  idle_cpu.json                bench/idle_cpu (issues 7, 17)

Usage (./dev bench runs it after a full run; ./dev bench figures on its own):
  current_figures.py [--results bench/results] [--doc docs/benchmarks.md]
"""

import argparse
import datetime
import glob
import json
import os
import statistics
import subprocess
import sys

# Rows 1 and 6 of side_by_side.py over 10 rounds (./dev bench load).
PAIRED_FILE = "mcbp_load_durable_plain.json"
BEGIN = "<!-- CURRENT-FIGURES -->"
END = "<!-- /CURRENT-FIGURES -->"


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as e:
        # A run that died while writing: its figures are not measured.
        print(f"current_figures: ignoring {path}: {e}", file=sys.stderr)
        return None


def head_commit():
    """The checkout's last commit that changed what the binaries are built
    from (not docs, Markdown, Python, the ./dev script, whose flags live
    in CMakePresets.json, or CI's script), and its commit time; (None, None)
    outside git."""
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%h %ct", "--", ".",
                              ":(exclude)docs", ":(exclude)*.md", ":(exclude)*.py", ":(exclude)dev",
                              ":(exclude).ci"],
                             capture_output=True, text=True, check=True).stdout.split()
        return out[0], int(out[1])
    except (OSError, subprocess.CalledProcessError, IndexError, ValueError):
        return None, None


COMMIT, COMMIT_TIME = head_commit()


def stamp(path):
    """The file's date, as the row's "when" cell; a file older than the
    checkout's commit says so (it may come from an earlier build)."""
    mtime = os.path.getmtime(path)
    when = datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    if COMMIT_TIME is not None and mtime < COMMIT_TIME:
        when += f" (before {COMMIT})"
    return when


def measured(results, name):
    """(the file's JSON, its "when" cell), or (None, "—") when it is missing."""
    path = os.path.join(results, name)
    data = load(path)
    return (None, "—") if data is None else (data, stamp(path))


# Targets the project decided to retire or restate (issue notes, 2026-12-01):
# their rows keep the figure and say what was decided instead of met/missed.
DECIDED = {
    "SET, 1 in flight": ("parity (decided)", "at parity: CPU per op within noise"),
    "durable": ("retired", "retired: an in-process replica's ack path; a real replica's figure replaces it"),
    "event-driven": ("equal lateness", "decided: compared at equal lateness"),
}


def verdict(value, bound, at_most=True):
    if value is None:
        return "not measured"
    met = value <= bound if at_most else value >= bound
    return "met" if met else "**missed**"


def load_rows(results):
    """Issue 17's rows from side_by_side.py's JSON."""
    data, when = measured(results, "mcbp_load_side_by_side.json")
    targets = [("SET, 32 in flight", 1.0), ("GET, 32 in flight", 1.2), ("SET, 1 in flight", 1.0)]
    # Without the file every row below is "not measured" (verdict of None).
    by_load = {row["load"]: row for row in data["table"]} if data else {}
    rows = []
    for name, bound in targets:
        row = by_load.get(name)
        ratio = row.get("ratio") if row else None
        spread = row.get("round_ratios") if row else None
        figure = "—" if ratio is None else f"{ratio:.2f}×"
        if spread:
            figure += f" (rounds {min(spread):.2f}–{max(spread):.2f})"
        target, status = f"≥ {bound:.1f}×", verdict(ratio, bound, at_most=False)
        if name in DECIDED and ratio is not None:
            target, status = DECIDED[name]
        rows.append((f"{name}: ops/s vs memcached", figure, target, status, when))
    rows.append(durable_row(results, data, when))
    return rows


def durable_row(results, data, when):
    """Durable / plain server CPU: from the 10-round file when it has a ratio
    (./dev bench load deletes it, runs the side-by-side, then writes it), else
    from the side-by-side's own rounds."""
    paired_data, paired_when = measured(results, PAIRED_FILE)
    if ((paired_data or {}).get("durable_over_plain_cpu") or {}).get("ratio") is not None:
        data, when = paired_data, paired_when
    by_load = {row["load"]: row for row in data["table"]} if data else {}
    durable = next((row for load_name, row in by_load.items() if load_name.startswith("durable")),
                   None)
    plain = by_load.get("SET, 32 in flight")
    cpu_ratio = None
    figure = "—"
    paired = (data or {}).get("durable_over_plain_cpu") or {}
    if durable and plain and paired.get("ratio") is not None:
        # Files from side_by_side.py from fee3a55 on: each round's durable run
        # follows its plain run, and the ratio is the median of the rounds'.
        cpu_ratio = paired["ratio"]
        spread = paired["round_ratios"]
        figure = (f"{cpu_ratio:.2f}× ({len(spread)} rounds, {min(spread):.2f}–{max(spread):.2f}; "
                  f"medians {durable['syncwrite_cpu_us_per_op']:.2f} vs "
                  f"{plain['syncwrite_cpu_us_per_op']:.2f} µs)")
    elif durable and plain and plain.get("syncwrite_cpu_us_per_op"):
        cpu_ratio = durable["syncwrite_cpu_us_per_op"] / plain["syncwrite_cpu_us_per_op"]
        figure = (f"{cpu_ratio:.2f}× ({durable['syncwrite_cpu_us_per_op']:.2f} vs "
                  f"{plain['syncwrite_cpu_us_per_op']:.2f} µs)")
    target, status = DECIDED["durable"] if cpu_ratio is not None else ("—", "not measured")
    return ("durable SET (replica acks at once): server CPU per op vs plain SET", figure,
            target, status, when)


def timeout_cpu_rows(results):
    """Event-driven against polling CPU at 2,000 timeouts/s: one pair per file."""
    paths = sorted(glob.glob(os.path.join(results, "timeout_cpu_*.json")))
    ratios = []
    # The driver's own CPU (files from d50cdb3 on): a driver that takes the
    # cores the server needs skews the ratio, as a spinning one did.
    driver = []
    for path in paths:
        runs = {r["mode"]: r for r in load(path)["runs"]}
        ed, polling = runs.get("event-driven"), runs.get("polling")
        if ed and polling and polling["server_cpu_pct"] > 0:
            ratios.append(ed["server_cpu_pct"] / polling["server_cpu_pct"])
            driver += [r["driver_cpu_pct"] for r in (ed, polling) if "driver_cpu_pct" in r]
    name = "event-driven CPU vs polling, 2,000 timeouts/s of 100 ms"
    if not ratios:
        return [(name, "—", DECIDED["event-driven"][0], "not measured", "—")]
    ratio = statistics.median(ratios)
    figure = f"{ratio:.2f}× (median of {len(ratios)} pairs, {min(ratios):.2f}–{max(ratios):.2f}"
    if driver:
        figure += f"; driver {min(driver):.0f}–{max(driver):.0f}% of a core"
    figure += ")"
    target, status = DECIDED["event-driven"]
    return [(name, figure, target, status, stamp(paths[-1]))]


def precision_rows(results):
    """Issue 16: never early; lateness p99 within a tick (+ the interval when polling)."""
    data, when = measured(results, "timeout_precision.json")
    if data is None:
        return [("timeout answers before the timeout (both modes)", "—", "0", "not measured", when)]
    resolution_ms = data["coarse_resolution_us"] / 1000
    interval_ms = data["polling_interval_ms"]
    early = sum(r["early"] for r in data["runs"])
    answers = sum(r["count"] for r in data["runs"])
    rows = [("timeout answers before the timeout (both modes)", f"{early} of {answers:,}", "0",
             "met" if early == 0 else "**missed**", when)]
    for mode, bound in (("event-driven", resolution_ms + 1),
                        ("polling", interval_ms + resolution_ms + 1)):
        p99s = [r["p99_ms"] for r in data["runs"] if r["mode"] == mode]
        worst = max(p99s) if p99s else None
        rows.append((f"{mode}: lateness p99, {data['rate_per_s']:g} timeouts/s (worst scenario)",
                     "—" if worst is None else f"{worst:.1f} ms", f"≤ {bound:g} ms",
                     verdict(worst, bound), when))
    return rows


def idle_rows(results):
    """Idle buckets: event-driven runs nothing; polling reads only busy vbuckets."""
    data, when = measured(results, "idle_cpu.json")
    if data is None:
        return [("idle, 30 buckets: event-driven / polling CPU", "—", "—", "not measured", when)]
    by_key = {(s["group"], s["mode"], s["buckets"]): s for s in data["scenarios"]}
    rows = []
    ed = by_key.get(("idle", "event-driven", 30))
    if ed:
        rows.append(("idle, 30 buckets, event-driven: whole process, timeout-task runs",
                     f"{ed['process_cpu_percent']:.2f}% of a core, "
                     f"{ed['timeout_task_runs_per_s']:g} runs/s", "≤ 0.5%, 0 runs",
                     "met" if ed["process_cpu_percent"] <= 0.5 and ed["timeout_task_runs"] == 0
                     else "**missed**", when))
    polling = by_key.get(("idle", "polling", 30))
    if polling:
        rows.append(("idle, 30 buckets, polling: whole process",
                     f"{polling['process_cpu_percent']:.2f}% of a core", "≤ 2%",
                     verdict(polling["process_cpu_percent"], 2.0), when))
    return rows


def machine_line(results):
    for name in ("mcbp_load_side_by_side.json", PAIRED_FILE, "timeout_precision.json",
                 "idle_cpu.json"):
        data = load(os.path.join(results, name))
        if data and data.get("machine"):
            m = data["machine"]
            cpus = m.get("cpus", m.get("cores"))
            kernel = m.get("kernel", "")
            if kernel and not kernel.startswith("Linux"):
                kernel = f"Linux {kernel}"
            return f"{m.get('cpu_model', 'unknown')}, {cpus} CPUs, {kernel}"
    return "unknown"


def table(results):
    lines = [f"Written by `bench/current_figures.py` from `bench/results/`. The checkout's code "
             f"was last changed by {COMMIT or 'an unknown commit'}; each row gives when its file "
             "was written, and marks a file older than that commit, which may come from an "
             "earlier build. Machine: "
             f"{machine_line(results)}. Commands: `./dev bench` (all), or `./dev bench load`, "
             "`timeout_cpu`, `timeout_precision`, `idle_cpu`, then `./dev bench figures`.",
             "",
             "| figure | measured | target | status | when (UTC) |",
             "|---|---|---|---|---|"]
    for rows in (load_rows(results), timeout_cpu_rows(results), precision_rows(results),
                 idle_rows(results)):
        lines += [f"| {' | '.join(row)} |" for row in rows]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="bench/results")
    parser.add_argument("--doc", default="docs/benchmarks.md")
    args = parser.parse_args()
    with open(args.doc) as f:
        page = f.read()
    if BEGIN not in page or END not in page or page.index(BEGIN) > page.index(END):
        sys.exit(f"current_figures: {args.doc} has no {BEGIN} ... {END} block")
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{BEGIN}\n{table(args.results)}\n{END}{tail}"
    with open(args.doc, "w") as f:
        f.write(new)
    print(f"current_figures: wrote the table into {args.doc}", file=sys.stderr)


if __name__ == "__main__":
    main()
