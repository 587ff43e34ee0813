//! A long job on a host (a pack, a publish), started in its own session so that a dropped SSH
//! connection does not kill it, and followed over SSH: its pid, log and exit status lie in the
//! run's directory, and starting it again while it runs follows the running one.

use super::inventory::Host;
use super::ssh::quote;
use super::Deployment;
use anyhow::{bail, Result};
use std::time::Duration;

/// How often a running job is looked at.
const POLL: Duration = Duration::from_secs(10);

/// One job: `command` (a shell command line) run on `host` as `NAME`, with `BASE/NAME.pid`,
/// `NAME.log` and `NAME.exit`.
pub struct Job<'a> {
    pub host: &'a Host,
    /// The directory of its pid, log and exit files.
    pub base: String,
    /// Its name: the stem of those files, and a word of its command line.
    pub name: &'a str,
    pub command: String,
    /// A shell test that is true when the job's result is already there (then it is not run).
    pub done: Option<String>,
    /// What it does, for messages ("packing the release").
    pub doing: &'a str,
    /// The command that starts it again, for messages.
    pub again: &'a str,
}

/// What `start` found.
#[derive(Debug, PartialEq, Eq)]
pub enum Started {
    /// The result was there already.
    Reused,
    /// A job started earlier still runs: follow it.
    Running,
    /// Started now.
    Now,
}

impl Job<'_> {
    fn files(&self) -> (String, String, String) {
        let f = |ext: &str| quote(&format!("{}/{}.{ext}", self.base, self.name));
        (f("log"), f("pid"), f("exit"))
    }

    /// Whether the job's shell still runs: its pid file names a live process whose command line
    /// names the job (not a pid reused after a reboot).
    fn alive(&self) -> String {
        let (_, pid, _) = self.files();
        format!(
            "alive() {{ p=$(cat {pid} 2>/dev/null) && kill -0 \"$p\" 2>/dev/null && grep -q {} /proc/$p/cmdline 2>/dev/null; }}",
            quote(&format!("job={}", self.name))
        )
    }

    /// Start the job unless it runs or its result is there.
    pub fn start(&self, d: &Deployment) -> Result<Started> {
        let (log, pid, exit) = self.files();
        // The detached shell names itself in the pid file, then leaves the status beside it,
        // renamed into place so that a reader never sees it half written.
        let body = format!(
            "echo $$ > {pid}; ({}); echo $? > {exit}.tmp; mv {exit}.tmp {exit}; : job={}",
            self.command, self.name
        );
        let done = match &self.done {
            Some(test) => format!("if {test}; then echo state=reused; exit 0; fi\n"),
            None => String::new(),
        };
        let script = format!(
            "set -e\n\
             {alive}\n\
             if alive && [ ! -e {exit} ]; then echo state=running; exit 0; fi\n\
             {done}\
             mkdir -p {base}\n\
             rm -f {exit} {exit}.tmp {pid}\n\
             setsid nohup sh -c {} > {log} 2>&1 < /dev/null &\n\
             for i in 1 2 3 4 5 6 7 8 9 10; do [ -s {pid} ] && break; sleep 0.5; done\n\
             echo state=started\n",
            quote(&body),
            alive = self.alive(),
            base = quote(&self.base),
        );
        let r = d.ssh.run_ok(
            self.host,
            &format!("starting {}", self.doing),
            &script,
            None,
        )?;
        Ok(match r.field("state") {
            Some("reused") => Started::Reused,
            Some("running") => Started::Running,
            _ => Started::Now,
        })
    }

    /// Follow the job's log until it ends; an error unless it ended well.
    pub fn follow(&self, d: &Deployment) -> Result<()> {
        let (log, _, exit) = self.files();
        // Liveness first, then the status: a job that ends between the two reads as ended.
        let poll = format!(
            "{}\n\
             if alive; then :; elif [ -e {exit} ]; then echo exit=$(cat {exit}); else echo exit=gone; fi\n\
             echo lines=$(wc -l < {log})\n\
             tail -n +$((${{SHOWN:-0}} + 1)) {log} | sed 's/^/log: /'\n",
            self.alive()
        );
        let mut shown = 0usize;
        let host = &self.host.name;
        loop {
            let r = d.ssh.run_ok(
                self.host,
                &format!("looking at {}", self.doing),
                &format!("SHOWN={shown}\n{poll}"),
                None,
            )?;
            for line in r.stdout.lines().filter_map(|l| l.strip_prefix("log: ")) {
                println!("[{host}] {line}");
            }
            shown = r
                .field("lines")
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(shown);
            match r.field("exit") {
                Some("0") => return Ok(()),
                Some("gone") => bail!(
                    "host {host}: {} stopped without finishing (killed, or the host rebooted); \
                     {} starts it again",
                    self.doing,
                    self.again
                ),
                Some(code) => bail!(
                    "host {host}: {} failed (exit {code}); its log: {}/{}.log",
                    self.doing,
                    self.base,
                    self.name
                ),
                None => std::thread::sleep(POLL),
            }
        }
    }
}
