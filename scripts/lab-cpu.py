#!/usr/bin/env python3
"""CPU seconds used by everything the rehearsal hosts of scripts/lab-hosts.sh run, per host,
sampled every INTERVAL seconds into a TSV that survives restarts of the services (the CPU of a
process that ended is kept from its last sample).

    scripts/lab-cpu.py DIR [INTERVAL]     append "unix_time<TAB>host<TAB>cpu_seconds" lines to
                                          DIR/cpu.tsv, cumulative per host, until killed

A layer's CPU is the difference of the totals at its first and last wave (the coordinator's log
gives their times). Samples miss at most INTERVAL seconds of a process that dies."""

import os
import subprocess
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")


def pids(ns):
    out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def cpu(pid):
    """utime + stime of a process, in seconds, with the start time that tells pids apart."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # fields[0] is the state (field 3); utime, stime are fields 14, 15; starttime is field 22.
    return int(fields[19]), (int(fields[11]) + int(fields[12])) / TICKS


def main():
    lab = sys.argv[1]
    interval = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    hosts = [line.split() for line in open(os.path.join(lab, "hosts")) if line.strip()]
    seen = {}  # (host, pid, start) -> last cpu seconds
    with open(os.path.join(lab, "cpu.tsv"), "a", buffering=1) as out:
        while True:
            now = time.time()
            for name, ns, _ in hosts:
                for pid in pids(ns):
                    got = cpu(pid)
                    if got is not None:
                        seen[(name, pid, got[0])] = got[1]
                total = sum(v for (h, _, _), v in seen.items() if h == name)
                out.write(f"{now:.0f}\t{name}\t{total:.2f}\n")
            time.sleep(interval)


if __name__ == "__main__":
    main()
