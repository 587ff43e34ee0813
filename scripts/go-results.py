#!/usr/bin/env python3
"""Build Go on every surface and every board with R <= C and R*C <= MAX_POINTS (default 12), and
print the table of docs/go.md: Black's optimal score on the empty board (komi 0), or the interval
[Black forces >=, White forces <=] where play can cycle forever, and the plies of the principal
line at the optimal score.

    scripts/go-results.py [--max-points 12] [--sizes RxC,...] [--runs runs/go] [--kingmaker target/release/kingmaker]

`--sizes 4x4` builds (or reads) only the boards listed instead of every board up to --max-points.

Finished runs are reused (their summary.json is read), so an interrupted sweep resumes."""
import argparse
import json
import os
import subprocess
import sys
import time

SURFACES = ["plane", "cylinder", "torus", "klein", "projective"]


def sizes(max_points):
    return [(r, c) for r in range(1, max_points + 1) for c in range(r, max_points + 1) if r * c <= max_points]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-points", type=int, default=12)
    ap.add_argument("--sizes", help="only these boards, e.g. 4x4,3x5")
    ap.add_argument("--runs", default="runs/go")
    ap.add_argument("--kingmaker", default="target/release/kingmaker")
    args = ap.parse_args()
    if args.sizes:
        boards = [tuple(int(x) for x in b.split("x")) for b in args.sizes.split(",")]
    else:
        boards = sizes(args.max_points)
    cells = {}
    cpu = 0.0
    for r, c in boards:
        for surface in SURFACES:
            out = os.path.join(args.runs, f"{surface}-{r}x{c}")
            summary = os.path.join(out, "summary.json")
            if not os.path.exists(summary):
                if os.path.exists(out):
                    cmd = [args.kingmaker, "resume", out]
                else:
                    cmd = [args.kingmaker, "build", "go", "--surface", surface, "--size", f"{r}x{c}", "--out", out]
                before = os.times()
                started = time.time()
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                after = os.times()
                used = (after.children_user - before.children_user) + (after.children_system - before.children_system)
                cpu += used
                print(f"{surface} {r}x{c}: {time.time() - started:.1f}s wall, {used:.1f} CPU-s", file=sys.stderr)
            s = json.load(open(summary))
            start = s["start"]
            if "score" in start:
                k = start["score"]
                depth = start["thresholds"][str(k)]["depth"] if str(k) in start["thresholds"] else None
                cell = f"{k:+d}" + (f" ({depth})" if depth is not None else "")
            else:
                cell = f"{start['score_min']:+d}..{start['score_max']:+d}"
            cells[(r, c, surface)] = (cell, len(start["thresholds"]), s["states"])
    print("| board | states per layer | " + " | ".join(SURFACES) + " |")
    print("|---|---:|" + "---|" * len(SURFACES))
    for r, c in boards:
        row = [cells[(r, c, s)][0] for s in SURFACES]
        print(f"| {r}×{c} | {cells[(r, c, 'plane')][2]:,} | " + " | ".join(row) + " |")
    layers = sum(v[1] for v in cells.values())
    print(f"\n{len(cells)} boards, {layers} threshold layers solved; {cpu:.0f} CPU-s in this invocation", file=sys.stderr)


if __name__ == "__main__":
    main()
