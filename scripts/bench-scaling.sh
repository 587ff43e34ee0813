#!/usr/bin/env bash
# A build at 1, 2, 4 … threads up to the machine's cores: wall, CPU, speed-up, efficiency, and
# each phase's share of the wall time (waves, the expansion of a reduced game, the rest:
# gathering, writing the table, the summary).
#   scripts/bench-scaling.sh [--threads "1 2 4"] [--work DIR] -- GAME [game options]
#   e.g. scripts/bench-scaling.sh -- cc2p --board 7x7 --pieces 3
#        scripts/bench-scaling.sh --threads 16 -- cc3p --level 2 --layers solo
# Notes:
# 1. Phases are read off the build's log: each wave line ends with its seconds, the expansion
#    line says "expanded … in Ns"; the rest is the wall time less both.
# 2. KINGMAKER names the binary (default target/release/kingmaker). Each run's log and
#    /usr/bin/time output stay in WORK (default a temporary directory); its tables are removed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
kingmaker=${KINGMAKER:-$here/target/release/kingmaker}
threads=
work=
while [ $# -gt 0 ]; do
  case $1 in
    --threads) threads=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "unknown option $1 (options before --, the game after)" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: scripts/bench-scaling.sh [--threads LIST] [--work DIR] -- GAME [options]" >&2; exit 2; }
if [ -z "$threads" ]; then
  cores=$(nproc)
  t=1
  while [ "$t" -lt "$cores" ]; do threads="$threads $t"; t=$((t * 2)); done
  threads="$threads $cores"
fi
work=${work:-$(mktemp -d /tmp/bench-scaling.XXXXXX)}
mkdir -p "$work"
echo "scaling of: kingmaker build $*"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/ {print $2}') GiB, $(date -u +%FT%TZ)"
printf '%7s %9s %9s %8s %10s %7s %9s %6s\n' threads wall_s cpu_s speedup efficiency waves expansion rest
base=
for t in $threads; do
  out="$work/run-$t"
  rm -rf "$out"
  "${GNU_TIME:-/usr/bin/time}" -v -o "$work/time-$t.txt" "$kingmaker" build "$@" --threads "$t" --out "$out" \
    >"$work/log-$t.txt" 2>&1 || { echo "threads $t: the build failed (see $work/log-$t.txt)" >&2; exit 1; }
  rm -rf "$out"
  read -r wall cpu < <(awk -F': ' '
    /User time/ {u=$2} /System time/ {s=$2}
    /Elapsed \(wall clock\)/ {n=split($2,p,":"); w=0; for(i=1;i<=n;i++) w=w*60+p[i]}
    END {printf "%.2f %.2f\n", w, u+s}' "$work/time-$t.txt")
  waves=$(grep -E ' wave [0-9]+: ' "$work/log-$t.txt" | sed -E 's/.*, ([0-9.]+)s$/\1/' | awk '{s+=$1} END {printf "%.2f", s}')
  expansion=$(grep -E ' expanded to the .* in [0-9.]+s' "$work/log-$t.txt" | sed -E 's/.* in ([0-9.]+)s$/\1/' | awk '{s+=$1} END {printf "%.2f", s}')
  base=${base:-$(awk -v w="$wall" -v t="$t" 'BEGIN {print w * t}')}
  awk -v t="$t" -v w="$wall" -v c="$cpu" -v b="$base" -v wv="$waves" -v ex="$expansion" 'BEGIN {
    printf "%7d %9.2f %9.2f %8.2f %9.0f%% %6.0f%% %8.0f%% %5.0f%%\n", t, w, c, b / w, 100 * b / w / t,
      100 * wv / w, 100 * ex / w, 100 * (w - wv - ex) / w }'
done
echo "speed-up and efficiency against the first row's wall time × its threads; logs in $work"
