#!/usr/bin/env bash
# The long results jobs of docs/results.md, one after another, niced, resumable across sittings.
#   scripts/results.sh [--root DIR] [run [JOB…]]  run the pipeline, or these jobs (foreground)
#   scripts/results.sh [--root DIR] status     where each job stands
#   scripts/results.sh [--root DIR] stop       pause: the running build checkpoints and exits (SIGTERM)
# Start it in the background at the start of every sitting:
#   nohup scripts/results.sh >/dev/null 2>&1 &
# Notes:
# 1. The run root (default: ../runs beside the checkout) holds each job's run directory, its
#    logs (time.txt, disk.tsv, build.log from scripts/measure-run.sh), bin/: the kingmaker
#    binary of each commit the pipeline ran, copied so that rebuilds never touch a running job,
#    and src/: the worktree of the checkout's commit those binaries are built in (the first build
#    on a machine compiles every crate, later ones only what changed). A job resumes from its
#    checkpoint if it has one, builds if it has none, and is skipped when its results are written.
# 2. The default jobs are the results docs/results.md does not have yet, shortest first, so that
#    each lands as early as possible: the race's four layers of level 2 and their census (about
#    5 hours here). Results already recorded run only when named (`scripts/results.sh run cc3p-2
#    cc3p-2-census` builds level 2 and its per-ply census again; `run c74` solves cc2p 7×7 / 4 in
#    memory, its cells 12.7 GB at six bits a state, about 5 hours here): JOBS_RECORDED below.
#    Jobs that need more memory than this machine has run only when named, on a server:
#    JOBS_SERVER below (`scripts/results.sh run cc3p-2 cc3p-2-preferences` builds level 2, then
#    counts every state under each preference rule, 49.5 GB in memory).
#    The frontier rehearsal runs only when named, too: JOBS_LAB below (`scripts/results.sh run
#    rehearsal`: cc2p 5×5 / 6 through deploy on lab hosts, out of core, with its faults;
#    scripts/rehearsal.sh, RUN_ROOT/rehearsal). It takes root, network namespaces and memory
#    cgroups, and many hours of a 2-core machine: it would hold back the default jobs.
# 3. RESULTS_NICE (default 19) sets the jobs' nice level; RESULTS_OOM_SCORE_ADJ (e.g. -500, as
#    root) makes the kernel's OOM killer pick other processes first (compiles, tests) on a shared
#    machine, so the 16 GB level-2 build is not the one lost.
# 4. A job that dies (the OOM killer, a reboot) is resumed up to three times in one invocation;
#    then the pipeline stops and says so in pipeline.log. A census (`summarize --reachable`)
#    checkpoints its search every 15 minutes and on `stop`, in RUN/reach, and goes on from there.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/.." && pwd)/runs
if [ "${1:-}" = "--root" ]; then root=$2; shift 2; fi
action=${1:-run}
[ $# -gt 0 ] && shift
mkdir -p "$root/bin" "$root/logs"
log="$root/pipeline.log"
pidfile="$root/pipeline.pid"
nice_level=${RESULTS_NICE:-19}

say() { echo "$(date -u +%FT%TZ) $*" | tee -a "$log" >&2; }

# The binary of the checkout's commit, copied once (built first if need be). It is built from a
# worktree of that commit (RUN_ROOT/src, its own target/), never from the checkout itself: edits
# made there while it compiles, or not yet committed, must not end up in a binary named for the
# commit.
binary() {
  local commit bin src=$root/src
  commit=$(git -C "$here" rev-parse --short HEAD)
  bin="$root/bin/kingmaker-$commit"
  if [ ! -x "$bin" ]; then
    # A worktree whose checkout was laid anew is unknown to its git: make it again.
    if ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
      git -C "$here" worktree prune
      rm -rf "$src"
      git -C "$here" worktree add -q --detach "$src" "$commit" >&2
    fi
    git -C "$src" checkout -q --detach "$commit"
    (cd "$src" && CARGO_TARGET_DIR="$src/target" cargo build --release -q -p kingmaker)
    cp "$src/target/release/kingmaker" "$bin.tmp" && mv "$bin.tmp" "$bin"
  fi
  echo "$bin"
}

# Job table: name, the build command's arguments (after `kingmaker`), the test of "done".
#   run_done NAME: summary.json written by the build (`kingmaker status` counts a run complete then)
run_done() { [ -f "$root/$1/summary.json" ]; }
#   census_done NAME [KEY]: summary.json has the counts over the reachable states (cc3p's per-ply
#   classes; the race's `second_place` block has a `reachable` count instead)
census_done() { grep -q "\"${2:-classes_per_depth}\"" "$root/$1/summary.json" 2>/dev/null; }

jobs=(race-2 race-2-census)
JOBS_RECORDED=(c74 race-2-top2 cc3p-2 cc3p-2-census cc3p-2-solo cc3p-2-solo-census)
JOBS_SERVER=(cc3p-2-preferences)
JOBS_LAB=(rehearsal)
# The preference rules, one census (and one file) each: a rule counted is kept.
RULES=(self-interest spoiler cyclic reverse leader trailer)
job_done() {
  case $1 in
    cc3p-2-preferences) rules_done cc3p-2 ;;
    race-2-top2) run_done race-2-top2 ;;
    cc3p-2-solo) run_done cc3p-2-solo ;;
    cc3p-2-solo-census) census_done cc3p-2-solo ;;
    cc3p-2) run_done cc3p-2 ;;
    cc3p-2-census) census_done cc3p-2 ;;
    race-2) run_done race-2 ;;
    race-2-census) census_done race-2 reachable ;;
    c74) run_done c74 ;;
    # The digest checked against the embedded build's and the figures written.
    rehearsal) [ -f "$root/rehearsal/result.json" ] ;;
  esac
}

