//! The batch script of a run: one readable bash file, kept as `DIR/job.sh`, that every job of the
//! chain runs (sbatch, a requeue, the next job after a time limit).

use super::config::SlurmInventory;
use anyhow::Result;

/// The script with `{{NAME}}` holes that [`batch_script`] fills (every value is a checked word:
/// no spaces, quotes or `$`).
const TEMPLATE: &str = r#"#!/bin/bash
# Kingmaker run {{NAME}} as a SLURM job: written by `kingmaker slurm submit --inventory {{INVENTORY}}`
# (docs/operators.md, "SLURM clusters"). Every job of the run runs this file: the first builds,
# the next ones (a requeue, the job chained after a time limit, a later submit) resume from the
# last checkpoint. `sbatch {{SCRIPT}}` submits it by hand.
#SBATCH --job-name={{NAME}}
#SBATCH --nodes={{NODES}}
#SBATCH --ntasks-per-node=1
#SBATCH --time={{TIME}}
# USR1 to this shell {{SIGNAL}} s before the time limit (SLURM may send it up to a minute early):
# checkpoint, stop, submit the next job.
#SBATCH --signal=B:USR1@{{SIGNAL}}
# Requeued after a node failure or a preemption, the job starts again here and resumes.
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --output={{DIR}}/logs/slurm-%j.out
{{SBATCH_EXTRA}}
set -u

dir={{DIR}}
run="$dir/run"
data={{DATA}}
bin={{BIN}}
port={{PORT}}
script={{SCRIPT}}
chain={{CHAIN}}
max_requeues={{MAX_REQUEUES}}
build_args=({{BUILD_ARGS}})
resume_args=({{RESUME_ARGS}})
worker_args=({{WORKER_ARGS}})

log() { echo "[$(date -u +%FT%TZ)] kingmaker job ${SLURM_JOB_ID}: $*"; }

# The signals, and what each means:
#   USR1: the time limit is near (--signal above): checkpoint, stop, submit the next job.
#   USR2: `kingmaker slurm cancel` (scancel --batch --signal=USR2): checkpoint, stop, no next job.
#   TERM: scancel, a preemption or the time limit itself: SLURM sends it to every process of the
#         job, the coordinator too, which finishes its wave and checkpoints before KillWait runs
#         out; the workers ignore TERM so that they serve that checkpoint.
stop=""
coordinator=""
on_signal() {
  log "$2"
  if [ -z "$stop" ]; then
    stop="$1"
    if [ -n "$coordinator" ]; then kill -TERM "$coordinator" 2>/dev/null; fi
  fi
}
trap 'on_signal time "the time limit is near: checkpointing, then the next job continues"' USR1
trap 'on_signal cancel "cancelled by kingmaker slurm cancel: checkpointing, then stopping"' USR2
trap 'if [ -z "$stop" ]; then stop=terminated; fi; log "SLURM ends the job (scancel, a preemption, a lost node or the time limit)${coordinator:+: the coordinator checkpoints}"' TERM

if [ -e "$run/summary.json" ]; then
  log "$run is complete (summary.json exists): nothing to do"
  exit 0
fi
mkdir -p "$dir/logs" "$data"

