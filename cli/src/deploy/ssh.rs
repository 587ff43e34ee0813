//! Remote commands through the system `ssh` and `scp`: keys only (BatchMode), a connect timeout,
//! and the run's own known_hosts file. Scripts travel as the remote command; secrets travel on
//! stdin, never on a command line.

use super::inventory::{Host, Inventory};
use anyhow::{bail, Context, Result};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub struct Ssh {
    known_hosts: PathBuf,
    strict: bool,
    connect_timeout: u64,
    options: Vec<String>,
    identities: Vec<(String, Option<PathBuf>)>,
}

/// A finished remote command.
pub struct Remote {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Remote {
    pub fn ok(&self) -> bool {
        self.code == 0
    }
    /// `key=value` lines of stdout.
    pub fn field(&self, key: &str) -> Option<&str> {
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
    }
}

/// Quote a word for a POSIX shell.
pub fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+%".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl Ssh {
    pub fn new(inv: &Inventory) -> Result<Ssh> {
        let known_hosts = inv.known_hosts();
        if let Some(dir) = known_hosts.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let identities = inv
            .hosts
            .iter()
            .map(|h| {
                (
                    h.name.clone(),
                    h.identity_file.as_deref().map(|p| inv.local_path(p)),
                )
            })
            .collect::<Vec<_>>();
        for (name, id) in &identities {
            if let Some(id) = id {
                if !id.exists() {
                    bail!("host {name}: identity_file {} does not exist", id.display());
                }
            }
        }
        Ok(Ssh {
            known_hosts,
            strict: inv.ssh.strict_host_keys,
            connect_timeout: inv.ssh.connect_timeout_secs.max(1),
            options: inv.ssh.options.clone(),
            identities,
        })
    }

    /// Options shared by ssh and scp.
    fn common(&self, host: &Host) -> Vec<OsString> {
        let mut o: Vec<OsString> = Vec::new();
        let mut opt = |s: String| {
            o.push("-o".into());
            o.push(s.into());
        };
        opt("BatchMode=yes".into());
        opt(format!("ConnectTimeout={}", self.connect_timeout));
        opt(format!("UserKnownHostsFile={}", self.known_hosts.display()));
        opt("GlobalKnownHostsFile=/dev/null".into());
        opt(format!(
            "StrictHostKeyChecking={}",
            if self.strict { "yes" } else { "accept-new" }
        ));
        opt("ServerAliveInterval=15".into());
        opt("ServerAliveCountMax=4".into());
        opt("LogLevel=ERROR".into());
        for extra in &self.options {
            opt(extra.clone());
        }
        if let Some((_, Some(id))) = self.identities.iter().find(|(n, _)| n == &host.name) {
            o.push("-o".into());
            o.push("IdentitiesOnly=yes".into());
            o.push("-i".into());
            o.push(id.into());
        }
        o
    }

