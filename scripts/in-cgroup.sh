#!/usr/bin/env bash
# Run a command inside a memory cgroup (v1) whose limit counts page cache too, so that a build
# whose cells exceed LIMIT really runs out of core. Prints the cgroup's peak usage, its limit, how
# often the limit was hit and the bytes read and written by the command when it ends.
#   scripts/in-cgroup.sh NAME LIMIT -- COMMAND...      e.g. scripts/in-cgroup.sh cc2p 6G -- kingmaker build ...
# LIMIT takes the kernel's suffixes (K, M, G). Needs root and /sys/fs/cgroup/memory (cgroup v1).
set -euo pipefail
name=$1 limit=$2
shift 2
[ "${1:-}" = "--" ] && shift
root=/sys/fs/cgroup/memory
[ -w "$root" ] || { echo "in-cgroup: $root is not a writable cgroup v1 memory hierarchy" >&2; exit 2; }
group=$root/kingmaker-$name
mkdir -p "$group"
# No swap: memory beyond the limit is reclaimed page cache, or the command is killed. The
# memory+swap limit may never be below the memory limit, so it is lifted first (a group made
# before with a smaller limit).
echo -1 >"$group/memory.memsw.limit_in_bytes" 2>/dev/null || true
echo "$limit" >"$group/memory.limit_in_bytes"
echo "$limit" >"$group/memory.memsw.limit_in_bytes" 2>/dev/null || true
echo 0 >"$group/memory.max_usage_in_bytes" 2>/dev/null || true
echo 0 >"$group/memory.failcnt" 2>/dev/null || true
status=0
# The child joins the cgroup before it execs the command, so everything it starts is inside.
bash -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' _ "$group" "$@" || status=$?
io=$(awk '/^(Read|Write)/' "$group/blkio.throttle.io_service_bytes" 2>/dev/null || true)
printf 'cgroup %s: limit %s bytes, peak %s bytes, limit hit %s times\n' "$name" \
  "$(cat "$group/memory.limit_in_bytes")" "$(cat "$group/memory.max_usage_in_bytes")" \
  "$(cat "$group/memory.failcnt")" >&2
grep -E '^(total_)?(pgmajfault|pgpgin|pgpgout) ' "$group/memory.stat" | sed 's/^/  /' >&2 || true
exit $status
