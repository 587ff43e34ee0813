#!/usr/bin/env bash
# The frontier's bills (docs/results.md, "The frontier priced by `kingmaker plan`"): `kingmaker plan`
# of cc2p 6×6 / 6 and 7×7 / 6 on the inventories of deploy/ with their workers counted anew (each a
# copy of the first worker at its own addresses), one row per job.
#
#   scripts/frontier-bills.sh [KINGMAKER]      (default: target/release/kingmaker)
#
# Rates come from the calibration this machine keeps (`kingmaker plan ... --calibrate` measures
# them again). The price: every server rented for the wall time, at 1 and 4 cents a vCPU-hour.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
km=${1:-$here/target/release/kingmaker}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '| job | servers (workers + coordinator) | cells per worker | each worker'"'"'s disk (bound) | CPU-hours | wall | wire (updates, replicas, expansion) | vCPU-hours rented | price |\n|---|---|---|---|---:|---:|---:|---:|---|\n'
for job in 6x6:5 6x6:8 6x6:2 7x7:25 7x7:50 7x7:100 7x7:300; do
  board=${job%:*} workers=${job#*:}
  inv=$tmp/$board-$workers.toml
  python3 - "$here/deploy/cc2p-$board-6.inventory.toml" "$workers" >"$inv" <<'EOF'
import re, sys
text, n = open(sys.argv[1]).read(), int(sys.argv[2])
head, *hosts = re.split(r"(?m)^\[\[host\]\]\n", text)
coord = next(h for h in hosts if 'role = "coordinator"' in h)
worker = next(h for h in hosts if 'role = "worker"' in h)
out = [head, "[[host]]\n" + coord]
for k in range(1, n + 1):
    w = re.sub(r'(?m)^name = ".*"', f'name = "w{k}"', worker)
    w = re.sub(r'(?m)^address = ".*"', f'address = "198.51.{100 + k // 200}.{k % 200 + 1}"', w)
    w = re.sub(r'(?m)^private_address = ".*"', f'private_address = "10.0.{k // 200}.{k % 200 + 11}"', w)
    out.append("[[host]]\n" + w)
sys.stdout.write("".join(out))
EOF
  "$km" plan --inventory "$inv" --json >"$tmp/plan.json" 2>"$tmp/err" || true
  [ -s "$tmp/plan.json" ] || { echo "$board/$workers: $(tail -n 2 "$tmp/err")" >&2; continue; }
  python3 - "$tmp/plan.json" "$board" "$workers" <<'EOF'
import json, sys
p, board, n = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
w = next(h for h in p["hosts"] if h["role"] == "worker")
cores = sum(32 for _ in p["hosts"])
def b(x, unit=None):
    for u, s in (("TiB", 2**40), ("GiB", 2**30)):
        if x >= s or u == "GiB":
            return f"{x / s:,.1f} {u}" if x < 100 * s else f"{x / s:,.0f} {u}"
rented = cores * p["wall_hours"]
wire = p["wire"]
print(f"| {board.replace('x', '×')} / 6 | {n} + 1 | {b(w['cells_bytes'])}, {'in memory' if w['in_memory'] else 'out of core'} "
      f"| {b(w['peak_disk_bytes'])} | {p['cpu_hours']:,.0f} | {p['wall_hours']:.1f} h "
      f"| {b(p['wire_bytes'])} ({b(wire['updates'])}, {b(wire['replicas'])}, {b(wire['expansion'])}) "
      f"| {rented:,.0f} | ${rented * 0.01:,.0f} / ${rented * 0.04:,.0f} |")
EOF
done
