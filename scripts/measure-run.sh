#!/usr/bin/env bash
# Run a long build and record what BENCHMARKS.md reports about it: wall and CPU time and peak
# memory (/usr/bin/time -v), and the peak disk use of its run directory (du, sampled every 30 s).
#   scripts/measure-run.sh RUN_DIR LOG_DIR -- kingmaker build cc3p --level 2 --out RUN_DIR ...
#   scripts/measure-run.sh RUN_DIR LOG_DIR -- kingmaker resume RUN_DIR
# Writes LOG_DIR/time.txt (appended per invocation), LOG_DIR/disk.tsv (unix time, bytes) and
# LOG_DIR/build.log (the build's own log). Resuming a run appends to the same files.
set -euo pipefail
run_dir=$1 log_dir=$2
shift 2
[ "${1:-}" = "--" ] && shift
mkdir -p "$log_dir"
(
  while sleep 30; do
    [ -d "$run_dir" ] && printf '%s\t%s\n' "$(date +%s)" "$(du -sb "$run_dir" 2>/dev/null | cut -f1)"
  done
) >>"$log_dir/disk.tsv" &
sampler=$!
trap 'kill $sampler 2>/dev/null' EXIT
echo "# $(date -u +%FT%TZ) $*" >>"$log_dir/time.txt"
/usr/bin/time -v -a -o "$log_dir/time.txt" "$@" >>"$log_dir/build.log" 2>&1