#   rules_done NAME: every rule's census by walks written, NAME/preferences/RULE.json
rules_done() {
  local rule
  for rule in "${RULES[@]}"; do [ -f "$root/$1/preferences/$rule.json" ] || return 1; done
}

# Split `WRAPPER… -- REST…` into the caller's arrays wrap and rest (its locals: bash scoping).
split_wrapper() {
  wrap=()
  while [ "$1" != "--" ]; do wrap+=("$1"); shift; done
  shift
  rest=("$@")
}

# Run a kingmaker command on run directory DIR, timed into logs/DIR/ (scripts/measure-run.sh).
# A wrapper before `--` (the cgroup of c74) goes in front of the niced binary.
measured() {
  local dir=$1 wrap rest
  shift
  split_wrapper "$@"
  # A stop that came while the binary was built (a trap waits for the command in front) starts
  # nothing.
  [ -n "$stopping" ] && return 0
  current=$dir
  "$here/scripts/measure-run.sh" "$root/$dir" "$root/logs/$dir" -- \
    "${wrap[@]}" nice -n "$nice_level" "${rest[@]}" &
  child=$!
  wait "$child"
}

# Build the run directory DIR, or resume it if a build started it.
build_or_resume() {
  local dir=$1 wrap rest
  shift
  split_wrapper "$@"
  set -- "${rest[@]}"
  local bin
  bin=$(binary)
  if [ -f "$root/$dir/run.json" ]; then
    say "$dir: resume with $(basename "$bin")"
    measured "$dir" "${wrap[@]}" -- "$bin" resume "$root/$dir" --checkpoint-every-secs 900
  else
    # A directory without run.json holds nothing a resume could use.
    rm -rf "${root:?}/$dir"
    say "$dir: build with $(basename "$bin"): $*"
    measured "$dir" "${wrap[@]}" -- "$bin" build "$@" --checkpoint-every-secs 900 --out "$root/$dir"
  fi
}

# Count every state of run directory DIR under each rule not yet counted (`preferences
# --all-states`), one rule at a time, each written when complete.
preferences_by_rule() {
  local dir=$1 rule out bin
  bin=$(binary)
  mkdir -p "$root/$dir/preferences"
  for rule in "${RULES[@]}"; do
    out=$root/$dir/preferences/$rule.json
    [ -f "$out" ] && continue
    say "$dir: the census of the rule $rule with $(basename "$bin")"
    measured "$dir" -- sh -c '"$1" preferences "$2" --all-states --rule "$3" --json >"$4.tmp" \
      && mv "$4.tmp" "$4"' sh "$bin" "$root/$dir" "$rule" "$out" || return
    [ -n "$stopping" ] && return 0
  done
}

