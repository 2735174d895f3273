#!/usr/bin/env python3
"""Draws the timeout storm's lateness and the bystander's latency against N.

Usage: plot.py RESULTS_JSON OUTPUT_PNG

Reads the JSON that storm.py --json writes (a list of runs, one per N and
mode) and draws two panels, one line per timeout mode, N on a log axis:
  - lateness: the server's own maximum (deadline to answer handed to the
    connection, timeout_late_max_us) and the client's p99 (answer latency
    minus the timeout, an upper bound that includes the time the request
    waited to be read);
  - the bystander's p99 and maximum in each scenario (timeout storm, commit
    storm, arrival burst).
Issue 23's bounds are drawn as dashed lines: 250 ms of lateness
(event-driven; polling adds its 25 ms interval), and 2 ms p99 / 10 ms max
for the bystander.
Needs matplotlib (Debian: python3-matplotlib; ./dev bench storm installs it).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")  # no display: write the file only
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"polling": "tab:red", "event-driven": "tab:blue"}
SCENARIOS = (("timeout storm", lambda r: r["bystander_us"], "o"),
             ("commit storm", lambda r: r["commit"]["bystander_us"], "s"),
             ("arrival burst", lambda r: r.get("arrival", {}).get("bystander_us"), "^"))


def by_mode(runs):
    modes = {}
    for r in sorted(runs, key=lambda r: r["n"]):
        modes.setdefault(r["mode"], []).append(r)
    return modes


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1]) as f:
        runs = json.load(f)
    if not runs:
        sys.stderr.write(f"plot.py: no runs in {argv[1]}\n")
        return 1
    modes = by_mode(runs)

    fig, (late_ax, by_ax) = plt.subplots(1, 2, figsize=(11, 4.5), dpi=100)
    for mode, rs in modes.items():
        color = COLORS.get(mode)
        ns = [r["n"] for r in rs]
        server_max = [r["server_late_ms"]["max"] for r in rs]
        client_p99 = [r["late_ms"]["p99"] for r in rs]
        late_ax.plot(ns, server_max, marker="o", color=color, label=f"{mode}: server max")
        late_ax.plot(ns, client_p99, marker="o", color=color, linestyle=":",
                     label=f"{mode}: client p99 (upper bound)")
        for scenario, pick, marker in SCENARIOS:
            points = [(r["n"], pick(r)) for r in rs if pick(r)]
            if not points:
                continue
            xs = [n for n, _ in points]
            by_ax.plot(xs, [b["p99"] / 1000 for _, b in points], marker=marker, color=color,
                       label=f"{mode}, {scenario}: p99")
            by_ax.plot(xs, [b["max"] / 1000 for _, b in points], marker=marker, color=color,
                       linestyle=":", label=f"{mode}, {scenario}: max")

    late_ax.axhline(250, color="gray", linestyle="--", linewidth=1)
    late_ax.annotate("250 ms (issue 23, event-driven)", (0.01, 250), xycoords=("axes fraction",
                     "data"), fontsize=7, color="gray", va="bottom")
    late_ax.set_xscale("log")
    late_ax.set_xlabel("SyncWrites timing out at once (N)")
    late_ax.set_ylabel("ms after the deadline")
    late_ax.set_title("Lateness in a timeout storm")
    late_ax.grid(True, which="both", alpha=0.3)
    late_ax.legend(fontsize=7)

    for bound, text in ((2, "2 ms p99"), (10, "10 ms max")):
        by_ax.axhline(bound, color="gray", linestyle="--", linewidth=1)
        by_ax.annotate(text, (0.01, bound), xycoords=("axes fraction", "data"), fontsize=7,
                       color="gray", va="bottom")
    by_ax.set_xscale("log")
    by_ax.set_yscale("log")
    by_ax.set_xlabel("N")
    by_ax.set_ylabel("bystander GET/SET latency, ms (log)")
    by_ax.set_title("A bystander on another bucket")
    by_ax.grid(True, which="both", alpha=0.3)
    by_ax.legend(fontsize=6, ncol=2)

    fig.tight_layout()
    fig.savefig(argv[2])
    print(f"plot.py: wrote {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
