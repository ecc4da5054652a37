#!/usr/bin/python3
# Paired timing of commands (a script, not a test): runs them in turn, N rounds, alternating the
# order every round, so that a lab or a machine drifting during the run moves every command alike.
# Prints each command's median wall time (this script's process start included, the same for all)
# and, for each command after the first, the median of its per-round ratio to the first.
#   bench/paired.py N 'COMMAND A' 'COMMAND B' ...
# e.g. two builds on one lab:  bench/paired.py 100 "old/zkverify quorum --servers $S" "new/zkverify quorum --servers $S"
import shlex
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 3 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 1:
        sys.exit("usage: bench/paired.py ROUNDS COMMAND [COMMAND...]  (ROUNDS a positive integer)")
    rounds, commands = int(sys.argv[1]), sys.argv[2:]
    times = [[] for _ in commands]
    for round_number in range(rounds):
        order = range(len(commands)) if round_number % 2 == 0 else reversed(range(len(commands)))
        for k in order:
            started = time.perf_counter()
            subprocess.run(shlex.split(commands[k]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=60, check=False)
            times[k].append((time.perf_counter() - started) * 1000)
    for k, command in enumerate(commands):
        print(f"{statistics.median(times[k]):8.2f} ms  {command}")
    for k in range(1, len(commands)):
        ratios = [b / a for a, b in zip(times[0], times[k])]
        print(f"command {k + 1} / command 1: median of the per-round ratios {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
