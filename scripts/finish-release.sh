#!/usr/bin/env bash
# The steps after a long build's last layer, each timed for BENCHMARKS.md: the summary with the
# reachable counts, the release, its verification (checksums, then a sample re-derived from the
# rules), and the lookup bench on it.
#   scripts/finish-release.sh RUN_DIR RELEASE_DIR LOG_DIR [--zstd-level N] [--block-states N] [--sample N]
# Waits for a build or resume still running on RUN_DIR (its lock file) to end first, so it can be
# started right after `resume`. Appends each step's `/usr/bin/time -v` to LOG_DIR/finish.txt and
# its output to LOG_DIR/finish.log; a step that already produced its result is skipped, so the
# script can be run again after an interruption.
set -euo pipefail
run_dir=$1 release_dir=$2 log_dir=$3
shift 3
zstd_level=15 block_states=65536 sample=100000
while [ $# -gt 0 ]; do
  case $1 in
    --zstd-level) zstd_level=$2; shift 2 ;;
    --block-states) block_states=$2; shift 2 ;;
    --sample) sample=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
kingmaker=${KINGMAKER:-target/release/kingmaker}
mkdir -p "$log_dir"

# A build holds RUN_DIR/kingmaker.lock (its pid) while it runs.
lock="$run_dir/kingmaker.lock"
while [ -f "$lock" ] && pid=$(grep -o '"pid": *[0-9]*' "$lock" | grep -o '[0-9]*$') \
    && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; do
  sleep 60
done

step() {
  local name=$1
  shift
  echo "# $(date -u +%FT%TZ) $name: $*" | tee -a "$log_dir/finish.txt" >>"$log_dir/finish.log"
  nice -n 19 /usr/bin/time -v -a -o "$log_dir/finish.txt" "$@" >>"$log_dir/finish.log" 2>&1
}

if ! grep -q '"reachable"' "$run_dir/summary.json" 2>/dev/null; then
  # A game without that census (only cc3p and cc3p_race count one) refuses --reachable, writing
  # nothing: the release goes on without it.
  step summarize "$kingmaker" summarize "$run_dir" --reachable \
    || tail -n 1 "$log_dir/finish.log" | grep -q "has no census over the states reachable"
fi
if [ ! -f "$release_dir/manifest.json" ]; then
  rm -rf "$release_dir"
  step pack "$kingmaker" pack "$run_dir" --out "$release_dir" --zstd-level "$zstd_level" \
    --block-states "$block_states"
fi
step verify "$kingmaker" verify "$release_dir"
step verify-deep "$kingmaker" verify "$release_dir" --deep --sample "$sample"
step lookup-bench cargo bench -q -p kingmaker-tablefmt --bench release -- "$release_dir"
du -sb "$release_dir"/* | tee -a "$log_dir/finish.txt"
