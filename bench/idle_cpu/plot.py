#!/usr/bin/env python3
"""Draws idle CPU (% of one core) against bucket count per timeout mode.

Usage: plot.py RESULTS_JSON OUTPUT_PNG

Reads the JSON written by idle_cpu (bench/idle_cpu/report.h documents its
shape) and draws one line per mode for the "idle" scenarios, kv_engine's
published reference (30 empty buckets, measured with top) as hollow markers,
and the slow-clock pair, if it was run, as a note. A point at 0 ticks is
labelled with its schedstat figure (nanosecond runtime) as well. The y axis is symlog so
that 0%, a fraction of a percent and kv_engine's 89% all stay readable.
Needs matplotlib (Debian: python3-matplotlib; ./dev bench installs it).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")  # no display: write the file only
import matplotlib.pyplot as plt  # noqa: E402

# kv_engine's figures for 30 empty buckets, % of one core (see docs/benchmarks.md).
KV_ENGINE_REFERENCE = {"polling": 89.3, "event-driven": 10.3}
COLORS = {"polling": "tab:red", "event-driven": "tab:blue"}


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1]) as f:
        doc = json.load(f)

    by_mode = {}
    for s in doc["scenarios"]:
        if s["group"] == "idle":
            by_mode.setdefault(s["mode"], []).append(
                (s["buckets"], s["process_cpu_percent"], s.get("process_runtime_percent")))
    if not by_mode:
        sys.stderr.write(f"plot.py: no idle scenarios in {argv[1]}\n")
        return 1

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    for mode, points in sorted(by_mode.items()):
        points.sort()
        xs, ys, _ = zip(*points)
        color = COLORS.get(mode)
        ax.plot(xs, ys, marker="o", color=color, label=f"syncwrite, {mode}")
        for x, y, precise in points:
            # Below one tick the schedstat figure says how far below.
            label = f"{y:.2f}%" if y > 0 or precise is None else f"0 ticks ({precise:.2g}%)"
            ax.annotate(label, (x, y), textcoords="offset points", xytext=(4, 6),
                        fontsize=8, color=color)
        if mode in KV_ENGINE_REFERENCE:
            ref = KV_ENGINE_REFERENCE[mode]
            ax.plot([30], [ref], marker="s", markerfacecolor="none", linestyle="none",
                    color=color, label=f"kv_engine, {mode} (top)")
            ax.annotate(f"{ref}%", (30, ref), textcoords="offset points", xytext=(-38, -3),
                        fontsize=8, color=color)

    note = []
    slow = doc.get("comparisons", {}).get("slow_clock_syscall_vs_coarse")
    if slow:
        ratio = f"{slow['ratio']:.1f}x" if slow["ratio"] is not None else "n/a"
        note.append(f"slow clock, polling B={slow['buckets']}: syscall "
                    f"{slow['numerator_percent']:.2f}% vs coarse "
                    f"{slow['denominator_percent']:.2f}% ({ratio})")
    m = doc["machine"]
    note.append(f"{m['cores']} cores, {m['cpu_model']}, clock source {m['clock_source']}; "
                f"window {doc['options']['window_s']:g} s")
    ax.text(0.01, 0.99, "\n".join(note), transform=ax.transAxes, fontsize=7, va="top")

    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_ylim(bottom=0, top=max(200.0, ax.get_ylim()[1]))
    ax.set_xlim(left=0, right=max(32, max(x for pts in by_mode.values() for x, _, _ in pts) + 2))
    ax.set_xlabel("empty buckets (1024 vbuckets each)")
    ax.set_ylabel("idle CPU, % of one core (symlog)")
    ax.set_title("Idle CPU of syncwrite-server by timeout mode")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(0.0, 0.88))
    fig.tight_layout()
    fig.savefig(argv[2])
    print(f"plot.py: wrote {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
