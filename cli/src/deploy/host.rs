//! What deploy does on one host, as POSIX shell run over SSH: find the supervisor (systemd when it
//! runs, else `setsid nohup` with a pid file), probe the host's health, start, stop and inspect
//! the run's service there.

use super::inventory::{Host, Inventory, Role};
use super::ssh::{quote, Remote, Ssh};
use anyhow::{bail, Result};

/// Shell variables and functions every remote script starts with.
pub fn prelude(inv: &Inventory, host: &Host) -> String {
    let run = &inv.run.name;
    let binary = match host.role {
        Role::Coordinator => "kingmaker",
        Role::Worker => "kingmaker-worker",
    };
    let mut s = String::from("set -u\n");
    for (k, v) in [
        ("KM_ROLE", host.role.as_str().to_string()),
        ("KM_RUN", run.clone()),
        ("KM_INSTALL", host.install_dir.clone()),
        ("KM_DATA", host.data_dir.clone()),
        ("KM_UNIT", host.unit(run)),
        ("KM_ENV", host.env_file(run)),
        (
            "KM_LEGACY_ENV",
            match host.role {
                Role::Coordinator => host.legacy_env_file(),
                Role::Worker => String::new(),
            },
        ),
        ("KM_PID", host.pid_file(run)),
        ("KM_LOG", host.log_file(run)),
        ("KM_BINARY", format!("{}/{binary}", host.bin_dir())),
        ("KM_SUP", host.supervisor.as_str().to_string()),
        ("KM_PORT", inv.run.worker_port.to_string()),
        (
            "KM_ADDR",
            host.private_address
                .map(|a| a.to_string())
                .unwrap_or_default(),
        ),
    ] {
        s.push_str(&format!("{k}={}\n", quote(&v)));
    }
    s.push_str(SHELL_FUNCTIONS);
    s
}