run_job() {
  case $1 in
    cc3p-2-preferences) preferences_by_rule cc3p-2 ;;
    cc3p-2-solo) build_or_resume cc3p-2-solo -- cc3p --level 2 --layers solo --reachable true ;;
    cc3p-2-solo-census) measured cc3p-2-solo -- "$(binary)" summarize "$root/cc3p-2-solo" --reachable ;;
    cc3p-2) build_or_resume cc3p-2 -- cc3p --level 2 ;;
    cc3p-2-census) measured cc3p-2 -- "$(binary)" summarize "$root/cc3p-2" --reachable ;;
    race-2-top2) build_or_resume race-2-top2 -- cc3p_race --level 2 --layers top2 ;;
    race-2) build_or_resume race-2 -- cc3p_race --level 2 ;;
    race-2-census) measured race-2 -- "$(binary)" summarize "$root/race-2" --reachable ;;
    # In memory: its 12.7 GB of cells within a 16 GB budget (out of core in a 6 GiB cgroup it took
    # about 12 hours here, I/O-bound; docs/results.md, "Past one machine").
    c74) build_or_resume c74 -- cc2p --board 7x7 --pieces 4 --memory-budget 16G ;;
    # Its binaries built in the pipeline's worktree (src) at HEAD; its driver's pid in
    # rehearsal/kingmaker.lock, where `stop` looks (it tears the deploy down, checkpointed).
    rehearsal) measured rehearsal -- env REHEARSAL_SRC="$root/src" "$here/scripts/rehearsal.sh" run "$root/rehearsal" ;;
  esac
}

status() {
  for j in "${jobs[@]}"; do
    if job_done "$j"; then
      echo "$j: done"
    elif [ -f "$root/${j%-census}/run.json" ]; then
      echo "$j: $("$(ls -t "$root"/bin/kingmaker-* | head -n 1)" status "$root/${j%-census}" 2>&1 | head -n 3 | tr '\n' ' ')"
    else
      echo "$j: not started"
    fi
  done
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "pipeline running (pid $(cat "$pidfile")), log $log"
  else
    echo "pipeline not running"
  fi
}

# Every kingmaker process of the running job gets SIGTERM: it finishes its wave, checkpoints and
# exits 0, and the pipeline stops after it.
stop() {
  [ -f "$pidfile" ] || { echo "pipeline not running"; return 0; }
  local pid
  pid=$(cat "$pidfile")
  kill -TERM "$pid" 2>/dev/null || echo "pipeline not running"
}

case $action in
  status) status; exit 0 ;;
  stop) stop; exit 0 ;;
  run)
    for j in "$@"; do
      [[ " ${jobs[*]} ${JOBS_RECORDED[*]} ${JOBS_SERVER[*]} ${JOBS_LAB[*]} " == *" $j "* ]] \
        || { echo "unknown job: $j (jobs: ${jobs[*]} ${JOBS_RECORDED[*]} ${JOBS_SERVER[*]} ${JOBS_LAB[*]})" >&2; exit 2; }
    done
    [ $# -gt 0 ] && jobs=("$@")
    ;;
  *) echo "usage: scripts/results.sh [--root DIR] [run [JOB…]|status|stop]" >&2; exit 2 ;;
esac

if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  echo "the pipeline already runs (pid $(cat "$pidfile"))" >&2
  exit 1
fi
echo $$ >"$pidfile"
if [ -n "${RESULTS_OOM_SCORE_ADJ:-}" ]; then
  echo "$RESULTS_OOM_SCORE_ADJ" 2>/dev/null >/proc/self/oom_score_adj \
    || say "RESULTS_OOM_SCORE_ADJ: not allowed here (needs CAP_SYS_RESOURCE); left as it was"
fi
child=
current=
stopping=
on_term() {
  stopping=1
  say "stop asked: the running job checkpoints and exits"
  # The job's kingmaker process holds its run directory's lock (its pid in kingmaker.lock).
  local pid
  pid=$(grep -o '"pid": *[0-9]*' "$root/$current/kingmaker.lock" 2>/dev/null | grep -o '[0-9]*$' || true)
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || true
  # A census of the preference rules holds no lock: it is stopped by its command line, and its
  # rule starts again on the next run.
  pkill -TERM -f -- " preferences $root/$current " 2>/dev/null || true
}
trap on_term TERM INT
trap 'rm -f "$pidfile"' EXIT

say "pipeline started in $root (checkout $(git -C "$here" rev-parse --short HEAD))"
for j in "${jobs[@]}"; do
  tries=0
  while ! job_done "$j"; do
    [ -n "$stopping" ] && break 2
    if [ "$tries" -ge 3 ]; then
      say "$j: failed three times in this invocation; see $root/logs/${j%-census}/build.log"
      exit 1
    fi
    tries=$((tries + 1))
    status_code=0
    run_job "$j" || status_code=$?
    # A stop lands in `wait` first; wait again for the checkpoint to be written.
    while [ -n "$child" ] && kill -0 "$child" 2>/dev/null; do wait "$child" || true; done
    [ -n "$stopping" ] && break 2
    job_done "$j" || say "$j: ended with status $status_code before its results"
  done
  job_done "$j" && say "$j: done"
done
say "pipeline stopped"
