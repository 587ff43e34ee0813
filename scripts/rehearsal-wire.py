#!/usr/bin/env python3
"""Where a rehearsal's bytes on the wire went (docs/benchmarks/distributed.md, "Where the wire goes").

    scripts/rehearsal-wire.py ROOT     ROOT: a directory of scripts/rehearsal.sh

Sums the workers' bytes sent (logs/samples.tsv, the links' counters every 30 s, interpolated) over
the coordinator's log: the waves (and the updates they logged), the stretches between a wave and
its checkpoint, the expansion, and the rest; and the replicas' bytes the workers logged.
"""
import bisect
import datetime
import glob
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else sys.exit(__doc__)
last, total, series = {}, 0, []
for line in open(os.path.join(root, "logs", "samples.tsv")):
    f = line.split("\t")
    if len(f) != 9 or f[2] == "h0":
        continue
    t, host, sent = int(f[0]), f[2], int(f[5])
    before = last.get(host)
    total += sent - before if before is not None and sent >= before else (sent if before is not None else 0)
    last[host] = sent
    if series and series[-1][0] == t:
        series[-1] = (t, total)
    else:
        series.append((t, total))
times = [s[0] for s in series]


def sent_by(t):
    """The workers' bytes sent by time t."""
    i = bisect.bisect_left(times, t)
    if i == 0 or i >= len(series):
        return series[min(i, len(series) - 1)][1]
    (t0, c0), (t1, c1) = series[i - 1], series[i]
    return c0 + (c1 - c0) * (t - t0) / max(1, t1 - t0)


def seconds(stamp):
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


split = {"waves": 0.0, "checkpoints": 0.0, "expansion": 0.0, "restarts": 0.0, "other": 0.0}
logged, since = 0, None
for log in sorted(glob.glob(os.path.join(root, "lab", "h0", "opt", "log", "coordinator-*.log"))):
    for line in open(log, errors="replace"):
        m = re.match(r"(\S+Z)\s+INFO (.*)", line)
        if not m:
            continue
        t, what = seconds(m.group(1)), m.group(2)
        wave = re.search(r"wave \d+: .* (\d+) bytes on the wire, ([\d.]+)s", what)
        if wave:
            start = t - float(wave.group(2))
            if since is not None and start > since:
                split["other"] += sent_by(start) - sent_by(since)
            split["waves"] += sent_by(t) - sent_by(start)
            logged += int(wave.group(1))
        elif since is not None:
            kind = ("checkpoints" if "checkpointed" in what
                    else "expansion" if "routed to" in what
                    else "restarts" if what.startswith("resuming run") else "other")
            split[kind] += sent_by(t) - sent_by(since)
        since = t
replicas = 0
for log in glob.glob(os.path.join(root, "lab", "h*", "opt", "log", "worker-*.log")):
    for line in open(log, errors="replace"):
        m = re.search(r"replicated on worker .*: \d+ files, (\d+) bytes", line)
        if m:
            replicas += int(m.group(1))
gb = lambda b: f"{b / 1e9:7.2f} GB"
print(f"sent by the workers       {gb(series[-1][1])}")
print(f"  in the waves            {gb(split['waves'])}   (updates logged: {gb(logged)})")
print(f"  a wave to its checkpoint{gb(split['checkpoints'])}")
print(f"  the expansion (routed)  {gb(split['expansion'])}")
print(f"  a restart to its wave   {gb(split['restarts'])}   (restores; an expansion killed before it logged)")
print(f"  elsewhere               {gb(split['other'])}")
print(f"replicas (workers' logs)  {gb(replicas)}   (in the checkpoints' stretches and the waves after them)")
