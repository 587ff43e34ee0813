//! `kingmaker-worker` processes started by the tests: on loopback, on a free port, in a memory
//! cgroup when asked, killed and reaped on drop.

use crate::bin;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A `kingmaker-worker` process on loopback, started by a test on a free port (or a given one)
/// with a token in its environment, and killed (and reaped) on drop, pass or fail.
pub struct Worker {
    child: Option<Child>,
    /// `HOST:PORT` the worker listens on (it prints it when it starts).
    pub addr: String,
    /// Its metrics endpoint (`HOST:PORT`), when started with `--metrics`.
    pub metrics: Option<String>,
    /// Its data directory.
    pub data: PathBuf,
    log: PathBuf,
    token: String,
    /// The temporary directory of [`Worker::start`], removed after the worker is killed.
    _dir: Option<tempfile::TempDir>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

impl Worker {
    /// A worker in a temporary directory of its own (data and log inside, removed on drop):
    /// `--listen 127.0.0.1:0 --threads 1`, `token` in its environment, and `extra` arguments.
    pub fn start(token: &str, extra: &[&str]) -> Worker {
        Worker::start_in(token, None, extra)
    }

    /// [`Worker::start`] inside the memory cgroup (v1) `group` (made with `limit` bytes, page
    /// cache and swap counted, and left for the caller to remove), joined before the worker
    /// starts, so that its default budget comes from the limit.
    pub fn start_in_cgroup(token: &str, group: &str, limit: u64, extra: &[&str]) -> Worker {
        let dir = PathBuf::from("/sys/fs/cgroup/memory").join(group);
        std::fs::create_dir_all(&dir).expect("a writable cgroup v1 memory hierarchy");
        let _ = std::fs::write(dir.join("memory.memsw.limit_in_bytes"), "-1");
        std::fs::write(dir.join("memory.limit_in_bytes"), limit.to_string()).unwrap();
        let _ = std::fs::write(dir.join("memory.memsw.limit_in_bytes"), limit.to_string());
        Worker::start_in(token, Some(&dir), extra)
    }

    fn start_in(token: &str, cgroup: Option<&Path>, extra: &[&str]) -> Worker {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("worker.log");
        let data = dir.path().join("data");
        let mut worker = Worker::spawn_in(token, &data, "127.0.0.1:0", log, extra, cgroup);
        worker._dir = Some(dir);
        worker
    }

    /// A worker on the data directory `data`, which outlives it (so it can be restarted there),
    /// listening on `listen` (port 0: a free one); its log is appended to `data.log`.
    pub fn start_on(token: &str, data: &Path, listen: &str) -> Worker {
        Worker::spawn(token, data, listen, data.with_extension("log"), &[])
    }

    fn spawn(token: &str, data: &Path, listen: &str, log: PathBuf, extra: &[&str]) -> Worker {
        Worker::spawn_in(token, data, listen, log, extra, None)
    }

    fn spawn_in(
        token: &str,
        data: &Path,
        listen: &str,
        log: PathBuf,
        extra: &[&str],
        cgroup: Option<&Path>,
    ) -> Worker {
        // In a cgroup: a shell joins it, then becomes the worker (the same process).
        let mut command = match cgroup {
            None => Command::new(bin("kingmaker-worker")),
            Some(group) => {
                let mut c = Command::new("bash");
                c.args(["-c", "echo $$ > \"$0/cgroup.procs\" && exec \"$@\""])
                    .arg(group)
                    .arg(bin("kingmaker-worker"));
                c
            }
        };
        let mut child = command
            .args(["--listen", listen, "--data-dir"])
            .arg(data)
            .args(["--threads", "1"])
            .args(extra)
            .env("KINGMAKER_TOKEN", token)
            .stdout(Stdio::piped())
            .stderr(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&log)
                    .unwrap(),
            )
            .spawn()
            .expect("starting kingmaker-worker");
        // The worker prints "... listening on ADDR" (and "metrics at http://ADDR/metrics").
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut worker = Worker {
            child: Some(child),
            addr: String::new(),
            metrics: None,
            data: data.to_path_buf(),
            log,
            token: token.to_string(),
            _dir: None,
        };
        let wants_metrics = extra.contains(&"--metrics");
        while worker.addr.is_empty() || (wants_metrics && worker.metrics.is_none()) {
            let line = rx
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| {
                    panic!(
                        "the worker did not say where it listens; its log:\n{}",
                        worker.log_text()
                    )
                });
            if let Some(addr) = line.strip_prefix("kingmaker-worker listening on ") {
                worker.addr = addr.trim().to_string();
            } else if let Some(url) = line.strip_prefix("metrics at http://") {
                worker.metrics = Some(url.trim_end_matches("/metrics").to_string());
            }
        }
        worker
    }

    /// The worker's process id (for `kill -STOP`); panics once it was killed.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("a running worker").id()
    }

    /// SIGKILL (after SIGCONT, should a test have stopped it), and reap.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-CONT", &child.id().to_string()])
                .status();
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Start again on the same address and data directory (after [`Worker::kill`]).
    pub fn restart(&mut self) {
        self.kill();
        let mut again = Worker::spawn(&self.token, &self.data, &self.addr, self.log.clone(), &[]);
        self.child = again.child.take();
        assert_eq!(again.addr, self.addr);
    }

    /// What the worker logged so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// The workers' addresses as `--workers` takes them: `HOST:PORT,HOST:PORT,...`.
pub fn addrs(workers: &[Worker]) -> String {
    workers
        .iter()
        .map(|w| w.addr.as_str())
        .collect::<Vec<_>>()
        .join(",")
}