    /// Run `script` with `sh` on the host (through `sudo -n` when the host says so), feeding it
    /// `stdin`. A failure to connect is an error; a non-zero exit of the script is not.
    pub fn run(&self, host: &Host, script: &str, stdin: Option<&[u8]>) -> Result<Remote> {
        let sh = format!(
            "{}sh -c {}",
            if host.sudo() { "sudo -n " } else { "" },
            quote(script)
        );
        let mut cmd = Command::new("ssh");
        cmd.args(self.common(host))
            .arg("-p")
            .arg(host.port.to_string())
            .arg(host.target())
            .arg("--")
            .arg(sh);
        cmd.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .context("running ssh (is the OpenSSH client installed?)")?;
        if let Some(data) = stdin {
            let mut pipe = child.stdin.take().expect("piped stdin");
            // A script that exits early closes its stdin: the error shows in its exit status.
            let _ = pipe.write_all(data);
        }
        let out = child.wait_with_output().context("waiting for ssh")?;
        // ssh itself killed by a signal (a status with no exit code): the host was not reached,
        // or the connection was cut; say so rather than `exit -1` with nothing after it.
        if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&out.status) {
            let err = String::from_utf8_lossy(&out.stderr);
            bail!(
                "host {} ({}:{}): the ssh client was killed by signal {signal}{}{}",
                host.name,
                host.address,
                host.port,
                if err.trim().is_empty() { "" } else { ": " },
                err.trim()
            );
        }
        let r = to_remote(out);
        if r.code == 255 {
            bail!("{}", unreachable(host, &r.stderr, &self.known_hosts));
        }
        Ok(r)
    }

    /// Run a script that must succeed; its stdout.
    pub fn run_ok(
        &self,
        host: &Host,
        what: &str,
        script: &str,
        stdin: Option<&[u8]>,
    ) -> Result<Remote> {
        let r = self.run(host, script, stdin)?;
        if !r.ok() {
            let msg = r.stderr.trim();
            bail!(
                "host {}: {what} failed (exit {}){}",
                host.name,
                r.code,
                if msg.is_empty() {
                    String::new()
                } else {
                    format!(": {msg}")
                }
            );
        }
        Ok(r)
    }

    /// Upload a local file to `remote` atomically (a temporary name, then rename) with `mode`.
    pub fn upload(&self, host: &Host, local: &Path, remote: &str, mode: &str) -> Result<()> {
        let data = std::fs::read(local).with_context(|| format!("reading {}", local.display()))?;
        self.upload_bytes(host, &data, remote, mode)
    }

    pub fn upload_bytes(&self, host: &Host, data: &[u8], remote: &str, mode: &str) -> Result<()> {
        let tmp = format!("{remote}.upload-tmp");
        let script = format!(
            "set -e; umask 077; cat > {t}; chmod {mode} {t}; mv -f {t} {r}",
            t = quote(&tmp),
            r = quote(remote),
            mode = quote(mode)
        );
        self.run_ok(host, &format!("writing {remote}"), &script, Some(data))?;
        Ok(())
    }

    /// Copy a remote directory to `local` (which must not exist) with `scp -r`.
    pub fn download_dir(&self, host: &Host, remote: &str, local: &Path) -> Result<()> {
        let mut cmd = Command::new("scp");
        let source = if host.address.contains(':') {
            format!("{}@[{}]:{remote}", host.user, host.address)
        } else {
            format!("{}:{remote}", host.target())
        };
        cmd.args(self.common(host))
            .arg("-r")
            .arg("-q")
            .arg("-P")
            .arg(host.port.to_string())
            .arg(source)
            .arg(local);
        cmd.stdin(Stdio::null());
        let out = cmd
            .output()
            .context("running scp (is the OpenSSH client installed?)")?;
        let r = to_remote(out);
        if !r.ok() {
            bail!(
                "host {}: downloading {remote} failed: {}",
                host.name,
                r.stderr.trim()
            );
        }
        Ok(())
    }

    /// The ssh command line an operator can paste to reach the host (for printed hints).
    pub fn hint(&self, host: &Host) -> String {
        let mut parts = vec!["ssh".to_string()];
        parts.push(format!(
            "-o UserKnownHostsFile={}",
            quote(&self.known_hosts.display().to_string())
        ));
        if let Some((_, Some(id))) = self.identities.iter().find(|(n, _)| n == &host.name) {
            parts.push(format!("-i {}", quote(&id.display().to_string())));
        }
        if host.port != 22 {
            parts.push(format!("-p {}", host.port));
        }
        parts.push(host.target());
        parts.join(" ")
    }
}

