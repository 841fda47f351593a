#!/usr/bin/env python3
"""Cold index time of one or more noggin binaries, interleaved.

    python3 scripts/cold-index.py BIN[,BIN...] BRAIN_DIR [RUNS]

Runs `BIN index --brain BRAIN_DIR --data-dir EMPTY` RUNS times (default 9)
for each binary in turn, each into a fresh empty data folder, and prints the
median wall time, the median CPU time (user + system) and the median peak
RSS of each, and the median of its runs' ratios to the first binary's run
of the same round. Binaries
built from different commits are compared in one sitting this way: timings
on a shared machine drift by more than the changes being measured.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    bins = sys.argv[1].split(",")
    brain = sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 9
    wall = {b: [] for b in bins}
    cpu = {b: [] for b in bins}
    rss = {b: [] for b in bins}
    for _ in range(runs):
        for b in bins:
            data = tempfile.mkdtemp(prefix="noggin-cold-")
            started = time.perf_counter()
            proc = subprocess.Popen(
                [b, "index", "--brain", brain, "--data-dir", data],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            _, status, usage = os.wait4(proc.pid, 0)
            wall[b].append(time.perf_counter() - started)
            cpu[b].append(usage.ru_utime + usage.ru_stime)
            rss[b].append(usage.ru_maxrss / 1024)
            shutil.rmtree(data)
            if status != 0:
                sys.exit(f"{b} failed on {brain}")
    for b in bins:
        # Each run against the first binary's run of the same round: the
        # median of those ratios is steadier than a ratio of medians while
        # the machine's speed drifts.
        paired = [w / first for w, first in zip(wall[b], wall[bins[0]])]
        paired_cpu = [c / first for c, first in zip(cpu[b], cpu[bins[0]])]
        print(
            f"{b}: wall median {statistics.median(wall[b]):.3f} s "
            f"(min {min(wall[b]):.3f}), cpu median {statistics.median(cpu[b]):.3f} s, "
            f"peak RSS median {statistics.median(rss[b]):.0f} MB; "
            f"paired with the first: wall {statistics.median(paired):.3f}, "
            f"cpu {statistics.median(paired_cpu):.3f}"
        )


if __name__ == "__main__":
    main()
