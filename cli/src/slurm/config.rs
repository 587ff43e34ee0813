//! The inventory as `kingmaker slurm` reads it: deploy's `[run]` section (what to build) and a
//! `[slurm]` section (the job). `[ssh]` and `[[host]]` may be there too, for deploy; slurm ignores them.

use crate::deploy::inventory::{check_word, RunSpec};
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlurmInventory {
    pub run: RunSpec,
    pub slurm: SlurmSpec,
    /// deploy's sections, allowed so that one file serves both.
    #[serde(default)]
    #[allow(dead_code)]
    ssh: Option<toml::Value>,
    #[serde(default, rename = "host")]
    #[allow(dead_code)]
    hosts: Option<toml::Value>,
    /// The inventory file (for the hints printed).
    #[serde(skip)]
    pub path: PathBuf,
}

/// The batch job: how many nodes, for how long, and where its files go.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlurmSpec {
    /// The job's directory, on a file system every node and the submit host share: the batch
    /// script (`job.sh`), the jobs' logs (`logs/`), the per-job token and the run directory (`run/`).
    pub dir: String,
    /// Where each worker keeps its data (`DATA_DIR/worker-N`, N its place): under `dir` by
    /// default; a node-local path (the same on every node) is allowed, see docs/operators.md.
    pub data_dir: Option<String>,
    /// Nodes of the job: one worker on each; the coordinator runs in the batch step on the first.
    pub nodes: u32,
    /// The job's time limit, as sbatch's --time takes it (`MINUTES`, `H:MM:SS`, `D-HH:MM:SS`).
    pub time: String,
    /// Seconds before the time limit at which the job checkpoints and submits the next one.
    /// SLURM may signal up to a minute earlier than asked.
    #[serde(default = "default_signal_secs")]
    pub signal_secs: u64,
    pub partition: Option<String>,
    pub account: Option<String>,
    /// More `#SBATCH` options, e.g. `["--qos=long", "--mem=0", "--exclusive"]`.
    #[serde(default)]
    pub sbatch_options: Vec<String>,
    /// The directory with `kingmaker` and `kingmaker-worker` on the nodes (default: the
    /// directory of the `kingmaker` that submits).
    pub binaries: Option<String>,
    /// Compute threads of each worker (default: all the node's cores).
    pub threads: Option<usize>,
    /// How many times a job whose coordinator failed (a node lost) requeues itself.
    #[serde(default = "default_max_requeues")]
    pub max_requeues: u32,
    /// Submit the next job (`--dependency=afterany`) when the time limit stops a job.
    #[serde(default = "default_true")]
    pub chain: bool,
}

fn default_signal_secs() -> u64 {
    600
}
fn default_max_requeues() -> u32 {
    3
}
fn default_true() -> bool {
    true
}

impl SlurmInventory {
    pub fn load(path: &Path) -> Result<SlurmInventory> {
        let cap = kingmaker_tablefmt::fsio::METADATA_CAP;
        let text = kingmaker_tablefmt::fsio::read_bounded_text(path, cap, "an inventory")
            .with_context(|| format!("reading the inventory {}", path.display()))?;
        let mut inv: SlurmInventory = toml::from_str(&text).with_context(|| {
            format!(
                "{} is not a valid SLURM inventory ([run] and [slurm]; docs/operators.md, \"SLURM clusters\")",
                path.display()
            )
        })?;
        inv.path = path.to_path_buf();
        inv.validate()
            .with_context(|| format!("in {}", path.display()))?;
        Ok(inv)
    }

