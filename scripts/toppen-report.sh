#!/usr/bin/env bash
# Rebuild docs/toppen.md, "what the census says": build the TOPPEN tables (orthogonal and
# 8-neighbour) unless they are already built, count every terrain with `kingmaker census --all`,
# and assemble the page from the reports it writes.
#
#   scripts/toppen-report.sh            # runs in runs/toppen and runs/toppen-diagonal
#   RUNS=/tmp/r scripts/toppen-report.sh
#
# Takes about a minute on a 2-core machine (most of it the 8-neighbour build).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-runs}
OUT=${OUT:-docs/toppen.md}
cargo build --release -p kingmaker
K=${CARGO_TARGET_DIR:-target}/release/kingmaker
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for variant in toppen toppen-diagonal; do
  dir=$RUNS/$variant
  if [ ! -f "$dir/summary.json" ]; then
    rm -rf "$dir"
    flags=()
    [ "$variant" = toppen-diagonal ] && flags=(--diagonal)
    "$K" build toppen "${flags[@]}" --out "$dir" >&2
  fi
  "$K" census "$dir" --all --csv "$RUNS/$variant-census.csv" --report "$tmp/$variant.md" >&2
done

{
  cat <<'MD'
# What the TOPPEN census says

Every free decomino (4655 terrains) with each of its 252 colourings, solved exactly: who wins with
best play from each starting position, A (the first player, who moves first) or B, or whether the
game is drawn. The rules are in docs/rules.md §2; the notation in `docs/toppen-notation.md`.

This page is generated: `scripts/toppen-report.sh` builds the tables (`kingmaker build toppen`,
`kingmaker build toppen --diagonal`), runs `kingmaker census DIR --all --csv FILE --report FILE` on
each and assembles the reports below. Rerun it to check every number; the per-terrain results are
left in `runs/toppen-census.csv` and `runs/toppen-diagonal-census.csv`.

The questions:
1. Is there a terrain on which the second player wins more often than the first?
2. The rules let the player who does not move first (B) lay out the tiles, with the colours falling
   at random. If B chooses the terrain, which terrain should it choose, and what is the first
   player's winning chance then?

Each section answers them for one variant of the rules. Terrains are drawn with `#` for a cell and
`.` for none; terrains whose cell graphs are isomorphic have identical results, so each table lists
a graph class once, with one of its drawings and the number of terrains that share it. A
"chance" assumes each of the 252 colourings is equally likely.

With `--first B` (B moves first) every result mirrors the default: swapping the colours of every
tile turns a B-first game into an A-first one, so a terrain's census (A, B, D) becomes (B, A, D).

MD
  cat "$tmp/toppen.md"
  cat "$tmp/toppen-diagonal.md"
} > "$OUT"
echo "wrote $OUT" >&2
