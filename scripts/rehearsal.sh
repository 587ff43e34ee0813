#!/usr/bin/env bash
# The frontier rehearsal (issue 64 item 2): a game built through `kingmaker deploy` on the lab hosts
# of scripts/lab-hosts.sh with every mechanism a frontier run uses, its faults done to it at set
# waves, and its figures measured. Everything lives under ROOT, so that it resumes in a later
# sitting, after a reboot too (the hosts come up again at the same addresses; `deploy resume`).
#
#   scripts/rehearsal.sh run ROOT [GAME OPTION...]  start or go on (idempotent; foreground until the
#                                  run is complete and its digest checked); the game is fixed by the
#                                  first run (default: cc2p --board 5x5 --pieces 6)
#   scripts/rehearsal.sh status ROOT      the run, the faults done, the figures so far
#   scripts/rehearsal.sh stop ROOT        the driver stops; the run checkpoints (deploy teardown)
#   scripts/rehearsal.sh down ROOT        stop, then take the lab hosts and their cgroups away
#
# The mechanisms: a coordinator (h0) and REHEARSAL_WORKERS workers (default 3), one compute thread
# each; every host's processes in a memory cgroup of their own (its sshd is put there, so all that
# deploy starts on it is too), a worker's limited to REHEARSAL_WORKER_MEMORY (default 400M: its
# budget follows the cgroup, below its cells, so it works out of core); every host's link shaped
# with tc's tbf at REHEARSAL_RATE (1gbit), at REHEARSAL_SLOW_RATE (100mbit) for REHEARSAL_SLOW_WAVES
# waves (2) from wave REHEARSAL_SLOW_FROM (2); --keep-layers-on-workers; the last worker's host
# killed (kill -9 of all it runs, sshd included) in wave REHEARSAL_KILL_AT (6), "rebooted" (sshd
# again) and `deploy resume`; at wave REHEARSAL_UPGRADE_AT (10) a binary change: teardown,
# provision of the binaries of ROOT/bin/b (those of ROOT/bin/a with a new GNU build id: the same
# code in files that differ, so that provision copies them and every service restarts on them;
# a rebuild from a later commit mid-run would take in whatever that commit changed), resume.
# A wave number is `kingmaker status`'s, the last wave finished: a fault "at wave N" falls in N+1.
# Checkpoints every REHEARSAL_CHECKPOINT_WAVES waves (2) or REHEARSAL_CHECKPOINT_SECS (1800). The
# driver looks at the run and samples the hosts every REHEARSAL_SAMPLE_SECS (30).
# Binaries: REHEARSAL_BINARIES (a directory with kingmaker and kingmaker-worker), else built from a
# worktree of HEAD (REHEARSAL_SRC, default ROOT/src), copied once into ROOT/bin/a. The digest to
# match: REHEARSAL_DIGEST (default for cc2p 5x5 / 6, the embedded build's 1068c8c3); other games
# need it. REHEARSAL_SUBNET (default 10.251.64) keeps the hosts' addresses across sittings.
# REHEARSAL_FETCH=1 also runs `deploy fetch` (collect, pack, verify) at the end; then (unless
# REHEARSAL_PUBLISH=0) `deploy publish` publishes the table where it lies into ROOT/published.
# The hosts run at the driver's niceness (`nice -n 19 scripts/rehearsal.sh run ...`).
# Writes ROOT/plan.json (`kingmaker plan --inventory`), ROOT/logs/ (driver.log, samples.tsv,
# events.tsv), ROOT/figures.json (measured beside planned), ROOT/result.json once the digest is
# checked. Needs root, iproute2 (tc), openssh-server, cgroup v1 (memory, cpuacct).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cmd=${1:?usage: rehearsal.sh run|status|stop|down ROOT [GAME OPTION...]}
root=${2:?the rehearsal directory}
shift 2
mkdir -p "$root"
root=$(cd "$root" && pwd)
lab=$root/lab
logs=$root/logs
st=$root/state
mkdir -p "$logs" "$st"
say() { echo "$(date -u +%FT%TZ) $*" | tee -a "$logs/driver.log" >&2; }
event() { printf '%s\t%s\t%s\n' "$(date +%s)" "$1" "${2:-}" >>"$logs/events.tsv"; say "$1${2:+: $2}"; }
die() { say "error: $*"; exit 1; }

