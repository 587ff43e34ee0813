//! `kingmaker slurm submit`: check the inventory, write the batch script and submit it.

use super::config::SlurmInventory;
use super::script::{batch_script, build_argv};
use super::status::{jobs_of, slurm_command};
use anyhow::{bail, Context, Result};
use std::path::Path;

pub fn run(inv: &SlurmInventory, dry_run: bool) -> Result<()> {
    let argv = build_argv(inv);
    crate::command_line(&kingmaker_games::game_commands())
        .try_get_matches_from(&argv)
        .map_err(|e| {
            anyhow::anyhow!(
                "the build the job would run is not valid ({}): {}",
                argv.join(" "),
                e.render()
            )
        })?;
    let run_dir = inv.run_dir();
    if Path::new(&run_dir).join("summary.json").exists() {
        println!(
            "run {} is complete ({run_dir}/summary.json): nothing to submit",
            inv.job_name()
        );
        return Ok(());
    }
    // A dry run needs no scheduler: it only writes the script.
    let active = if dry_run { Vec::new() } else { jobs_of(inv)? };
    if let Some(job) = active.first() {
        bail!(
            "run {} already has job {} ({}): one job at a time works on a run; see `kingmaker slurm status`, \
             or `kingmaker slurm cancel` first",
            inv.job_name(),
            job.id,
            job.state
        );
    }
    let dir = Path::new(inv.dir());
    std::fs::create_dir_all(dir.join("logs"))
        .with_context(|| format!("creating {}/logs", dir.display()))?;
    let script = inv.script_path();
    let text = batch_script(inv)?;
    write_executable(Path::new(&script), &text)?;
    let resuming = Path::new(&run_dir).join("run.json").exists();
    println!(
        "wrote {script} (the job {} {run_dir})",
        if resuming { "resumes" } else { "builds into" }
    );
    if dry_run {
        println!("not submitted (--dry-run): sbatch --parsable {script}");
        return Ok(());
    }
    let out = slurm_command("sbatch", &["--parsable", &script])?;
    let id = out.trim().split(';').next().unwrap_or_default().to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        bail!("sbatch printed {out:?}, not a job id");
    }
    append_line(Path::new(&inv.jobs_file()), &id)?;
    let inv_path = inv.path.display();
    println!("submitted job {id} (run {})", inv.job_name());
    println!("  its log: {}/slurm-{id}.out", inv.logs_dir());
    println!("  watch:   kingmaker slurm status --inventory {inv_path}");
    println!(
        "  stop:    kingmaker slurm cancel --inventory {inv_path} (checkpoints first); submit again to continue"
    );
    Ok(())
}

fn write_executable(path: &Path, text: &str) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let tmp = path.with_extension("sh.tmp");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

fn append_line(path: &Path, line: &str) -> Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    writeln!(f, "{line}")?;
    Ok(())
}