const SHELL_FUNCTIONS: &str = r#"
km_die() { echo "$*" >&2; exit 3; }
km_systemd_runs() { [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; }
if [ "$KM_SUP" = auto ]; then
  if km_systemd_runs; then KM_SUP=systemd; else KM_SUP=nohup; fi
elif [ "$KM_SUP" = systemd ] && ! km_systemd_runs; then
  km_die "supervisor = \"systemd\" but systemd is not running here (no /run/systemd/system or no systemctl); set supervisor = \"auto\" or \"nohup\" for this host (services then run under setsid nohup with a pid file and do not come back after a reboot by themselves)"
fi
# The pid of the running service, or nothing.
km_pid() {
  if [ "$KM_SUP" = systemd ]; then
    p=$(systemctl show -p MainPID --value "$KM_UNIT" 2>/dev/null || true)
    if [ -n "$p" ] && [ "$p" != 0 ]; then echo "$p"; fi
    return 0
  fi
  [ -f "$KM_PID" ] || return 0
  p=$(cat "$KM_PID" 2>/dev/null || true)
  case "$p" in ''|*[!0-9]*) return 0 ;; esac
  [ -r "/proc/$p/stat" ] || return 0
  st=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1)
  [ "$st" = Z ] && return 0
  tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -q kingmaker || return 0
  echo "$p"
}
# running, stopped, or systemd's word (failed, activating, ...).
km_state() {
  if [ -n "$(km_pid)" ]; then echo running; return 0; fi
  if [ "$KM_SUP" = systemd ]; then
    s=$(systemctl is-active "$KM_UNIT" 2>/dev/null || true)
    case "$s" in active|inactive|'') echo stopped ;; *) echo "$s" ;; esac
  else
    echo stopped
  fi
}
km_start() {
  if [ -n "$(km_pid)" ]; then echo "already running (pid $(km_pid))"; return 0; fi
  [ -f "$KM_ENV" ] || km_die "$KM_ENV is missing: run \`kingmaker deploy provision\` first"
  [ -x "$KM_BINARY" ] || km_die "$KM_BINARY is missing: run \`kingmaker deploy provision\` first"
  if [ "$KM_SUP" = systemd ]; then
    systemctl reset-failed "$KM_UNIT" >/dev/null 2>&1 || true
    systemctl enable "$KM_UNIT" >/dev/null 2>&1 || km_die "systemctl enable $KM_UNIT failed"
    systemctl start "$KM_UNIT" || km_die "systemctl start $KM_UNIT failed"
  else
    mkdir -p "$KM_INSTALL/run" "$KM_INSTALL/log"
    rm -f "$KM_PID"
    echo "=== $(date -u +%Y-%m-%dT%H:%M:%SZ) starting the $KM_ROLE of run $KM_RUN" >> "$KM_LOG"
    setsid nohup "$KM_INSTALL/bin/kingmaker-service" "$KM_ROLE" "$KM_ENV" "$KM_PID" >> "$KM_LOG" 2>&1 < /dev/null &
    i=0
    while [ ! -s "$KM_PID" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  fi
  echo "started (pid $(km_pid))"
}
# Stop with SIGTERM (the coordinator finishes its wave and checkpoints), SIGKILL after $1 seconds.
km_stop() {
  if [ "$KM_SUP" = systemd ]; then
    systemctl disable "$KM_UNIT" >/dev/null 2>&1 || true
    if [ -n "$(km_pid)" ]; then
      timeout "$1" systemctl stop "$KM_UNIT" || { systemctl kill -s KILL "$KM_UNIT"; echo "killed after $1s"; }
      echo stopped
    else
      echo "not running"
    fi
    systemctl reset-failed "$KM_UNIT" >/dev/null 2>&1 || true
    return 0
  fi
  p=$(km_pid)
  if [ -z "$p" ]; then rm -f "$KM_PID"; echo "not running"; return 0; fi
  kill -TERM "$p" 2>/dev/null || true
  i=0
  while [ -n "$(km_pid)" ]; do
    if [ $i -ge "$1" ]; then kill -KILL "$p" 2>/dev/null || true; echo "killed after $1s"; sleep 1; break; fi
    sleep 1
    i=$((i + 1))
  done
  rm -f "$KM_PID"
  echo stopped
}
km_log() {
  if [ "$KM_SUP" = systemd ]; then
    journalctl -u "$KM_UNIT" -n "$1" --no-pager -o cat 2>/dev/null || true
  else
    tail -n "$1" "$KM_LOG" 2>/dev/null || true
  fi
}
# The first 16 hex digits of the sha256 of a token read on stdin (never the token itself).
km_fp() { t=$(cat); [ -n "$t" ] && printf %s "$t" | sha256sum | cut -c1-16; return 0; }
km_listening() {
  hex=$(printf ':%04X' "$KM_PORT")
  awk -v p="$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
# The pids of the processes listening on TCP port $KM_PORT, one a line (ss, else the sockets'
# inodes in /proc): whose the port is, this run's worker or another's.
km_listener_pids() {
  if command -v ss >/dev/null 2>&1; then
    ss -Hltnp "sport = :$KM_PORT" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u
    return 0
  fi
  hex=$(printf ':%04X' "$KM_PORT")
  for ino in $(awk -v p="$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { print $10 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null); do
    find /proc/[0-9]*/fd -lname "socket:\\[$ino\\]" 2>/dev/null | cut -d/ -f3
  done | sort -u
}
# KEY's value in an environment file deploy wrote (never used for the token).
km_env_value() { sed -n "s/^$1=\"\(.*\)\"\$/\1/p" "$2" 2>/dev/null; }
"#;

/// What a probe found on a host (every field as the host reported it).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Health {
    pub supervisor: String,
    pub arch: String,
    pub uid: String,
    pub state: String,
    pub pid: Option<u32>,
    pub disk_free: u64,
    pub mem_total: u64,
    pub mem_available: u64,
    pub load: String,
    pub cores: String,
    /// sha256 of the installed binary (empty: missing).
    pub binary_sha256: String,
    pub env_file: bool,
    /// Fingerprints of the token in the environment file and in the running process.
    pub token_fp: String,
    pub running_token_fp: String,
    /// Workers: the private address is configured, and the worker port is listening.
    pub has_private_address: bool,
    pub listening: bool,
    /// Workers: this run's worker is among the processes listening on the worker port; another
    /// process listening there (the run named in its environment, its command line).
    pub listener_ours: bool,
    pub listener_unknown: bool,
    pub other_listener_pid: Option<u32>,
    pub other_listener_run: String,
    pub other_listener_cmd: String,
    /// The coordinator: the run in the host's `coordinator.env` of an older kingmaker (empty: none),
    /// and whether that kingmaker's unit is active.
    pub legacy_env_run: String,
    pub legacy_unit_active: bool,
}

const PROBE: &str = r#"
echo "supervisor=$KM_SUP"
echo "arch=$(uname -m)"
echo "uid=$(id -u)"
echo "state=$(km_state)"
echo "pid=$(km_pid)"
d="$KM_DATA"
while [ ! -d "$d" ]; do d=$(dirname "$d"); done
echo "disk_free_kb=$(df -Pk "$d" | awk 'NR == 2 { print $4 }')"
echo "mem_total_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)"
echo "mem_avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)"
echo "load=$(cut -d' ' -f1-3 /proc/loadavg)"
echo "cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)"
if [ -x "$KM_BINARY" ]; then echo "binary_sha256=$(sha256sum "$KM_BINARY" | cut -c1-64)"; fi
if [ -r "$KM_ENV" ]; then
  echo env_file=yes
  echo "token_fp=$(sed -n 's/^KINGMAKER_TOKEN="\(.*\)"$/\1/p' "$KM_ENV" | km_fp)"
fi
p=$(km_pid)
if [ -n "$p" ] && [ -r "/proc/$p/environ" ]; then
  echo "running_token_fp=$(tr '\0' '\n' < "/proc/$p/environ" | sed -n 's/^KINGMAKER_TOKEN=//p' | km_fp)"
fi
if [ -n "$KM_ADDR" ]; then
  if command -v ip >/dev/null 2>&1; then a=$(ip -o addr show 2>/dev/null); else a=" $(hostname -I 2>/dev/null) "; fi
  case "$a" in *" $KM_ADDR/"*|*" $KM_ADDR "*) echo private_address=yes ;; esac
fi
if [ "$KM_ROLE" = worker ] && km_listening; then
  echo listening=yes
  me=$(km_pid)
  pids=$(km_listener_pids)
  # Neither ss nor /proc named the holder: launch cannot tell whose the port is.
  [ -n "$pids" ] || echo listener_unknown=yes
  for lp in $pids; do
    if [ "$lp" = "$me" ]; then echo listener_ours=yes; continue; fi
    echo "other_listener_pid=$lp"
    echo "other_listener_run=$(tr '\0' '\n' < "/proc/$lp/environ" 2>/dev/null | sed -n 's/^KINGMAKER_RUN=//p' | head -n 1)"
    echo "other_listener_cmd=$(tr '\0' ' ' < "/proc/$lp/cmdline" 2>/dev/null | cut -c1-160)"
  done
fi
if [ -n "$KM_LEGACY_ENV" ] && [ -r "$KM_LEGACY_ENV" ]; then
  echo "legacy_env_run=$(km_env_value KINGMAKER_RUN "$KM_LEGACY_ENV")"
  if [ "$KM_SUP" = systemd ] && systemctl is-active --quiet kingmaker-coordinator.service 2>/dev/null; then
    echo legacy_unit_active=yes
  fi
fi
exit 0
"#;

/// Probe a host: reachable, supervisor, service state, resources, binary, token.
pub fn probe(ssh: &Ssh, inv: &Inventory, host: &Host) -> Result<Health> {
    let r = ssh.run(host, &format!("{}{PROBE}", prelude(inv, host)), None)?;
    if !r.ok() {
        bail!("host {}: {}", host.name, failure(&r));
    }
    let kb = |k: &str| {
        r.field(k)
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0)
            * 1024
    };
    let s = |k: &str| r.field(k).unwrap_or("").trim().to_string();
    Ok(Health {
        supervisor: s("supervisor"),
        arch: s("arch"),
        uid: s("uid"),
        state: s("state"),
        pid: r.field("pid").and_then(|p| p.trim().parse().ok()),
        disk_free: kb("disk_free_kb"),
        mem_total: kb("mem_total_kb"),
        mem_available: kb("mem_avail_kb"),
        load: s("load"),
        cores: s("cores"),
        binary_sha256: s("binary_sha256"),
        env_file: r.field("env_file") == Some("yes"),
        token_fp: s("token_fp"),
        running_token_fp: s("running_token_fp"),
        has_private_address: r.field("private_address") == Some("yes"),
        listening: r.field("listening") == Some("yes"),
        listener_ours: r.field("listener_ours") == Some("yes"),
        listener_unknown: r.field("listener_unknown") == Some("yes"),
        other_listener_pid: r
            .field("other_listener_pid")
            .and_then(|p| p.trim().parse().ok()),
        other_listener_run: s("other_listener_run"),
        other_listener_cmd: s("other_listener_cmd"),
        legacy_env_run: s("legacy_env_run"),
        legacy_unit_active: r.field("legacy_unit_active") == Some("yes"),
    })
}

