#!/usr/bin/env python3
"""Runs clang-tidy over source files, skipping those whose last analysis was clean
and whose input has not changed since.

A file's key is the SHA-256 of everything its analysis depends on: the
clang-tidy version, every .clang-tidy of the tree, the header filter, the
file's compile commands, and its preprocessed text with comments kept
(`-E -C`, so a NOLINT in a header counts; -CC, which also keeps those in
macro bodies, breaks Boost's computed includes) and with the tree's path replaced
by a placeholder, so a clone elsewhere shares the entries. A clean result is
recorded as an empty file named by the key under the cache directory; a file
with findings is analysed again on every run. The cache lives outside the tree
(default ~/.cache/syncwrite/clang-tidy), so a fresh clone on the same machine
benefits.

Costs: one preprocessor run per file (a fraction of the analysis), jobs at a
time. A file whose preprocessing fails is analysed, never skipped.

Usage: cached_clang_tidy.py -p BUILD_DIR --root TREE --header-filter RE
       [--jobs N] [--cache DIR] [--log FILE] FILE...
Exit status: 0 when every file is clean, 1 otherwise (findings in the log).
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import sys

LAUNCHERS = {"ccache", "sccache", "distcc"}


def compile_commands(build_dir):
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        entries = json.load(f)
    by_file = {}
    for e in entries:
        path = os.path.normpath(os.path.join(e["directory"], e["file"]))
        args = e.get("arguments") or shlex.split(e["command"])
        while args and os.path.basename(args[0]) in LAUNCHERS:
            args = args[1:]
        by_file.setdefault(path, []).append((e["directory"], args))
    return by_file


def preprocess_args(args):
    """The compile command turned into one that writes the preprocessed text to stdout."""
    out = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-o", "-MF", "-MT", "-MQ"):
            i += 2
            continue
        i += 1
        if a in ("-c", "-MD", "-MMD") or a.startswith("-o"):
            continue
        out.append(a)
    return out + ["-E", "-C"]


def tidy_config(root):
    text = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ("build", "node_modules", ".git")]
        if ".clang-tidy" in filenames:
            p = os.path.join(dirpath, ".clang-tidy")
            with open(p, "rb") as f:
                text.append(os.path.relpath(p, root).encode() + b"\0" + f.read())
    return b"\0".join(sorted(text))


def key_for(path, commands, common, root):
    h = hashlib.sha256(common)
    h.update(os.path.relpath(path, root).encode())
    placeholder = b"@TREE@"
    for directory, args in commands:
        h.update(" ".join(args).replace(root, "@TREE@").encode())
        r = subprocess.run(preprocess_args(args), cwd=directory, capture_output=True)
        if r.returncode != 0:
            return None
        h.update(r.stdout.replace(root.encode(), placeholder))
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-p", dest="build_dir", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--header-filter", required=True)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/syncwrite/clang-tidy"))
    ap.add_argument("--log", default=None)
    ap.add_argument("files", nargs="+")
    opts = ap.parse_args()

    root = os.path.realpath(opts.root)
    os.makedirs(opts.cache, exist_ok=True)
    version = subprocess.run(["clang-tidy", "--version"], capture_output=True, check=True).stdout
    common = version + b"\0" + tidy_config(root) + b"\0" + opts.header_filter.replace(root, "@TREE@").encode()
    commands = compile_commands(opts.build_dir)

    def analyse(f):
        path = os.path.realpath(f)
        cmds = commands.get(path)
        # A file the build does not compile (examples/embed, a CMake project of its own) is
        # analysed with the command clang-tidy infers from its neighbours, and never cached.
        key = key_for(path, cmds, common, root) if cmds else None
        if key and os.path.exists(os.path.join(opts.cache, key)):
            return f, True, "", True
        r = subprocess.run(["clang-tidy", "-quiet", "-p", opts.build_dir,
                            "-header-filter=" + opts.header_filter, path],
                           capture_output=True, text=True)
        text = r.stdout + r.stderr
        clean = r.returncode == 0 and "warning:" not in text and "error:" not in text
        if clean and key:
            open(os.path.join(opts.cache, key), "w").close()
        return f, clean, text, False

    failed, cached = [], 0
    log = open(opts.log, "w") if opts.log else sys.stdout
    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        for f, clean, text, hit in pool.map(analyse, opts.files):
            cached += hit
            if text:
                log.write("== %s\n%s" % (f, text))
            if not clean:
                failed.append(f)
    print("clang-tidy: %d files, %d unchanged since a clean analysis, %d analysed, %d with findings"
          % (len(opts.files), cached, len(opts.files) - cached, len(failed)), file=sys.stderr)
    for f in failed:
        print("clang-tidy: findings in %s" % f, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