    /// The job's name in SLURM: the run's name.
    pub fn job_name(&self) -> &str {
        &self.run.name
    }
    pub fn dir(&self) -> &str {
        &self.slurm.dir
    }
    pub fn run_dir(&self) -> String {
        format!("{}/run", self.slurm.dir)
    }
    pub fn script_path(&self) -> String {
        format!("{}/job.sh", self.slurm.dir)
    }
    pub fn logs_dir(&self) -> String {
        format!("{}/logs", self.slurm.dir)
    }
    /// Every job id submitted for the run, one a line, oldest first.
    pub fn jobs_file(&self) -> String {
        format!("{}/jobs", self.slurm.dir)
    }
    pub fn data_dir(&self) -> String {
        self.slurm
            .data_dir
            .clone()
            .unwrap_or_else(|| format!("{}/workers", self.slurm.dir))
    }

    /// The binaries' directory on the nodes.
    pub fn binaries(&self) -> Result<String> {
        if let Some(b) = &self.slurm.binaries {
            return Ok(b.clone());
        }
        let exe = std::env::current_exe().context("finding this kingmaker's directory")?;
        let dir = exe
            .parent()
            .context("this kingmaker has no directory")?
            .to_string_lossy()
            .into_owned();
        check_word(&dir).with_context(|| {
            format!("this kingmaker's directory {dir:?}: set slurm.binaries instead")
        })?;
        Ok(dir)
    }

    fn validate(&self) -> Result<()> {
        let r = &self.run;
        if r.name.is_empty()
            || !r
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            bail!(
                "run.name {:?} must be letters, digits, '-' or '_' (it names the job)",
                r.name
            );
        }
        let s = &self.slurm;
        let mut words: Vec<(&str, &String)> = vec![("run.game", &r.game), ("slurm.time", &s.time)];
        for (what, list) in [
            ("run.options", &r.options),
            ("run.build_args", &r.build_args),
            ("run.resume_args", &r.resume_args),
            ("run.worker_args", &r.worker_args),
            ("slurm.sbatch_options", &s.sbatch_options),
        ] {
            words.extend(list.iter().map(|w| (what, w)));
        }
        for (what, opt) in [
            ("slurm.partition", &s.partition),
            ("slurm.account", &s.account),
        ] {
            words.extend(opt.iter().map(|w| (what, w)));
        }
        for (what, w) in words {
            check_word(w).with_context(|| format!("{what}: {w:?}"))?;
        }
        for (what, dir) in [
            ("slurm.dir", Some(&s.dir)),
            ("slurm.data_dir", s.data_dir.as_ref()),
            ("slurm.binaries", s.binaries.as_ref()),
        ] {
            let Some(dir) = dir else { continue };
            if !dir.starts_with('/') || dir.len() < 2 || dir.ends_with('/') {
                bail!("{what} {dir:?} must be an absolute path without a trailing '/'");
            }
            check_word(dir).with_context(|| what.to_string())?;
        }
        r.refuse_launcher_options(
            "the job",
            ["slurm.dir", "the job's nodes", "the job's token file"],
            "each node's allocation",
        )?;
        if s.sbatch_options.iter().any(|o| {
            [
                "--nodes",
                "-N",
                "--time",
                "-t",
                "--signal",
                "--job-name",
                "-J",
                "--output",
                "-o",
                "--ntasks-per-node",
            ]
            .iter()
            .any(|f| o == f || o.starts_with(&format!("{f}=")))
        }) {
            bail!(
                "slurm.sbatch_options must not give --nodes, --time, --signal, --job-name, --output or \
                 --ntasks-per-node: set slurm.nodes, slurm.time and slurm.signal_secs instead"
            );
        }
        if s.nodes == 0 {
            bail!("slurm.nodes must be at least 1 (one worker on each node)");
        }
        let limit = time_limit_secs(&s.time).context("slurm.time")?;
        if s.signal_secs + 60 >= limit {
            bail!(
                "slurm.signal_secs ({}) leaves too little of slurm.time ({}s) to build in: the signal must come \
                 at least a minute before the time limit",
                s.signal_secs,
                limit
            );
        }
        if s.signal_secs < 30 {
            bail!("slurm.signal_secs must be at least 30: the coordinator needs the time to finish its wave and checkpoint");
        }
        Ok(())
    }
}