# The settings, fixed by the first run (env and arguments), read back by every later one.
conf=$root/config
if [ ! -f "$conf" ]; then
  [ "$cmd" = run ] || { echo "$root holds no rehearsal" >&2; exit 1; }
  game=${1:-cc2p}
  [ $# -gt 0 ] && shift
  options=("$@")
  if [ "$game" = cc2p ] && [ ${#options[@]} -eq 0 ]; then options=(--board 5x5 --pieces 6); fi
  digest=${REHEARSAL_DIGEST:-}
  if [ -z "$digest" ] && [ "$game ${options[*]}" = "cc2p --board 5x5 --pieces 6" ]; then digest=1068c8c3; fi
  [ -n "$digest" ] || { echo "REHEARSAL_DIGEST: the embedded build's digest of $game ${options[*]} is needed" >&2; exit 2; }
  {
    declare -p game options digest
    printf 'workers=%q\nworker_memory=%q\ncoord_memory=%q\nsubnet=%q\n' "${REHEARSAL_WORKERS:-3}" \
      "${REHEARSAL_WORKER_MEMORY:-400M}" "${REHEARSAL_COORD_MEMORY:-4G}" "${REHEARSAL_SUBNET:-10.251.64}"
    printf 'rate=%q\nslow_rate=%q\nslow_from=%q\nslow_waves=%q\nkill_at=%q\nupgrade_at=%q\n' \
      "${REHEARSAL_RATE:-1gbit}" "${REHEARSAL_SLOW_RATE:-100mbit}" "${REHEARSAL_SLOW_FROM:-2}" \
      "${REHEARSAL_SLOW_WAVES:-2}" "${REHEARSAL_KILL_AT:-6}" "${REHEARSAL_UPGRADE_AT:-10}"
    printf 'ckpt_waves=%q\nckpt_secs=%q\nfetch=%q\nsample_secs=%q\nrun=%q\n' \
      "${REHEARSAL_CHECKPOINT_WAVES:-2}" "${REHEARSAL_CHECKPOINT_SECS:-1800}" "${REHEARSAL_FETCH:-0}" \
      "${REHEARSAL_SAMPLE_SECS:-30}" "${REHEARSAL_RUN:-rehearsal}"
  } >"$conf.tmp"
  mv "$conf.tmp" "$conf"
fi
# shellcheck disable=SC1090
. "$conf"
inv=$lab/$run.toml
run_dir=$lab/h0/data/$run/run
tag=$(printf '%s' "$lab" | cksum | cut -c1-5) # lab-hosts.sh's names for this lab directory
cg=kmreh$tag
level=$(nice)
# What the driver starts does not keep its lock (fd 9) open.
km() { "$root/bin/current/kingmaker" "$@" 9>&-; }
hosts() { seq 0 "$workers" | sed 's/^/h/'; }
ns_of() { awk -v h="$1" '$1 == h { print $2 }' "$lab/hosts"; }
lab_up() { [ -f "$lab/hosts" ] && ip netns list | grep -qw "$(awk 'NR == 1 { print $2 }' "$lab/hosts")"; }

# --- the binaries: a (as built), b (the same code under a new build id) -------------------------
binaries() {
  [ -x "$root/bin/a/kingmaker-worker" ] && [ -x "$root/bin/b/kingmaker-worker" ] && return 0
  local from=${REHEARSAL_BINARIES:-}
  mkdir -p "$root/bin"
  if [ ! -x "$root/bin/a/kingmaker-worker" ]; then
    if [ -z "$from" ]; then
      local src=${REHEARSAL_SRC:-$root/src} commit
      commit=$(git -C "$here" rev-parse HEAD)
      if ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
        git -C "$here" worktree prune
        rm -rf "$src"
        git -C "$here" worktree add -q --detach "$src" "$commit" >&2
      fi
      git -C "$src" checkout -q --detach "$commit"
      say "building kingmaker and kingmaker-worker at $(git -C "$src" rev-parse --short HEAD) in $src"
      (cd "$src" && CARGO_TARGET_DIR="$src/target" cargo build --release -q -p kingmaker -p kingmaker-worker)
      from=$src/target/release
      echo "built at $(git -C "$src" rev-parse --short HEAD)" >"$root/bin/a.from"
    else
      echo "copied from $from" >"$root/bin/a.from"
    fi
    mkdir -p "$root/bin/a.tmp"
    cp "$from/kingmaker" "$from/kingmaker-worker" "$root/bin/a.tmp/"
    rm -rf "$root/bin/a" && mv "$root/bin/a.tmp" "$root/bin/a"
  fi
  rm -rf "$root/bin/b.tmp" && mkdir -p "$root/bin/b.tmp"
  local b
  for b in kingmaker kingmaker-worker; do
    python3 - "$root/bin/a/$b" "$root/bin/b.tmp/$b" <<'EOF'
import hashlib, re, subprocess, sys
src, dst = sys.argv[1], sys.argv[2]
old = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run(["readelf", "-n", src], capture_output=True, text=True).stdout)
if not old:
    sys.exit(f"{src} has no GNU build id")
old = bytes.fromhex(old.group(1))
data = open(src, "rb").read()
if data.count(old) != 1:
    sys.exit(f"the build id of {src} is not found exactly once")
new = hashlib.sha1(old + b"rehearsal: the binary change").digest()[: len(old)]
open(dst, "wb").write(data.replace(old, new))
EOF
    chmod +x "$root/bin/b.tmp/$b"
  done
  rm -rf "$root/bin/b" && mv "$root/bin/b.tmp" "$root/bin/b"
  [ -L "$root/bin/current" ] || ln -sfn a "$root/bin/current"
  say "binaries: a $(readelf -n "$root/bin/a/kingmaker-worker" | grep -o 'Build ID: .*'), b $(readelf -n "$root/bin/b/kingmaker-worker" | grep -o 'Build ID: .*')"
}

# --- the hosts, their cgroups and links -----------------------------------------------------------
# Each host's cgroups (memory, cpuacct): made once per boot, a worker's memory limited.
cgroups() {
  local h c
  for h in $(hosts); do
    for c in memory cpuacct; do mkdir -p "/sys/fs/cgroup/$c/$cg/$h"; done
    if [ "$h" != h0 ]; then
      local m=/sys/fs/cgroup/memory/$cg/$h
      echo -1 >"$m/memory.memsw.limit_in_bytes" 2>/dev/null || true
      echo "$worker_memory" >"$m/memory.limit_in_bytes" 2>/dev/null \
        || say "the memory limit of $h stays $(cat "$m/memory.limit_in_bytes"): its processes use more than $worker_memory"
      echo "$worker_memory" >"$m/memory.memsw.limit_in_bytes" 2>/dev/null || true
    fi
  done
}
# Put everything host H runs in its cgroups (its sshd: what deploy starts later is its child).
enter() {
  local p c
  for p in $(ip netns pids "$(ns_of "$1")"); do
    for c in memory cpuacct; do echo "$p" >"/sys/fs/cgroup/$c/$cg/$1/cgroup.procs" 2>/dev/null || true; done
  done
}
# `ip netns exec` mounts a sysfs of the host's own, without /sys/fs/cgroup: mount the memory
# hierarchy again in the mount namespace of the host's sshd, which what deploy starts there
# inherits, so that a worker finds its cgroup's limit and sets its budget from it.
host_cgroupfs() {
  local p
  p=$(ip netns pids "$(ns_of "$1")" | head -n 1)
  [ -n "$p" ] || die "host $1 runs nothing"
  nsenter -t "$p" -m sh -c '[ -e /sys/fs/cgroup/memory/memory.limit_in_bytes ] && exit 0
    mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup && mkdir -p /sys/fs/cgroup/memory &&
    mount -t cgroup -o memory cgroup /sys/fs/cgroup/memory'
}
shape() { # shape HOST RATE
  ip netns exec "$(ns_of "$1")" tc qdisc replace dev eth0 root tbf rate "$2" burst 2mb latency 100ms
}
shape_all() {
  local h
  for h in $(hosts); do shape "$h" "$1"; done
  echo "$1" >"$st/rate"
}
renice_hosts() { "$here/scripts/lab-hosts.sh" nice "$lab" "$level" >/dev/null 2>&1 9>&- || true; }
# A host started again as after a reboot: its sshd (in its cgroups), nothing else.
host_boot() {
  local h=$1 ns hip
  ns=$(ns_of "$h")
  hip=$(awk -v h="$h" '$1 == h { print $3 }' "$lab/hosts")
  setsid nohup bash -c 'for g in "$@"; do [ "$g" = -- ] && break; echo $$ >"$g/cgroup.procs"; shift; done; shift
    exec "$@"' _ "/sys/fs/cgroup/memory/$cg/$h" "/sys/fs/cgroup/cpuacct/$cg/$h" -- \
    nice -n "$level" ip netns exec "$ns" python3 -c '
import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    sys.exit("prctl failed")
os.execv(sys.argv[1], sys.argv[1:])' /usr/sbin/sshd -D -e -f "$lab/$h/sshd_config" \
    </dev/null >>"$lab/$h/sshd.log" 2>&1 9>&- &
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/$hip/22") 2>/dev/null && break; sleep 0.1; done
  (exec 3<>"/dev/tcp/$hip/22") 2>/dev/null || die "host $h's sshd did not come back"
  host_cgroupfs "$h"
}
hosts_up() {
  if ! lab_up; then
    # A first sitting, or a reboot took the hosts: the same addresses, keys and directories.
    LAB_NICE=$level "$here/scripts/lab-hosts.sh" up "$lab" $((workers + 1)) "$subnet" >/dev/null 9>&-
    rm -f "$lab"/h*/opt/run/*.pid # pids of a past boot
    event hosts-up "$(tr '\n' ' ' <"$lab/hosts")"
  fi
  cgroups
  local h
  for h in $(hosts); do
    # A host whose sshd is gone (killed with the lab's processes) boots it again.
    if [ -z "$(ip netns pids "$(ns_of "$h")")" ]; then host_boot "$h"; event rebooted "$h"; fi
    enter "$h" && host_cgroupfs "$h"
  done
  shape_all "$(cat "$st/rate" 2>/dev/null || echo "$rate")"
}

# --- the inventory and the plan -------------------------------------------------------------------
inventory() {
  [ -f "$inv" ] && return 0
  "$here/scripts/lab-hosts.sh" inventory "$lab" "$run" "$game" "${options[@]}" | python3 -c '
import re, sys
bins, ckw, cks, wmem, cmem = sys.argv[1:6]
t = sys.stdin.read()
t = t.replace("build_args = [\"--worker-timeout\", \"10\"]",
              "build_args = [\"--worker-timeout\", \"10\", \"--keep-layers-on-workers\"]")
t = re.sub(r"binaries = \".*\"", "binaries = \"%s\"" % bins, t)
t = re.sub(r"checkpoint_every_secs = \d+", "checkpoint_every_secs = " + cks, t)
t = re.sub(r"checkpoint_every_waves = \d+", "checkpoint_every_waves = " + ckw, t)
t = t.replace("min_free_disk = \"10GiB\"", "min_free_disk = \"5GiB\"")
def size(m):
    return m if m[-1].lower() == "b" else m + "iB"
# The hosts as plan sees them: one core each, a worker the memory of its cgroup.
t = re.sub(r"(role = \"coordinator\"\n)", "\\1cores = 1\nmemory = \"%s\"\ndisk = \"20GiB\"\n" % size(cmem), t)
t = re.sub(r"(role = \"worker\"\n)", "\\1cores = 1\nmemory = \"%s\"\ndisk = \"20GiB\"\n" % size(wmem), t)
sys.stdout.write(t)' "$root/bin/current" "$ckpt_waves" "$ckpt_secs" "$worker_memory" "$coord_memory" >"$inv.tmp"
  mv "$inv.tmp" "$inv"
}
plan() {
  [ -s "$root/plan.json" ] && return 0
  km plan --inventory "$inv" --json >"$root/plan.json.tmp" 2>"$logs/plan.err" \
    && mv "$root/plan.json.tmp" "$root/plan.json" || say "plan refused or failed: $(tail -n 3 "$logs/plan.err")"
  km plan --inventory "$inv" >"$root/plan.txt" 2>&1 || true
}

# --- the run --------------------------------------------------------------------------------------
# In bash's integers: awk prints sums past 2^31 as 3.27e+09.
netsum() {
  local s=0 f
  for f in /sys/class/net/kmlv"$tag"*/statistics/rx_bytes; do
    [ -r "$f" ] && s=$((s + $(cat "$f")))
  done
  echo "$s"
}
provision() {
  local a b
  a=$(netsum)
  km deploy provision --inventory "$inv" >>"$logs/deploy.log" 2>&1 || { tail -n 20 "$logs/deploy.log" >&2; die "provision failed (logs/deploy.log)"; }
  b=$(netsum)
  # Copying binaries is not the build's traffic: counted apart.
  echo $((b - a)) >>"$logs/provision-bytes"
  touch "$st/provisioned"
}
deploy_do() { # launch, resume, teardown...: logged, niced after
  local rc=0
  km deploy "$@" --inventory "$inv" >>"$logs/deploy.log" 2>&1 || rc=$?
  renice_hosts
  return $rc
}
status_json() { km status "$run_dir" --json 2>/dev/null || echo '{}'; }
field() { # field JSON EXPR: a python expression over d
  python3 -c 'import json,sys; d=json.loads(sys.argv[1] or "{}"); v=eval(sys.argv[2]); print("" if v is None else v)' "$1" "$2" 2>/dev/null || true
}
alive() { # alive ROLE HOST: the service's pid is live
  local f p
  f=$lab/$2/opt/run/$1-$run.pid
  p=$(cat "$f" 2>/dev/null || true)
  [ -n "$p" ] && [ -d "/proc/$p" ] && tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q kingmaker \
    && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null
}

# The sampler: every sample_secs, per host: CPU (cpuacct), peak memory (the memory cgroup's),
# bytes sent (its veth), disk read and written (/proc/PID/io of its processes, each process's last
# reading kept in logs/io.json), and its data directory's size (du).
sampler() {
  python3 - "$lab" "$cg" "$tag" "$logs" "$sample_secs" "$workers" 9>&- <<'EOF' &
import json, os, subprocess, sys, time
lab, cg, tag, logs, every, workers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), int(sys.argv[6])
boot = open("/proc/sys/kernel/random/boot_id").read().strip()
iop = os.path.join(logs, "io.json")
try:
    io = json.load(open(iop))
except (OSError, ValueError):
    io = {}
def read(p, default=0):
    try:
        return int(open(p).read().split()[0])
    except (OSError, ValueError, IndexError):
        return default
hosts = {}
for line in open(os.path.join(lab, "hosts")):
    h, ns, _ = line.split()
    hosts[h] = (ns, int(h[1:]))
while True:
    now = int(time.time())
    rows = []
    for h, (ns, i) in sorted(hosts.items()):
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
        for p in pids:
            try:
                start = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[19]
                f = dict(l.split(": ") for l in open(f"/proc/{p}/io").read().splitlines())
                io[f"{boot}/{h}/{p}/{start}"] = [int(f["read_bytes"]), int(f["write_bytes"])]
            except (OSError, IndexError, KeyError, ValueError):
                pass
        rd = sum(v[0] for k, v in io.items() if k.split("/")[1] == h)
        wr = sum(v[1] for k, v in io.items() if k.split("/")[1] == h)
        cpu = read(f"/sys/fs/cgroup/cpuacct/{cg}/{h}/cpuacct.usage")
        mem = read(f"/sys/fs/cgroup/memory/{cg}/{h}/memory.max_usage_in_bytes")
        net = read(f"/sys/class/net/kmlv{tag}{i}/statistics/rx_bytes")
        du = subprocess.run(["du", "-sb", os.path.join(lab, h, "data")], capture_output=True, text=True).stdout.split()
        rows.append(f"{now}\t{boot}\t{h}\t{cpu}\t{mem}\t{net}\t{rd}\t{wr}\t{du[0] if du else 0}\n")
    json.dump(io, open(iop + ".tmp", "w"))
    os.replace(iop + ".tmp", iop)
    with open(os.path.join(logs, "samples.tsv"), "a") as out:
        out.writelines(rows)
    time.sleep(every)
EOF
  sampler_pid=$!
}

# The figures from the samples: counters summed over resets (a reboot, a host killed), peaks.
figures() {
  python3 - "$logs" "$root/plan.json" "$root/figures.json" <<'EOF'
import json, os, sys
logs, planp, outp = sys.argv[1:4]
per, last, t0, t1 = {}, {}, None, None
events = [l.rstrip("\n").split("\t") for l in open(os.path.join(logs, "events.tsv"))]
start = next((int(e[0]) for e in events if e[1] == "launched"), None)
end = next((int(e[0]) for e in events if e[1] == "complete"), None)
cols = ["cpu_ns", "mem_peak", "net_sent", "disk_read", "disk_written", "du"]
for line in open(os.path.join(logs, "samples.tsv")):
    f = line.split("\t")
    if len(f) != 9:
        continue
    t, boot, h = int(f[0]), f[1], f[2]
    if end and t > end:
        continue  # the build's figures: not the fetch's
    v = dict(zip(cols, map(int, f[3:])))
    t0 = t if t0 is None else t0
    t1 = t
    s = per.setdefault(h, {"cpu_ns": 0, "net_sent": 0, "disk_read": 0, "disk_written": 0, "mem_peak": 0, "du_peak": 0})
    p = last.get(h)
    for c in ("cpu_ns", "net_sent", "disk_read", "disk_written"):
        s[c] += v[c] - p[c] if p and v[c] >= p[c] else (v[c] if p else 0)
    s["mem_peak"] = max(s["mem_peak"], v["mem_peak"])
    s["du_peak"] = max(s["du_peak"], v["du"])
    last[h] = v
du_total = {}
for line in open(os.path.join(logs, "samples.tsv")):
    f = line.split("\t")
    if len(f) == 9 and not (end and int(f[0]) > end):
        du_total[f[0]] = du_total.get(f[0], 0) + int(f[8])
try:
    prov = sum(int(l) for l in open(os.path.join(logs, "provision-bytes")))
except OSError:
    prov = 0
try:
    plan = json.load(open(planp))
except (OSError, ValueError):
    plan = {}
sent = sum(s["net_sent"] for s in per.values())
# The updates' bytes, from the coordinator's log: the last run of each wave (a wave run again
# after a fault counts once).
import glob, re
waves = {}
for f in glob.glob(os.path.join(os.path.dirname(logs), "lab", "h0", "opt", "log", "coordinator-*.log")):
    for line in open(f, errors="replace"):
        m = re.search(r"layer (\S+) wave (\d+): .* (\d+) bytes on the wire", line)
        if m:
            waves[(m.group(1), int(m.group(2)))] = int(m.group(3))
updates = sum(waves.values())
solved = plan.get("solved_states")
out = {
    "hosts": {h: {"cpu_seconds": round(s["cpu_ns"] / 1e9, 1), "peak_memory_bytes": s["mem_peak"],
                  "bytes_sent": s["net_sent"], "disk_read_bytes": s["disk_read"],
                  "disk_written_bytes": s["disk_written"], "peak_disk_bytes": s["du_peak"]}
              for h, s in sorted(per.items())},
    "cpu_seconds": round(sum(s["cpu_ns"] for s in per.values()) / 1e9, 1),
    "wall_seconds": (end or t1) - start if start else None,
    "complete": end is not None,
    "update_bytes": updates,
    "update_bytes_per_quarter_state": round(updates / solved, 3) if solved else None,
    "waves_logged": len(waves),
    "bytes_on_the_wire": sent - prov,
    "provision_bytes_left_out": prov,
    "bytes_per_quarter_state": round((sent - prov) / solved, 3) if solved else None,
    "peak_disk_bytes_all_hosts": max(du_total.values()) if du_total else 0,
    "events": events,
    "plan": {k: plan.get(k) for k in ("states", "solved_states", "cpu_hours", "wall_hours", "wire_bytes", "table_bytes")}
            | {"hosts": [{k: h.get(k) for k in ("name", "peak_memory_bytes", "peak_disk_bytes")} for h in plan.get("hosts", [])]},
}
json.dump(out, open(outp + ".tmp", "w"), indent=2)
os.replace(outp + ".tmp", outp)
EOF
}

# The faults of the plan, by the wave of the layer being solved (a later layer: at once).
faults() {
  local j=$1 wave activity finished r
  wave=$(field "$j" 'd["progress"]["wave"] if d.get("progress") else 0')
  activity=$(field "$j" 'd.get("activity")')
  finished=$(field "$j" 'len(d.get("finished") or [])')
  [ "${finished:-0}" -gt 0 ] && wave=1000000
  wave=${wave:-0}
  [ "$activity" = running ] || return 0
  # 100 Mbit/s for slow_waves waves.
  if [ ! -f "$st/slow-done" ]; then
    if [ "$wave" -ge "$slow_from" ] && [ "$wave" -lt $((slow_from + slow_waves)) ]; then
      r=$slow_rate
    elif [ "$wave" -ge $((slow_from + slow_waves)) ]; then
      r=$rate
    else
      r=$(cat "$st/rate")
    fi
    if [ "$r" != "$(cat "$st/rate")" ]; then
      shape_all "$r"
      event "rate" "$r from wave $wave"
      [ "$r" = "$rate" ] && touch "$st/slow-done"
    fi
  fi
  # A worker host killed mid-wave, brought back, the run resumed.
  if [ ! -f "$st/kill-done" ] && [ "$wave" -ge "$kill_at" ]; then
    local h=h$workers p t
    wave=$(field "$(status_json)" 'd["progress"]["wave"]')
    event "kill" "host $h (everything it runs) in wave $wave"
    for p in $(ip netns pids "$(ns_of "$h")"); do kill -9 "$p" 2>/dev/null || true; done
    t=$(date +%s)
    while alive coordinator h0 && [ $(($(date +%s) - t)) -lt 300 ]; do sleep 1; done
    event "noticed" "the coordinator stopped after $(($(date +%s) - t)) s: $(grep -h 'unreachable\|heartbeats' "$lab/h0/opt/log/coordinator-$run.log" | tail -n 1)"
    host_boot "$h"
    shape "$h" "$(cat "$st/rate")"
    event "rebooted" "$h"
    deploy_do resume || say "resume failed (logs/deploy.log); tried again"
    event "resumed" "after the kill"
    touch "$st/kill-done"
    return 0
  fi
  # The binary change between waves.
  if [ -f "$st/kill-done" ] && [ ! -f "$st/upgrade-done" ] && [ "$wave" -ge "$upgrade_at" ]; then
    event "upgrade" "teardown in wave $wave"
    deploy_do teardown --stop-timeout 7200 || die "teardown failed (logs/deploy.log)"
    ln -sfn b "$root/bin/current.tmp" && mv -T "$root/bin/current.tmp" "$root/bin/current"
    provision
    event "upgrade" "provisioned $(readelf -n "$root/bin/b/kingmaker-worker" | grep -o 'Build ID: .*')"
    deploy_do resume || say "resume failed (logs/deploy.log); tried again"
    event "resumed" "on binaries b"
    touch "$st/upgrade-done"
  fi
}

stopping=
on_term() { stopping=1; }

driver() {
  exec 9>>"$root/kingmaker.lock"
  flock -n 9 || die "another driver runs on $root (pid in $root/kingmaker.lock)"
  # Its pid where scripts/results.sh's stop looks for a job's pid.
  printf '{"pid": %s, "command": "scripts/rehearsal.sh run"}\n' "$$" >"$root/kingmaker.lock"
  trap on_term TERM INT
  sampler_pid=
  trap '[ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null; true' EXIT
  say "driver started (pid $$, niceness $level): $game ${options[*]}, $workers workers"
  binaries
  [ -f "$root/bin/current" ] || [ -L "$root/bin/current" ] || ln -sfn a "$root/bin/current"
  hosts_up
  inventory
  plan
  sampler
  [ -f "$st/provisioned" ] || provision
  if [ ! -f "$st/launched" ]; then
    deploy_do launch || grep -q 'launched before' "$logs/deploy.log" || die "launch failed (logs/deploy.log)"
    touch "$st/launched"
    event "launched" "$(basename "$(readlink "$root/bin/current")")"
  fi
  local j phase tries=0 since
  since=$(date +%s)
  while [ -z "$stopping" ]; do
    j=$(status_json)
    phase=$(field "$j" 'd.get("phase")')
    if [ "$phase" = complete ]; then
      grep -q $'\tcomplete\t' "$logs/events.tsv" || event "complete" "$(field "$j" 'd["summary"]')"
      break
    fi
    if ! alive coordinator h0; then
      # Stopped (a lost worker, a reboot, a stop): resume, a few times, then give up for now.
      if [ $(($(date +%s) - since)) -gt 20 ]; then
        [ "$tries" -ge 5 ] && die "the run does not go on after 5 resumes (logs/deploy.log)"
        tries=$((tries + 1))
        event "resume" "the coordinator was not running (${phase:-no run yet})"
        deploy_do resume || say "resume failed (logs/deploy.log)"
        since=$(date +%s)
      fi
    else
      tries=0
      faults "$j"
      renice_hosts
    fi
    sleep "$sample_secs" &
    wait $! || true
  done
  if [ -n "$stopping" ]; then
    say "stop asked: the coordinator finishes its wave and checkpoints"
    deploy_do teardown --stop-timeout 7200 || true
    event "stopped" "teardown"
    figures || true
    exit 0
  fi
  check
}

# The digest of every layer against the expected one; the release too with fetch=1.
check() {
  local got
  figures || true
  got=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); l=s.get("layers") or {}; print(" ".join(v.get("digest", "") for v in (l.values() if isinstance(l, dict) else l)))' "$run_dir/summary.json")
  say "digests: $got (expected $digest...)"
  if [ "$fetch" = 1 ] && [ ! -d "$root/release" ]; then
    km deploy fetch --inventory "$inv" --out "$root/release" >>"$logs/deploy.log" 2>&1 || die "fetch failed (logs/deploy.log)"
    event "fetched" "$root/release"
  fi
  case " $got" in
    *" $digest"*) ;;
    *) die "the digest $got is not the expected $digest" ;;
  esac
  publish
  python3 -c 'import json,sys; f=json.load(open(sys.argv[1])); f["digest"]=sys.argv[2]; json.dump(f, open(sys.argv[3], "w"), indent=2)' \
    "$root/figures.json" "$got" "$root/result.json"
  say "done: digest $got, figures in $root/result.json"
}