/// The message of a failed remote script: its stderr, else its stdout.
pub fn failure(r: &Remote) -> String {
    let e = r.stderr.trim();
    if e.is_empty() {
        format!("exit {}: {}", r.code, r.stdout.trim())
    } else {
        e.to_string()
    }
}

/// Run one of the shell functions (km_start, km_stop 60, km_log 20 ...) on a host.
pub fn service(ssh: &Ssh, inv: &Inventory, host: &Host, call: &str) -> Result<String> {
    let r = ssh.run(host, &format!("{}{call}\n", prelude(inv, host)), None)?;
    if !r.ok() {
        bail!("host {}: {call}: {}", host.name, failure(&r));
    }
    Ok(r.stdout.trim().to_string())
}

/// The last lines of a service's log (journal or log file).
pub fn log_tail(ssh: &Ssh, inv: &Inventory, host: &Host, lines: usize) -> String {
    service(ssh, inv, host, &format!("km_log {lines}")).unwrap_or_default()
}

/// The supervisor a host will use, as the inventory asks for it (before a probe resolves auto).
pub fn describe_supervisor(s: &str) -> &'static str {
    match s {
        "systemd" => "systemd",
        "nohup" => "setsid nohup with a pid file (no systemd here: no restart on crash or reboot; `deploy resume` restarts)",
        _ => "unknown",
    }
}

impl Health {
    pub fn running(&self) -> bool {
        self.state == "running"
    }
}