# The job's token: made for this job, in a file only its owner reads, removed when the job ends.
# The processes get it in their environment (srun passes it on), never on a command line.
token_file="$dir/token-${SLURM_JOB_ID}"
(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$token_file")
KINGMAKER_TOKEN=$(cat "$token_file")
export KINGMAKER_TOKEN
workers_srun=""
stop_workers() {
  if [ -z "$workers_srun" ]; then return; fi
  # Two SIGINTs within a second: srun hands a Ctrl-C to every worker, which ends cleanly.
  kill -INT "$workers_srun" 2>/dev/null; sleep 0.3; kill -INT "$workers_srun" 2>/dev/null
  for _ in $(seq 15); do kill -0 "$workers_srun" 2>/dev/null || break; sleep 1; done
  kill -KILL "$workers_srun" 2>/dev/null
  wait "$workers_srun" 2>/dev/null
  workers_srun=""
}
trap 'stop_workers; rm -f "$token_file"' EXIT

# The workers' addresses: each node's NodeAddr (slurm.conf), in the allocation's order, which is
# the order of srun's tasks: worker N (SLURM_PROCID N) keeps its data in $data/worker-N.
node_addr() { scontrol show node "$1" | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p'; }
workers=""
for node in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
  workers="${workers:+$workers,}$(node_addr "$node"):$port"
done
log "nodes $SLURM_JOB_NODELIST, workers $workers (restart ${SLURM_RESTART_COUNT:-0})"

# One worker on each node, in the background: listening on its node's address, TERM ignored
# (with slurm.threads, srun gives it that many CPUs: a step's task gets one by default).
srun --nodes="$SLURM_JOB_NUM_NODES" --ntasks-per-node=1 {{SRUN_CPUS}}--kill-on-bad-exit=0 bash -c '
  trap "" TERM
  addr=$(scontrol show node "$SLURMD_NODENAME" | sed -n "s/.*NodeAddr=\([^ ]*\).*/\1/p")
  exec "$0" --listen "$addr:$1" --data-dir "$2/worker-$SLURM_PROCID" "${@:3}"
' "$bin/kingmaker-worker" "$port" "$data" {{THREADS}}"${worker_args[@]}" &
workers_srun=$!

# Wait until every worker listens.
for w in ${workers//,/ }; do
  for i in $(seq 120); do
    if (exec 3<>"/dev/tcp/${w%:*}/${w##*:}") 2>/dev/null; then break; fi
    if ! kill -0 "$workers_srun" 2>/dev/null || [ "$i" = 120 ] || [ -n "$stop" ]; then
      log "worker $w does not listen: see the srun lines above"
      exit 1
    fi
    sleep 1
  done
done

# The coordinator, in this batch step.
checkpoint_before=$(stat -c %Y "$run/checkpoint.json" 2>/dev/null || echo 0)
if [ -e "$run/run.json" ]; then
  log "resuming $run from its last checkpoint"
  "$bin/kingmaker" resume "$run" --workers "$workers" "${resume_args[@]}" &
else
  log "building into $run"
  mkdir -p "$run"
  "$bin/kingmaker" build "${build_args[@]}" --out "$run" --workers "$workers" &
fi
coordinator=$!
if [ -n "$stop" ]; then kill -TERM "$coordinator"; fi
# A trapped signal interrupts `wait`: wait again until the coordinator is gone.
while :; do
  wait "$coordinator"
  rc=$?
  if ! kill -0 "$coordinator" 2>/dev/null; then break; fi
done
if [ "$rc" -gt 128 ]; then
  wait "$coordinator" 2>/dev/null
  again=$?
  if [ "$again" != 127 ]; then rc=$again; fi
fi
coordinator=""
log "the coordinator ended (exit status $rc)"
# Layers kept on the workers (--keep-layers-on-workers) are copied into the run directory while
# the workers still run: after this job nothing serves them.
if [ -e "$run/summary.json" ] && ls "$run"/layers/*.kept.json >/dev/null 2>&1; then
  if "$bin/kingmaker" collect "$run" --in-parts --workers "$workers"; then
    log "collected the layers kept on the workers into $run (kingmaker collect --in-parts)"
  else
    log "collecting the layers kept on the workers failed: they stay in $data/worker-N; see docs/operators.md, \"SLURM clusters\""
  fi
fi
stop_workers

if [ -e "$run/summary.json" ]; then
  log "the run is complete: $run"
  exit 0
fi
checkpoint_after=$(stat -c %Y "$run/checkpoint.json" 2>/dev/null || echo 0)
# A coordinator stopped before its first wave (still restoring) exits 130 with no new checkpoint:
# the one it restored from stands.
if [ "$rc" = 0 ]; then
  stopped="stopped at a new checkpoint"
else
  stopped="stopped (exit status $rc) before a new checkpoint: the last one stands"
fi
case "$stop" in
  time)
    if [ "$chain" != true ]; then
      log "$stopped before the time limit; slurm.chain is off: kingmaker slurm submit continues it"
    elif [ "$rc" = 0 ] && [ "$checkpoint_after" != "$checkpoint_before" ]; then
      next=$(sbatch --parsable --dependency="afterany:${SLURM_JOB_ID}" "$script")
      echo "$next" >> "$dir/jobs"
      log "$stopped before the time limit; job $next continues it"
    else
      log "no new checkpoint in this job (exit status $rc): no next job, so that a run that cannot progress within the time limit stops; raise slurm.time"
      exit 1
    fi
    exit 0
    ;;
  cancel)
    log "$stopped: kingmaker slurm submit continues it"
    exit 0
    ;;
  terminated)
    log "$stopped; a requeue, or kingmaker slurm submit, resumes from it"
    exit 143
    ;;
esac
# The coordinator stopped by itself: a worker lost with its node, a network fault.
if [ -e "$run/run.json" ] && [ "${SLURM_RESTART_COUNT:-0}" -lt "$max_requeues" ]; then
  log "the run stopped (exit status $rc): requeueing the job, which resumes from the last checkpoint"
  scontrol requeue "$SLURM_JOB_ID"
else
  log "the run stopped (exit status $rc), requeued ${SLURM_RESTART_COUNT:-0} time(s) already: not again; see this log, then kingmaker slurm submit"
fi
exit "$rc"
"#;

/// The batch script of the run, ready to write to [`SlurmInventory::script_path`].
pub fn batch_script(inv: &SlurmInventory) -> Result<String> {
    let (r, s) = (&inv.run, &inv.slurm);
    let words = |v: &[String]| {
        v.iter()
            .map(|w| format!("'{w}'"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (build, resume) = r.coordinator_args();
    let mut extra = Vec::new();
    if let Some(p) = &s.partition {
        extra.push(format!("#SBATCH --partition={p}"));
    }
    if let Some(a) = &s.account {
        extra.push(format!("#SBATCH --account={a}"));
    }
    extra.extend(s.sbatch_options.iter().map(|o| format!("#SBATCH {o}")));
    let threads = s
        .threads
        .map(|t| format!("--threads {t} "))
        .unwrap_or_default();
    let inventory = std::path::absolute(&inv.path)
        .unwrap_or_else(|_| inv.path.clone())
        .display()
        .to_string();
    let text = TEMPLATE
        .replace("{{NAME}}", inv.job_name())
        .replace("{{INVENTORY}}", &inventory)
        .replace("{{SCRIPT}}", &inv.script_path())
        .replace("{{NODES}}", &s.nodes.to_string())
        .replace("{{TIME}}", &s.time)
        .replace("{{SIGNAL}}", &s.signal_secs.to_string())
        .replace(
            "{{SBATCH_EXTRA}}\n",
            &extra.iter().map(|l| format!("{l}\n")).collect::<String>(),
        )
        .replace("{{DIR}}", inv.dir())
        .replace("{{DATA}}", &inv.data_dir())
        .replace("{{BIN}}", &inv.binaries()?)
        .replace("{{PORT}}", &r.worker_port.to_string())
        .replace("{{CHAIN}}", if s.chain { "true" } else { "false" })
        .replace("{{MAX_REQUEUES}}", &s.max_requeues.to_string())
        .replace("{{BUILD_ARGS}}", &words(&build))
        .replace("{{RESUME_ARGS}}", &words(&resume))
        .replace("{{WORKER_ARGS}}", &words(&r.worker_args))
        .replace("{{THREADS}}", &threads)
        .replace(
            "{{SRUN_CPUS}}",
            &s.threads
                .map(|t| format!("--cpus-per-task={t} "))
                .unwrap_or_default(),
        );
    Ok(text)
}

/// `kingmaker build ...` as the script runs it, with placeholders for what only the job knows,
/// for checking the arguments before anything is submitted.
pub fn build_argv(inv: &SlurmInventory) -> Vec<String> {
    let r = &inv.run;
    let mut v = vec!["kingmaker".to_string(), "build".into(), r.game.clone()];
    v.extend(r.options.iter().cloned());
    v.extend([
        "--checkpoint-every-secs".into(),
        r.checkpoint_every_secs.to_string(),
        "--checkpoint-every-waves".into(),
        r.checkpoint_every_waves.to_string(),
    ]);
    v.extend(r.build_args.iter().cloned());
    v.extend(["--out".into(), "/nonexistent/check".into()]);
    let workers = (0..inv.slurm.nodes)
        .map(|i| format!("10.0.0.{}:{}", i + 1, r.worker_port))
        .collect::<Vec<_>>();
    v.extend(["--workers".into(), workers.join(",")]);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_has_every_hole_filled_and_the_clusters_rules() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inv.toml");
        std::fs::write(
            &path,
            "[run]\nname = \"cc3p1\"\ngame = \"cc3p\"\noptions = [\"--level\", \"1\"]\ntoken_file = \"t\"\n\
             build_args = [\"--worker-timeout\", \"2\"]\nworker_args = [\"--wave-delay-ms\", \"300\"]\n\n\
             [slurm]\ndir = \"/shared/cc3p1\"\nnodes = 2\ntime = \"1-00:00:00\"\npartition = \"long\"\n\
             sbatch_options = [\"--exclusive\"]\nbinaries = \"/shared/bin\"\nthreads = 8\n",
        )
        .unwrap();
        let inv = SlurmInventory::load(&path).unwrap();
        let s = batch_script(&inv).unwrap();
        assert!(!s.contains("{{"), "{s}");
        for line in [
            "#SBATCH --nodes=2",
            "#SBATCH --time=1-00:00:00",
            "#SBATCH --signal=B:USR1@600",
            "#SBATCH --requeue",
            "#SBATCH --partition=long",
            "#SBATCH --exclusive",
            "#SBATCH --output=/shared/cc3p1/logs/slurm-%j.out",
            "build_args=('cc3p' '--level' '1' '--checkpoint-every-secs' '600' '--checkpoint-every-waves' '0' '--worker-timeout' '2')",
            "resume_args=('--checkpoint-every-secs' '600' '--checkpoint-every-waves' '0' '--worker-timeout' '2')",
            "worker_args=('--wave-delay-ms' '300')",
            "bin=/shared/bin",
        ] {
            assert!(s.lines().any(|l| l == line), "no line {line:?} in\n{s}");
        }
        assert!(s.contains("--threads 8 \"${worker_args[@]}\""), "{s}");
        assert!(
            s.contains("--ntasks-per-node=1 --cpus-per-task=8 --kill-on-bad-exit=0"),
            "{s}"
        );
        // The #SBATCH lines come before the first command, or sbatch ignores them.
        let first_command = s.lines().position(|l| l == "set -u").unwrap();
        assert!(s
            .lines()
            .skip(first_command)
            .all(|l| !l.starts_with("#SBATCH")));
    }
}
