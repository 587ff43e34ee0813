#!/usr/bin/env bash
# Kingmaker against Sturtevant's FasterSymmetry on cc2p 7×7 / 3, one thread each, alternating.
#   scripts/side-by-side.sh [ROUNDS] [WORK_DIR]      (defaults: 3 rounds, a temporary directory)
# Notes:
# 1. Each round runs Kingmaker (`build cc2p --board 7x7 --pieces 3 --threads 1`) then
#    FasterSymmetry (`cc49_3_pem2 fsym`), each from scratch, under /usr/bin/time -v (GNU_TIME names another); the next
#    round swaps the order, so a drift in the machine's speed falls on both alike.
# 2. It prints per run CPU-s (user + sys), wall, max RSS and the 1-minute load average at the
#    start, then each solver's best and median CPU-s and peak RSS, and their ratios. A run whose
#    counts or digest differ from the published row fails the script.
# 3. KINGMAKER (default target/release/kingmaker) and ANCHOR (default
#    ../shared/anchors/sturtevant/cc49_3_pem2) name the binaries.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
work=${2:-$(mktemp -d /tmp/side-by-side.XXXXXX)}
kingmaker=${KINGMAKER:-$here/target/release/kingmaker}
anchor=${ANCHOR:-$here/../shared/anchors/sturtevant/cc49_3_pem2}
[ -x "$kingmaker" ] || { echo "no kingmaker binary at $kingmaker (cargo build --release)" >&2; exit 2; }
[ -x "$anchor" ] || { echo "no FasterSymmetry binary at $anchor" >&2; exit 2; }
mkdir -p "$work"
digest=61f902ce
results="$work/results.tsv"
printf 'solver\tround\tcpu_s\twall_s\tmax_rss_kb\tload1\n' >"$results"

# /usr/bin/time -v's file → "cpu_s wall_s max_rss_kb"
timing() {
  awk -F': ' '
    /User time/ {u=$2} /System time/ {s=$2} /Maximum resident/ {r=$2}
    /Elapsed \(wall clock\)/ {n=split($2,p,":"); w=0; for(i=1;i<=n;i++) w=w*60+p[i]}
    END {printf "%.2f %.2f %d\n", u+s, w, r}' "$1"
}

run_kingmaker() {
  local round=$1 out="$work/km-$1" load
  rm -rf "$out"
  load=$(cut -d' ' -f1 /proc/loadavg)
  "${GNU_TIME:-/usr/bin/time}" -v -o "$work/km-$round.time" "$kingmaker" build cc2p --board 7x7 --pieces 3 \
    --threads 1 --out "$out" >"$work/km-$round.log" 2>&1
  grep -q "W 279297470 .*D 180860" "$work/km-$round.log" && grep -q "digest $digest" "$work/km-$round.log" \
    || { echo "kingmaker round $round: not the published row or digest (see $work/km-$round.log)" >&2; exit 1; }
  printf 'kingmaker\t%s\t%s\t%s\n' "$round" "$(timing "$work/km-$round.time" | tr ' ' '\t')" "$load" >>"$results"
  rm -rf "$out"
}

run_anchor() {
  local round=$1 out="$work/fs-$1" load
  rm -rf "$out"
  load=$(cut -d' ' -f1 /proc/loadavg)
  "${GNU_TIME:-/usr/bin/time}" -v -o "$work/fs-$round.time" "$anchor" fsym "$out/" >"$work/fs-$round.log" 2>&1
  grep -q '^279297470 wins' "$work/fs-$round.log" && grep -q '^180860 draws' "$work/fs-$round.log" \
    || { echo "FasterSymmetry round $round: not the published row (see $work/fs-$round.log)" >&2; exit 1; }
  printf 'fastersymmetry\t%s\t%s\t%s\n' "$round" "$(timing "$work/fs-$round.time" | tr ' ' '\t')" "$load" >>"$results"
  rm -rf "$out"
}

echo "side by side: $rounds rounds on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%FT%TZ)"
echo "kingmaker $("$kingmaker" --version 2>/dev/null || echo "$kingmaker"), FasterSymmetry $anchor"
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then run_kingmaker "$r"; run_anchor "$r"; else run_anchor "$r"; run_kingmaker "$r"; fi
  tail -n 2 "$results" | sed 's/^/  /'
done

echo
column -t "$results"
echo
awk -F'\t' 'NR > 1 {
    n[$1]++; cpu[$1, n[$1]] = $3; if ($5 > rss[$1]) rss[$1] = $5
    if (!($1 in best) || $3 < best[$1]) best[$1] = $3
  }
  function median(s,   k, i, j, t, a) {
    k = n[s]; for (i = 1; i <= k; i++) a[i] = cpu[s, i]
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  END {
    for (s in n) printf "%-15s best %8.2f CPU-s, median %8.2f, peak RSS %7.1f MB\n", s, best[s], median(s), rss[s] / 1024
    printf "per core: Kingmaker is %.2fx FasterSymmetry (best CPU-s), %.2fx (median)\n", \
      best["fastersymmetry"] / best["kingmaker"], median("fastersymmetry") / median("kingmaker")
    printf "memory: Kingmaker peak RSS is %.2fx FasterSymmetry'"'"'s\n", rss["kingmaker"] / rss["fastersymmetry"]
  }' "$results"
