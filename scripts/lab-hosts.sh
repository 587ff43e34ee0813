#!/usr/bin/env bash
# Rehearsal hosts on this machine: network namespaces, each with its own address on a private
# subnet (a veth pair to a bridge) and its own sshd, as tests/tests/deploy.rs makes them, but
# lasting until `down` so that a long run can span sittings.
#
#   scripts/lab-hosts.sh up DIR N [SUBNET]   hosts h0..h{N-1} at SUBNET.10, .11, ... (default
#                                            SUBNET 10.251.7); DIR gets the ssh key
#                                            (id_ed25519), known_hosts and one folder per host
#   scripts/lab-hosts.sh down DIR            kill what runs in the hosts, remove them
#   scripts/lab-hosts.sh ip DIR HOST         the host's address (h0, h1, ...)
#   scripts/lab-hosts.sh cut DIR HOST        drop the host off the network (its link down)
#   scripts/lab-hosts.sh mend DIR HOST       put it back
#   scripts/lab-hosts.sh restart DIR HOST    start the host's sshd again (killed, or gone with a
#                                            fault), with the same host key
#   scripts/lab-hosts.sh replace DIR HOST    a replacement server at the same address: what ran
#                                            there is killed, DIR/HOST/opt and data are deleted,
#                                            a new host key, sshd started again (DIR/known_hosts
#                                            keeps the old key, as a run's would)
#   scripts/lab-hosts.sh inventory DIR RUN GAME [OPTION...]
#                                            print an inventory for run RUN of GAME OPTION... on
#                                            the hosts (h0 the coordinator, the others workers);
#                                            edit the [run] settings it prints to taste (LAB_PORT:
#                                            the workers' port, default 7070; another run on the
#                                            same hosts needs another)
#   scripts/lab-hosts.sh nice DIR [N]        run what the hosts run now at niceness N (default 19),
#                                            autogroup included (services start in sessions of
#                                            their own, where plain nice does not reach); again
#                                            after every launch or resume
#
# The hosts share this machine's filesystem: give each its own install_dir and data_dir in the
# inventory (docs/operators.md, "Rehearsing on one machine"). Needs root, iproute2, openssh-server.
# LAB_NICE=N runs every host's processes at niceness N.
set -euo pipefail
cmd=${1:?usage: lab-hosts.sh up|down|ip|cut|mend|restart|replace|inventory|nice DIR ...}
dir=${2:?the lab directory}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
tag=$(printf '%s' "$dir" | cksum | cut -c1-5)
bridge=kmlab$tag

# start_sshd NS IP HOSTDIR: the host's sshd, in its namespace, in the background.
start_sshd() {
  local ns=$1 hip=$2 h=$3
  cat >"$h/sshd_config" <<EOF
ListenAddress $hip
Port 22
HostKey $h/ssh_host_ed25519_key
PidFile $h/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
ClientAliveInterval 0
Subsystem sftp /usr/lib/openssh/sftp-server
LogLevel ERROR
EOF
  # sshd reaps what its sessions leave running (deploy's nohup services), as init does on a
  # real host: this machine's PID 1 may not reap orphans, and a zombie looks alive.
  # LAB_NICE: the niceness of everything the host runs (a long rehearsal beside other work).
  nice -n "${LAB_NICE:-0}" ip netns exec "$ns" python3 -c '
import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    sys.exit("prctl failed")
os.execv(sys.argv[1], sys.argv[1:])' /usr/sbin/sshd -D -e -f "$h/sshd_config" \
    </dev/null >>"$h/sshd.log" 2>&1 &
}

# wait_sshd IP: until the host's sshd answers (10 s at most).
wait_sshd() {
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/$1/22") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "sshd at $1 does not answer" >&2
  return 1
}

case $cmd in
up)
  n=${3:?how many hosts}
  subnet=${4:-10.251.7}
  if [ -e "$dir/hosts" ]; then
    first=$(awk 'NR == 1 { print $2 }' "$dir/hosts")
    if ip netns list | grep -qw "$first"; then
      echo "$dir already has hosts: down first" >&2
      exit 1
    fi
    rm -f "$dir/hosts" # left by a reboot: the namespaces went with it
  fi
  ip link add "$bridge" type bridge
  ip link set "$bridge" type bridge nf_call_iptables 0 2>/dev/null || true
  ip addr add "$subnet.1/24" dev "$bridge"
  ip link set "$bridge" up
  [ -f "$dir/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -f "$dir/id_ed25519"
  cp "$dir/id_ed25519.pub" "$dir/authorized_keys"
  mkdir -p /run/sshd
  : >"$dir/known_hosts"
  : >"$dir/hosts"
  for i in $(seq 0 $((n - 1))); do
    ns=kml$tag-$i
    hip=$subnet.$((10 + i))
    ip netns add "$ns"
    ip link add "kmlv$tag$i" type veth peer name "kmlp$tag$i"
    ip link set "kmlv$tag$i" master "$bridge"
    ip link set "kmlv$tag$i" up
    ip link set "kmlp$tag$i" netns "$ns"
    ip -n "$ns" link set "kmlp$tag$i" name eth0
    ip -n "$ns" addr add "$hip/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    h=$dir/h$i
    mkdir -p "$h"
    [ -f "$h/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$h/ssh_host_ed25519_key"
    echo "$hip $(cut -d' ' -f1,2 "$h/ssh_host_ed25519_key.pub")" >>"$dir/known_hosts"
    start_sshd "$ns" "$hip" "$h"
    echo "h$i $ns $hip" >>"$dir/hosts"
  done
  for i in $(seq 0 $((n - 1))); do
    wait_sshd "$subnet.$((10 + i))" || true
  done
  cat "$dir/hosts"
  ;;
down)
  [ -f "$dir/hosts" ] || exit 0
  while read -r _ ns _; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done <"$dir/hosts"
  for v in $(ip -o link show | grep -o "kmlv$tag[0-9]*" | sort -u); do ip link del "$v" 2>/dev/null || true; done
  ip link del "$bridge" 2>/dev/null || true
  rmdir "/sys/fs/cgroup/cpu/kmlab$tag" 2>/dev/null || true
  rm -f "$dir/hosts"
  ;;
ip)
  awk -v h="${3:?host}" '$1 == h { print $3 }' "$dir/hosts"
  ;;