# The table published where it lies (`deploy publish`: each worker packs and serves its parts,
# the manifest comes to ROOT/published), verified, and read from the manifest alone. It takes a
# kingmaker with `deploy publish`: the pipeline's build of its checkout (REHEARSAL_SRC).
publish() {
  [ "${REHEARSAL_PUBLISH:-1}" = 1 ] && [ ! -f "$root/published/manifest.sha256" ] || return 0
  local pub=${REHEARSAL_SRC:-$root/src}/target/release/kingmaker
  if ! "$pub" deploy publish --help >/dev/null 2>&1; then
    die "publish: $pub has no \`deploy publish\`: build the checkout there, then run again"
  fi
  "$pub" deploy publish --inventory "$inv" --out "$root/published" >>"$logs/deploy.log" 2>&1 ||
    die "publish failed (logs/deploy.log)"
  event "published" "$root/published"
  { "$pub" verify "$root/published" && "$pub" query "$root/published" start; } >"$logs/published.txt" 2>&1 ||
    die "the published release does not read back (logs/published.txt)"
}

driver_pid() { grep -o '"pid": *[0-9]*' "$root/kingmaker.lock" 2>/dev/null | grep -o '[0-9]*$' || true; }

# One compound command, read whole before it runs: the file may change under a driver that runs
# for days (bash reads a script as it goes).
{
case $cmd in
  run) driver ;;
  status)
    . "$conf"
    echo "rehearsal of $game ${options[*]} in $root; digest expected $digest..."
    p=$(driver_pid)
    if [ -n "$p" ] && ! flock -n "$root/kingmaker.lock" true; then echo "driver running (pid $p)"; else echo "driver not running"; fi
    [ -f "$logs/events.tsv" ] && while IFS=$'\t' read -r t e m; do echo "  $(date -u -d "@$t" +%FT%TZ) $e $m"; done <"$logs/events.tsv"
    [ -x "$root/bin/current/kingmaker" ] && [ -d "$run_dir" ] && km status "$run_dir" | head -n 4
    [ -f "$logs/samples.tsv" ] && figures && python3 -c 'import json,sys; f=json.load(open(sys.argv[1])); f.pop("events"); print(json.dumps(f, indent=1))' "$root/figures.json"
    [ -f "$root/result.json" ] && echo "done: $root/result.json"
    ;;
  stop | down)
    p=$(driver_pid)
    if [ -n "$p" ] && ! flock -n "$root/kingmaker.lock" true; then
      kill -TERM "$p"
      flock "$root/kingmaker.lock" true # until the driver has checkpointed and gone
    elif lab_up && [ -f "$inv" ]; then
      km deploy teardown --inventory "$inv" --stop-timeout 7200 >>"$logs/deploy.log" 2>&1 || true
    fi
    if [ "$cmd" = down ]; then
      "$here/scripts/lab-hosts.sh" down "$lab"
      for h in $(hosts); do
        for c in memory cpuacct; do rmdir "/sys/fs/cgroup/$c/$cg/$h" 2>/dev/null || true; done
      done
      for c in memory cpuacct; do rmdir "/sys/fs/cgroup/$c/$cg" 2>/dev/null || true; done
    fi
    ;;
  *) echo "unknown command $cmd (run, status, stop, down)" >&2; exit 2 ;;
esac
exit
}
