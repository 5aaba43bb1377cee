# Every command the user guide shows is run here: each ```sh block of
# docs/guide/*.md runs under `bash -euo pipefail` and must exit 0. A page's
# blocks run in order in one fresh directory, which looks like the top of a
# checkout: build/ (this build), examples/, targets/, a copy of python/
# (whose default build is that build/) and .venv/bin/python (the test's
# interpreter). A block preceded by
# `<!-- guide-test: skip: REASON -->` is not run; the skipped blocks are
# listed below, so that adding one is a visible change.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %cleave_src %t | FileCheck %s
#
# CHECK-DAG: docs/guide/cli.md: {{[1-9][0-9]*}} blocks run
# CHECK-DAG: docs/guide/concepts.md: 0 blocks run
# CHECK-DAG: docs/guide/getting-started.md: {{[1-9][0-9]*}} blocks run, 1 skipped
# CHECK-DAG: docs/guide/plans.md: {{[1-9][0-9]*}} blocks run
# CHECK-DAG: docs/guide/python.md: {{[1-9][0-9]*}} blocks run
# CHECK-DAG: docs/guide/targets.md: {{[1-9][0-9]*}} blocks run
# CHECK-DAG: docs/guide/training.md: 16 blocks run
# CHECK-DAG: docs/guide/deploying.md: 3 blocks run, 2 skipped
# CHECK-DAG: skipped docs/guide/getting-started.md:{{[0-9]+}}: these are the setup and the test suite themselves
# CHECK-DAG: skipped docs/guide/deploying.md:{{[0-9]+}}: mpirun run as root (as in CI) also needs --allow-run-as-root; test/runtime/mpi-pipeline.test runs this command
# CHECK-DAG: skipped docs/guide/deploying.md:{{[0-9]+}}: needs a cluster of 2 nodes; scripts/slurm-check.sh runs srun on one
# CHECK: all guide commands passed

import glob
import os
import re
import shutil
import subprocess
import sys

SKIP = re.compile(r"<!--\s*guide-test:\s*skip:\s*(.*?)\s*-->")


def blocks(path):
    """(line, code, skip reason or None) of each ```sh block of `path`."""
    with open(path) as f:
        lines = f.read().splitlines()
    found = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            start = i + 1
            skip = None
            for back in range(i - 1, -1, -1):
                if lines[back].strip():
                    match = SKIP.search(lines[back])
                    skip = match.group(1) if match else None
                    break
            j = start
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            found.append((start, "\n".join(lines[start:j]) + "\n", skip))
            i = j
        i += 1
    return found


def make_checkout(directory, src, build):
    """A directory where the guide's relative paths resolve."""
    os.makedirs(directory)
    os.symlink(build, os.path.join(directory, "build"))
    for name in ("examples", "targets", "docs"):
        os.symlink(os.path.join(src, name), os.path.join(directory, name))
    # A copy, not a link: the package finds its checkout's default build
    # from its own resolved path, which must be this directory's build/
    # (the build under test), not the source tree's.
    shutil.copytree(os.path.join(src, "python"), os.path.join(directory, "python"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    venv_bin = os.path.join(directory, ".venv", "bin")
    os.makedirs(venv_bin)
    wrapper = os.path.join(venv_bin, "python")
    with open(wrapper, "w") as f:
        f.write(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    os.chmod(wrapper, 0o755)


def main():
    src, work = sys.argv[1], sys.argv[2]
    cleave = shutil.which("cleave")
    if not cleave:
        sys.exit("cleave is not on PATH")
    build = os.path.dirname(os.path.dirname(os.path.realpath(cleave)))
    pages = sorted(glob.glob(os.path.join(src, "docs", "guide", "*.md")))
    if not pages:
        sys.exit("no docs/guide/*.md")
    failures = 0
    for page in pages:
        name = os.path.relpath(page, src)
        directory = os.path.join(work, os.path.splitext(os.path.basename(page))[0])
        make_checkout(directory, src, build)
        ran = skipped = 0
        for line, code, skip in blocks(page):
            if skip:
                print(f"skipped {name}:{line}: {skip}")
                skipped += 1
                continue
            ran += 1
            result = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=directory,
                                    capture_output=True, text=True, timeout=300)
            if result.returncode != 0:
                failures += 1
                print(f"FAILED {name}:{line} (exit {result.returncode})\n{code}"
                      f"--- stdout\n{result.stdout[-3000:]}--- stderr\n{result.stderr[-3000:]}",
                      file=sys.stderr)
        print(f"{name}: {ran} blocks run" + (f", {skipped} skipped" if skipped else ""))
    if failures:
        sys.exit(f"{failures} guide block(s) failed")
    print("all guide commands passed")


main()
