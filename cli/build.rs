//! The commit `kingmaker --version` names: `git describe` of the checkout at build time, or
//! `KINGMAKER_COMMIT` from the environment (a build from a source archive, which has no `.git`).

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=KINGMAKER_COMMIT");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(args)
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
        (out.status.success() && !text.is_empty()).then_some(text)
    };
    // Build again when HEAD moves: a commit, a checkout (the worktree's own edits rebuild the
    // crate anyway).
    for path in [
        Some("HEAD".to_string()),
        git(&["symbolic-ref", "-q", "HEAD"]),
    ]
    .into_iter()
    .flatten()
    .chain(["packed-refs".to_string()])
    {
        if let Some(p) = git(&["rev-parse", "--git-path", &path]) {
            let p = root.join(p);
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    let commit = std::env::var("KINGMAKER_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(|| {
            let describe = git(&["describe", "--always", "--tags", "--abbrev=12"])?;
            let date = git(&["log", "-1", "--format=%cd", "--date=short"]);
            Some(match date {
                Some(date) => format!("commit {describe}, {date}"),
                None => format!("commit {describe}"),
            })
        })
        .unwrap_or_else(|| "commit unknown: built outside a git checkout".to_string());
    println!("cargo:rustc-env=KINGMAKER_COMMIT={commit}");
}