fn to_remote(out: Output) -> Remote {
    Remote {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Why ssh could not reach a host, and what to check. A host key that is not the pinned one is
/// not an unreachable host: it is named as such, with the step that pins the new key.
fn unreachable(host: &Host, stderr: &str, known_hosts: &Path) -> String {
    let err = stderr.trim();
    let known = quote(&known_hosts.display().to_string());
    // known_hosts names a host on another port than 22 as [ADDR]:PORT, as ssh-keyscan -p writes.
    let entry = if host.port == 22 {
        host.address.clone()
    } else {
        format!("[{}]:{}", host.address, host.port)
    };
    let keyscan = format!(
        "ssh-keyscan -p {} {} >> {known}",
        host.port,
        quote(&host.address)
    );
    let changed = err.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
        || err.contains("Offending")
        || err.contains("has changed");
    let unknown = err.contains("host key is known for") || err.contains("No matching host key");
    if changed || (err.contains("Host key verification failed") && !unknown) {
        return format!(
            "host {} ({}:{}): its SSH host key changed: the server answers with a key other than the \
             one pinned in {known} (a replaced or reinstalled server, or someone in between). Compare \
             the new key's fingerprint (`ssh-keyscan -p {} {} | ssh-keygen -lf -`) with the one the \
             provider's console shows (cloud-init prints it); if they match, pin the new key: \
             `ssh-keygen -R {} -f {known} && {keyscan}`",
            host.name,
            host.target(),
            host.port,
            host.port,
            quote(&host.address),
            quote(&entry),
        );
    }
    if unknown {
        return format!(
            "host {} ({}:{}): its SSH host key is not in {known}, and strict_host_keys = true refuses \
             an unknown key. Compare its fingerprint (`ssh-keyscan -p {} {} | ssh-keygen -lf -`) with \
             the one the provider's console shows (cloud-init prints it); if they match, pin it: \
             `{keyscan}`",
            host.name,
            host.target(),
            host.port,
            host.port,
            quote(&host.address),
        );
    }
    let advice = if err.contains("Permission denied") {
        "the key was refused: check user and identity_file, and that the public key is in the host's \
         authorized_keys"
    } else if err.contains("timed out") || err.contains("No route") || err.contains("refused") {
        "check that the server is up, its address and port, and that the firewall lets SSH in"
    } else {
        "check address, port, user and identity_file"
    };
    format!(
        "host {} ({}:{}) is unreachable over SSH: {}; {advice}",
        host.name,
        host.target(),
        host.port,
        if err.is_empty() {
            "ssh exited with status 255"
        } else {
            err
        }
    )
}

#[cfg(test)]
mod tests {
    use super::{quote, unreachable};
    use crate::deploy::inventory::Inventory;
    use std::path::Path;

    #[test]
    fn a_changed_host_key_is_not_an_unreachable_host() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inv.toml");
        std::fs::write(
            &path,
            include_str!("../../../deploy/inventory.example.toml"),
        )
        .unwrap();
        let inv = Inventory::load(&path).unwrap();
        let h = inv.workers()[0];
        let known = Path::new("/ops/cc3p-2.known_hosts");
        let changed = unreachable(
            h,
            "@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@\nHost key verification failed.",
            known,
        );
        assert!(changed.contains("its SSH host key changed"), "{changed}");
        assert!(!changed.contains("unreachable"), "{changed}");
        let step = format!(
            "`ssh-keygen -R {a} -f /ops/cc3p-2.known_hosts && ssh-keyscan -p 22 {a} >> /ops/cc3p-2.known_hosts`",
            a = h.address
        );
        assert!(changed.contains(&step), "{changed}");
        let unknown = unreachable(
            h,
            "No ED25519 host key is known for x and you have requested strict checking.\nHost key verification failed.",
            known,
        );
        assert!(
            unknown.contains("is not in /ops/cc3p-2.known_hosts"),
            "{unknown}"
        );
        assert!(!unknown.contains("ssh-keygen -R"), "{unknown}");
        let down = unreachable(
            h,
            "ssh: connect to host x port 22: Connection timed out",
            known,
        );
        assert!(down.contains("is unreachable over SSH"), "{down}");
    }

    #[test]
    fn quoting() {
        assert_eq!(quote("/opt/kingmaker/bin"), "/opt/kingmaker/bin");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }
}