cut | mend)
  ns=$(awk -v h="${3:?host}" '$1 == h { print $2 }' "$dir/hosts")
  [ -n "$ns" ] || { echo "no host ${3} in $dir/hosts" >&2; exit 1; }
  ip -n "$ns" link set eth0 "$([ "$cmd" = cut ] && echo down || echo up)"
  ;;
restart | replace)
  host=${3:?host}
  read -r ns hip < <(awk -v h="$host" '$1 == h { print $2, $3 }' "$dir/hosts") || true
  [ -n "${ns:-}" ] || { echo "no host $host in $dir/hosts" >&2; exit 1; }
  h=$dir/$host
  # Its sshd only (by the pid it wrote, checked to be that sshd), not what runs beside it.
  p=$(cat "$h/sshd.pid" 2>/dev/null || true)
  if [ -n "$p" ] && tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "$h/sshd_config"; then
    kill "$p" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  fi
  if [ "$cmd" = replace ]; then
    # A new server: what ran on the old one is gone with its disk (the install_dir and data_dir
    # the lab's inventory gives it), and it answers with a new host key.
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    rm -rf "$h/opt" "$h/data"
    rm -f "$h/ssh_host_ed25519_key" "$h/ssh_host_ed25519_key.pub"
    ssh-keygen -q -t ed25519 -N '' -f "$h/ssh_host_ed25519_key"
  fi
  start_sshd "$ns" "$hip" "$h"
  wait_sshd "$hip"
  if [ "$cmd" = replace ]; then
    echo "$host ($hip) has a new host key: $(ssh-keygen -lf "$h/ssh_host_ed25519_key.pub")"
    echo "the run's known_hosts still pins the old one: docs/operators.md section 6, \"A host that is gone for good\""
  else
    echo "$host ($hip): sshd started again"
  fi
  ;;
inventory)
  run=${3:?the run name}
  game=${4:?the game}
  shift 4
  opts=""
  for o in "$@"; do opts="$opts${opts:+, }\"$o\""; done
  cat <<EOF
# Run $run on the hosts of scripts/lab-hosts.sh in $dir.
[run]
name = "$run"
game = "$game"
options = [$opts]
token_file = "secrets/$run.token"
worker_port = ${LAB_PORT:-7070}
checkpoint_every_secs = 600
checkpoint_every_waves = 0
build_args = ["--worker-timeout", "10"]
worker_args = []
release_dir = "$dir/release"
# binaries: unset, the ones beside the kingmaker that runs deploy; set it to another build's
# target/release directory to deploy that one.
min_free_disk = "10GiB"

[ssh]
known_hosts = "known_hosts"
strict_host_keys = true
connect_timeout_secs = 5
EOF
  while read -r h _ hip; do
    role=worker
    [ "$h" = h0 ] && role=coordinator
    cat <<EOF

[[host]]
name = "$h"
role = "$role"
address = "$hip"
user = "root"
identity_file = "id_ed25519"
install_dir = "$dir/$h/opt"
data_dir = "$dir/$h/data"
private_address = "$hip"
threads = 1
supervisor = "nohup"
EOF
  done <"$dir/hosts"
  ;;
nice)
  level=${3:-19}
  # Niceness alone does not reach across cgroups and sessions: with cgroup v1's cpu controller the
  # hosts also get a group of their own whose CPU share falls with N (53 of 1024 at 19).
  group=/sys/fs/cgroup/cpu/kmlab$tag
  if [ -d /sys/fs/cgroup/cpu ] && mkdir -p "$group" 2>/dev/null; then
    echo $((1024 * (20 - level) / 20 + 2)) >"$group/cpu.shares"
  fi
  while read -r _ ns _; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do
      renice -n "$level" -p "$pid" >/dev/null 2>&1 || true
      echo "$level" >"/proc/$pid/autogroup" 2>/dev/null || true
      [ -d "$group" ] && echo "$pid" >"$group/cgroup.procs" 2>/dev/null || true
    done
  done <"$dir/hosts"
  ;;
*)
  echo "unknown command $cmd (up, down, ip, cut, mend, restart, replace, inventory, nice)" >&2
  exit 1
  ;;
esac
