#!/usr/bin/env bash
# Issue 46's server figures in two prepared parts, each one command of at most ten minutes on a
# lent 16-core machine (docs/benchmarks/kernel.md, "Server class"; BENCHMARKS.md):
#   scripts/bench-server.sh cc2p OUT     cc2p 7×7 / 3 at 1, 4 … all cores, then one round side by
#                                        side with FasterSymmetry (about 5 minutes on 16 cores)
#   scripts/bench-server.sh level2 OUT   level 2's `solo` layer on all cores: waves, gathering,
#                                        summary (about 8 minutes on 16 cores)
# Notes:
# 1. Build here and carry the binary; stripped it is about 15 MB:
#      cargo build --release -p kingmaker && mkdir -p target/server \
#        && strip -o target/server/kingmaker target/release/kingmaker
#    KINGMAKER names another binary (default target/server/kingmaker, else target/release/kingmaker).
# 2. OUT receives machine.txt (cores, model, memory, load), the table of scripts/bench-scaling.sh
#    (scaling.txt: wall, CPU, speed-up, efficiency, each phase's share) with every run's log and
#    /usr/bin/time output, and for cc2p the side-by-side round (side-by-side.txt).
# 3. THREADS overrides the thread counts (default: 1, 4, 16 … up to the cores for cc2p; all the
#    cores for level 2), e.g. THREADS=2 to try a part on a small machine. ANCHOR names the
#    FasterSymmetry binary (default ../shared/anchors/sturtevant/cc49_3_pem2, else
#    shared/anchors/…); without one the side-by-side round is skipped and says so.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
part=${1:-}
out=${2:-}
[ -n "$part" ] && [ -n "$out" ] || { echo "usage: scripts/bench-server.sh cc2p|level2 OUT" >&2; exit 2; }
kingmaker=${KINGMAKER:-}
if [ -z "$kingmaker" ]; then
  kingmaker=$here/target/server/kingmaker
  [ -x "$kingmaker" ] || kingmaker=$here/target/release/kingmaker
fi
[ -x "$kingmaker" ] || { echo "no kingmaker binary at $kingmaker (note 1)" >&2; exit 2; }
mkdir -p "$out"
cores=$(nproc)
{
  echo "date: $(date -u +%FT%TZ)"
  echo "cores: $cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "memory: $(free -g | awk '/Mem:/ {print $2}') GiB; load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "binary: $kingmaker ($("$kingmaker" --version); checkout $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown))"
} | tee "$out/machine.txt"

scaling() {
  KINGMAKER=$kingmaker "$here/scripts/bench-scaling.sh" --threads "$1" --work "$out/runs" -- "${@:2}" \
    | tee "$out/scaling.txt"
}

case $part in
  cc2p)
    threads=${THREADS:-}
    if [ -z "$threads" ]; then
      threads=1
      for t in 4 16 32 64; do [ "$t" -lt "$cores" ] && threads="$threads $t"; done
      threads="$threads $cores"
    fi
    scaling "$threads" cc2p --board 7x7 --pieces 3
    anchor=${ANCHOR:-$here/../shared/anchors/sturtevant/cc49_3_pem2}
    [ -x "$anchor" ] || anchor=$here/shared/anchors/sturtevant/cc49_3_pem2
    if [ -x "$anchor" ]; then
      KINGMAKER=$kingmaker ANCHOR=$anchor "$here/scripts/side-by-side.sh" 1 "$out/side-by-side" \
        | tee "$out/side-by-side.txt"
    else
      echo "no FasterSymmetry binary (ANCHOR): side-by-side round skipped" | tee "$out/side-by-side.txt"
    fi
    ;;
  level2)
    scaling "${THREADS:-$cores}" cc3p --level 2 --layers solo
    ;;
  *) echo "unknown part $part (cc2p or level2)" >&2; exit 2 ;;
esac
