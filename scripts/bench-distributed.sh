#!/usr/bin/env bash
# Embedded build vs the same build on 2 kingmaker-worker processes on loopback (same machine,
# same number of compute threads), for docs/benchmarks/distributed.md.
#
#   scripts/bench-distributed.sh                     # TOPPEN --diagonal (32 M states)
#   scripts/bench-distributed.sh toppen --shard-size 1000000
#   scripts/bench-distributed.sh cc3p --level 1 --shard-size 256
#
# Prints wall and CPU times of both builds, each worker's CPU and counters (states expanded and
# decided, updates sent and received, from its metrics) and the ratio of the busier worker's CPU
# to the other's, the bytes of updates exchanged between the workers, bytes per decided state, and
# the wall-time ratio (distributed / embedded), and checks that the digests agree. Uses
# target/release (or $CARGO_TARGET_DIR/release); builds it if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${CARGO_TARGET_DIR:-target}/release
[ -x "$bin/kingmaker" ] && [ -x "$bin/kingmaker-worker" ] || cargo build --release --bins
game=("$@")
[ ${#game[@]} -gt 0 ] || game=(toppen --diagonal)
cores=$(nproc)
per_worker=$(( cores / 2 > 0 ? cores / 2 : 1 ))

tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
KINGMAKER_TOKEN="bench-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
export KINGMAKER_TOKEN

# Arithmetic on decimals (awk, so no bc is needed).
calc() { awk "BEGIN { print $1 }"; }
# CPU seconds (user + system) a process has used so far.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }

addrs=()
for i in 0 1; do
    "$bin/kingmaker-worker" --listen 127.0.0.1:0 --data-dir "$tmp/w$i" --threads "$per_worker" \
        --metrics 127.0.0.1:0 > "$tmp/w$i.out" 2> "$tmp/w$i.log" &
    pids+=($!)
done
for i in 0 1; do
    for _ in $(seq 100); do grep -q 'listening on' "$tmp/w$i.out" 2>/dev/null && break; sleep 0.1; done
    addrs+=("$(sed -n 's/.*listening on //p' "$tmp/w$i.out")")
done
workers=$(IFS=,; echo "${addrs[*]}")

echo "game: ${game[*]}; $cores cores; embedded: $cores threads; distributed: 2 workers x $per_worker threads"
uptime

/usr/bin/time -f '%e %U %S' -o "$tmp/e.time" "$bin/kingmaker" build "${game[@]}" --out "$tmp/embedded" \
    > /dev/null 2> "$tmp/e.log"
read -r e_wall e_user e_sys < "$tmp/e.time"

w0_before=$(cpu "${pids[0]}")
w1_before=$(cpu "${pids[1]}")
/usr/bin/time -f '%e %U %S' -o "$tmp/d.time" "$bin/kingmaker" build "${game[@]}" --out "$tmp/distributed" \
    --workers "$workers" > /dev/null 2> "$tmp/d.log"
w0=$(calc "$(cpu "${pids[0]}") - $w0_before")
w1=$(calc "$(cpu "${pids[1]}") - $w1_before")
read -r d_wall d_user d_sys < "$tmp/d.time"

digest() { grep -o '"digest": "[0-9a-f]*"' "$1/summary.json" | sort; }
if [ "$(digest "$tmp/embedded")" != "$(digest "$tmp/distributed")" ]; then
    echo "DIGESTS DIFFER"; exit 1
fi

# Wire bytes and updates from the per-wave lines; decided states = the last total of each layer.
# ("sent N and M decided states, B bytes": states whose predecessors the receiver lists.)
read -r sent states bytes < <(grep -oE 'sent [0-9]+( and [0-9]+ decided states)?, [0-9]+ bytes on the wire' "$tmp/d.log" |
    awk '{ s += $2; if ($3 == "and") { t += $4; b += $7 } else b += $3 } END { printf "%.0f %.0f %.0f\n", s, t, b }')
decided=$(grep -o 'decided 0 (total [0-9]*)' "$tmp/d.log" | tr -d ')' | awk '{ d += $4 } END { printf "%.0f\n", d }')
applied=$(grep -o 'updates applied [0-9]*' "$tmp/d.log" | awk '{ a += $3 } END { printf "%.0f\n", a }')

echo "digests agree"
printf 'embedded:    %8.2f s wall, %8.2f s CPU\n' "$e_wall" "$(calc "$e_user + $e_sys")"
printf 'distributed: %8.2f s wall, %8.2f s CPU (workers %.2f s + coordinator %.2f s)\n' "$d_wall" \
    "$(calc "$w0 + $w1 + $d_user + $d_sys")" "$(calc "$w0 + $w1")" \
    "$(calc "$d_user + $d_sys")"
printf 'wall-time ratio (distributed / embedded): %.2f\n' "$(calc "$d_wall / $e_wall")"
printf 'updates sent between workers: %d, bytes on the wire: %d (%.3f bytes/update)\n' "$sent" "$bytes" \
    "$(calc "$bytes / ($sent + 0.000001)")"
printf 'updates applied: %d, of which sent between the workers: %.1f %%\n' "$applied" \
    "$(calc "100 * $sent / ($applied + 0.000001)")"
printf 'decided states sent in place of their updates: %d (%.3f bytes each, with the updates)\n' \
    "$states" "$(calc "$bytes / ($sent + $states + 0.000001)")"
printf 'decided states: %d, bytes on the wire per decided state: %.3f\n' "$decided" \
    "$(calc "$bytes / ($decided + 0.000001)")"
# Each worker's counters, from its metrics (totals since it started: it ran this build only).
metric() { curl -s "$(sed -n 's/^metrics at //p' "$tmp/w$1.out")" | awk -v m="$2" '$1 == m { print $2 }'; }
for i in 0 1; do
    w=$([ "$i" = 0 ] && echo "$w0" || echo "$w1")
    printf 'worker %d: %8.2f CPU-s; expanded %s, decided %s; updates sent %s (%s bytes), received %s\n' \
        "$i" "$w" "$(metric "$i" kingmaker_worker_states_expanded_total)" \
        "$(metric "$i" kingmaker_worker_states_decided_total)" \
        "$(metric "$i" kingmaker_worker_updates_sent_total)" \
        "$(metric "$i" kingmaker_worker_update_bytes_sent_total)" \
        "$(metric "$i" kingmaker_worker_updates_received_total)"
done
printf "workers' CPU, the busier over the other: %.3f\n" \
    "$(calc "($w0 > $w1 ? $w0 : $w1) / (($w0 > $w1 ? $w1 : $w0) + 0.000001)")"
