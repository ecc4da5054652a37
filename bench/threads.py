#!/usr/bin/env python3
"""Peak thread count of one command: runs it and reads /proc/PID/status ("Threads:") as fast as it
can until the command exits (or, with --for SECONDS, until then, and then sends SIGTERM).

  bench/threads.py [--for SECONDS] -- COMMAND ARG...    prints "peak N threads (M samples)"
"""
import signal
import subprocess
import sys
import time


def threads_of(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def main():
    args = sys.argv[1:]
    duration = None
    if args[:1] == ["--for"]:
        duration = float(args[1])
        args = args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak, samples = 0, 0
    end = time.monotonic() + duration if duration else None
    while child.poll() is None:
        count = threads_of(child.pid)
        if count:
            peak, samples = max(peak, count), samples + 1
        if end and time.monotonic() >= end:
            child.send_signal(signal.SIGTERM)
            end = None
    print(f"peak {peak} threads ({samples} samples, exit {child.returncode})")


if __name__ == "__main__":
    main()