/// sbatch's --time in seconds: `MINUTES`, `MINUTES:SECONDS`, `HOURS:MINUTES:SECONDS`, `DAYS-HOURS`,
/// `DAYS-HOURS:MINUTES` or `DAYS-HOURS:MINUTES:SECONDS`.
pub fn time_limit_secs(t: &str) -> Result<u64> {
    let bad = || {
        anyhow::anyhow!(
            "time limit {t:?}: write it as sbatch's --time does (MINUTES, H:MM:SS or D-HH:MM:SS)"
        )
    };
    let num = |s: &str| s.parse::<u64>().map_err(|_| bad());
    let (days, rest) = match t.split_once('-') {
        Some((d, rest)) => (Some(num(d)?), rest),
        None => (None, t),
    };
    let parts = rest.split(':').map(num).collect::<Result<Vec<u64>>>()?;
    let secs = match (days, parts.as_slice()) {
        (None, [m]) => m * 60,
        (None, [m, s]) => m * 60 + s,
        (None, [h, m, s]) => h * 3600 + m * 60 + s,
        (Some(d), [h]) => d * 86400 + h * 3600,
        (Some(d), [h, m]) => d * 86400 + h * 3600 + m * 60,
        (Some(d), [h, m, s]) => d * 86400 + h * 3600 + m * 60 + s,
        _ => return Err(bad()),
    };
    if secs == 0 {
        return Err(bad());
    }
    Ok(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "[run]\nname = \"cc2p-b\"\ngame = \"cc2p\"\noptions = [\"--width\", \"6\"]\n\
        token_file = \"unused.token\"\n\n[slurm]\ndir = \"/shared/km/cc2p-b\"\nnodes = 2\ntime = \"2\"\n\
        signal_secs = 30\n";

    fn parse(text: &str) -> Result<SlurmInventory> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("inv.toml");
        std::fs::write(&path, text)?;
        SlurmInventory::load(&path)
    }

    #[test]
    fn time_limits_parse_as_sbatch_reads_them() {
        assert_eq!(time_limit_secs("90").unwrap(), 5400);
        assert_eq!(time_limit_secs("1:30").unwrap(), 90);
        assert_eq!(time_limit_secs("2:00:00").unwrap(), 7200);
        assert_eq!(time_limit_secs("1-12").unwrap(), 129600);
        assert_eq!(time_limit_secs("2-00:30").unwrap(), 174600);
        assert_eq!(time_limit_secs("1-00:00:10").unwrap(), 86410);
        for bad in ["", "x", "1:2:3:4", "0", "-1", "1-"] {
            assert!(time_limit_secs(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_inventory_gives_the_job_its_paths() {
        let inv = parse(BASE).unwrap();
        assert_eq!(inv.run_dir(), "/shared/km/cc2p-b/run");
        assert_eq!(inv.data_dir(), "/shared/km/cc2p-b/workers");
        assert_eq!(inv.script_path(), "/shared/km/cc2p-b/job.sh");
        assert!(inv.slurm.chain);
    }

    #[test]
    fn bad_slurm_inventories_are_refused() {
        let err = |text: &str| format!("{:#}", parse(text).unwrap_err());
        assert!(err(&BASE.replace("nodes = 2", "nodes = 0")).contains("at least 1"));
        assert!(err(&BASE.replace("signal_secs = 30", "signal_secs = 600")).contains("too little"));
        assert!(err(&BASE.replace("/shared/km/cc2p-b", "shared")).contains("absolute"));
        assert!(err(&format!("{BASE}sbatch_options = [\"--time=5\"]\n")).contains("slurm.time"));
        assert!(err(&format!("{BASE}partition = \"a b\"\n")).contains("only letters"));
        assert!(err(&format!("{BASE}nodez = 3\n")).contains("not a valid SLURM inventory"));
        let out = BASE.replace("token_file", "build_args = [\"--out\", \"x\"]\ntoken_file");
        assert!(err(&out).contains("--out"));
    }
}
