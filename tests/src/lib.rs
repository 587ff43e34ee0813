//! Helpers for the end-to-end tests: locate and run the real `kingmaker` and `kingmaker-worker`
//! binaries (built by `cargo build --release --bins` before the tests run; see scripts/test.sh).

pub mod lab;
pub mod parts_release;
pub mod slurm_lab;
mod worker;

pub use worker::{addrs, Worker};

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// Path of a workspace binary: `$KINGMAKER_BIN_DIR/NAME`, or next to the test executable's
/// `deps/` directory (the same cargo profile directory).
pub fn bin(name: &str) -> PathBuf {
    let dir = match std::env::var_os("KINGMAKER_BIN_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            let exe = std::env::current_exe().expect("test executable path");
            exe.parent()
                .and_then(|deps| deps.parent())
                .expect("target profile directory")
                .to_path_buf()
        }
    };
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} not found: build the binaries first (`cargo build --release --bins`, as scripts/test.sh does)",
        path.display()
    );
    path
}

/// `out`, of `kingmaker ARGS`, failed and said each of `expect` (on stdout or stderr); what it
/// said.
#[track_caller]
pub fn assert_failed_saying(out: &Output, args: &[&str], expect: &[&str]) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success(),
        "kingmaker {args:?} should fail:\n{text}"
    );
    for e in expect {
        assert!(
            text.contains(e),
            "kingmaker {args:?}: expected {e:?} in:\n{text}"
        );
    }
    text
}

/// `kingmaker ARGS...`, waited for.
pub fn kingmaker(args: &[&str]) -> Output {
    Command::new(bin("kingmaker"))
        .args(args)
        .output()
        .expect("running kingmaker")
}

/// Fail with the command's exit status and stderr unless it succeeded.
pub fn assert_ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Stdout of a successful `kingmaker ARGS...` (panics with stderr otherwise).
pub fn kingmaker_ok(args: &[&str]) -> String {
    let out = kingmaker(args);
    assert!(
        out.status.success(),
        "kingmaker {args:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// `kingmaker status ARGS...`'s stdout, whatever the run's standing: it exits 0 complete, 3
/// running, 4 stopped (docs/cli.md); any other exit status fails the test.
pub fn kingmaker_status(args: &[&str]) -> String {
    let all: Vec<&str> = std::iter::once("status")
        .chain(args.iter().copied())
        .collect();
    let out = kingmaker(&all);
    assert!(
        matches!(out.status.code(), Some(0 | 3 | 4)),
        "kingmaker {all:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Parse a JSON file.
pub fn read_json(path: &std::path::Path) -> serde_json::Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// Every state's value and depth of every layer of `reference` (a run) is the same in `run`,
/// whose layers may be in one file each or in parts (`collect --in-parts`).
#[track_caller]
pub fn assert_same_states(run: &Path, reference: &Path) {
    use kingmaker_tablefmt::kept::{open_parts, read_kept};
    use kingmaker_tablefmt::layer::{LayerFile, LayerTable};
    let game = read_json(&run.join("run.json"))["spec"].clone();
    let names = layer_names(reference);
    assert!(!names.is_empty(), "{}: no layer", reference.display());
    for name in names {
        let dir = run.join("layers");
        let a = match read_kept(&dir, &name).unwrap() {
            Some(kept) => open_parts(&dir, &kept, &game, None)
                .unwrap()
                .unwrap_or_else(|| panic!("layer {name}: parts missing in {}", dir.display())),
            None => LayerTable::whole(LayerFile::open(&dir.join(format!("{name}.kmt"))).unwrap()),
        };
        let b = LayerTable::whole(
            LayerFile::open(&reference.join("layers").join(format!("{name}.kmt"))).unwrap(),
        );
        assert_eq!(a.states(), b.states(), "layer {name}");
        let mut first = 0u64;
        while first < b.states() {
            let n = (1u64 << 20).min(b.states() - first) as usize;
            let (mut va, mut da, mut vb, mut db) =
                (vec![0u8; n], vec![0u16; n], vec![0u8; n], vec![0u16; n]);
            a.read_states(first, &mut va, &mut da).unwrap();
            b.read_states(first, &mut vb, &mut db).unwrap();
            if let Some(k) = (0..n).find(|&k| (va[k], da[k]) != (vb[k], db[k])) {
                panic!(
                    "layer {name}: state {} has (value, depth) {:?} in {} but {:?} in {}",
                    first + k as u64,
                    (va[k], da[k]),
                    run.display(),
                    (vb[k], db[k]),
                    reference.display()
                );
            }
            first += n as u64;
        }
    }
}

/// The names of a run's finished layers: `RUN/layers/NAME.kmt`, sorted.
pub fn layer_names(run: &std::path::Path) -> Vec<String> {
    let dir = run.join("layers");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").file_name())
        .filter_map(|n| n.to_str()?.strip_suffix(".kmt").map(str::to_string))
        .collect();
    names.sort();
    names
}

/// Two runs hold the same tables: the same layers, and every layer file `layers/NAME.kmt`
/// identical byte for byte. Layer files are deterministic (docs/format.md), so this compares every
/// state's value AND depth. On a difference the first state that differs is named (read with
/// `kingmaker_tablefmt::table::open_table`), or the header/index if every state agrees.
#[track_caller]
pub fn assert_same_tables(run_a: &std::path::Path, run_b: &std::path::Path) {
    let (names_a, names_b) = (layer_names(run_a), layer_names(run_b));
    assert!(
        !names_a.is_empty(),
        "{}: no finished layer in layers/",
        run_a.display()
    );
    assert_eq!(
        names_a,
        names_b,
        "{} and {} hold different layers",
        run_a.display(),
        run_b.display()
    );
    for name in &names_a {
        let file = format!("{name}.kmt");
        let a = std::fs::read(run_a.join("layers").join(&file)).unwrap();
        let b = std::fs::read(run_b.join("layers").join(&file)).unwrap();
        if a == b {
            continue;
        }
        use kingmaker_tablefmt::layer::LayerFile;
        let ta = LayerFile::open(&run_a.join("layers").join(&file)).unwrap();
        let tb = LayerFile::open(&run_b.join("layers").join(&file)).unwrap();
        assert_eq!(
            ta.identity(),
            tb.identity(),
            "layer {name}: the files hold different layers"
        );
        assert_eq!(
            ta.states(),
            tb.states(),
            "layer {name}: state counts differ"
        );
        for i in 0..ta.states() {
            let (x, y) = (ta.get(i).unwrap(), tb.get(i).unwrap());
            assert_eq!(
                x,
                y,
                "layer {name}: state {i} has (value, depth) {x:?} in {} but {y:?} in {}",
                run_a.display(),
                run_b.display()
            );
        }
        panic!(
            "layer {name}: every state agrees but {file} differs byte for byte between {} and {}",
            run_a.display(),
            run_b.display()
        );
    }
}

/// A reference run built once per test process into `base/NAME-PID` (`base` is the test's
/// `CARGO_TARGET_TMPDIR`): `kingmaker build ARGS... --out` there. Leftovers of earlier test
/// processes (`base/NAME-PID` whose process is gone) are removed first.
pub fn reference_build(base: &std::path::Path, name: &str, args: &[&str]) -> PathBuf {
    std::fs::create_dir_all(base).unwrap();
    for entry in std::fs::read_dir(base).unwrap().flatten() {
        let file = entry.file_name();
        let Some(pid) = file
            .to_str()
            .and_then(|f| f.strip_prefix(name)?.strip_prefix('-'))
        else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !std::path::Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let dir = base.join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut all = vec!["build"];
    all.extend_from_slice(args);
    all.extend(["--out", dir.to_str().unwrap()]);
    kingmaker_ok(&all);
    dir
}

/// What a run's `progress.json` says: (pid of the process that wrote it, layer, wave).
pub fn progress(run: &std::path::Path) -> Option<(u32, String, u64)> {
    let text = std::fs::read_to_string(run.join("progress.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some((
        v["pid"].as_u64()? as u32,
        v["layer"].as_str()?.to_string(),
        v["wave"].as_u64()?,
    ))
}

/// Wait until the coordinator `child` (a `kingmaker build` or `resume` into `run`) has written
/// progress.json for wave `wave` or later (of `layer`, or of any layer when None; a layer of
/// `later` also counts). True when seen; false when the process ended first. A hang guard of
/// `limit` fails the test. Polls every 2 ms, so a kill right after it lands in the next wave.
pub fn wait_for_wave(
    run: &std::path::Path,
    child: &mut std::process::Child,
    layer: Option<&str>,
    wave: u64,
    limit: std::time::Duration,
) -> bool {
    let start = std::time::Instant::now();
    loop {
        if let Some((pid, l, w)) = progress(run) {
            if pid == child.id() && w >= wave && layer.is_none_or(|name| name == l) {
                return true;
            }
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        assert!(
            start.elapsed() < limit,
            "no wave {wave} in {} after {limit:?} (progress: {:?})",
            run.display(),
            progress(run)
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// A pseudo-random sequence in `lo..hi`, seeded from the clock or from `KINGMAKER_TEST_SEED`
/// (the seed is printed, so a failure can be replayed).
pub fn seeded(count: usize, lo: u64, hi: u64) -> Vec<u64> {
    let mut x: u64 = std::env::var("KINGMAKER_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("kill moments seeded with KINGMAKER_TEST_SEED={x}");
    let out: Vec<u64> = (0..count)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            lo + (x >> 33) % (hi - lo).max(1)
        })
        .collect();
    eprintln!("kill moments: {out:?}");
    out
}

/// A crash test's proof that it crashed something: at least `share_num/share_den` of its
/// `rounds` interrupted a run before it finished (`interrupted` of them did).
#[track_caller]
pub fn assert_interrupted_share(
    interrupted: usize,
    rounds: usize,
    share_num: usize,
    share_den: usize,
) {
    assert!(
        interrupted * share_den >= rounds * share_num && interrupted > 0,
        "only {interrupted} of {rounds} kills landed before the run finished (at least \
         {share_num}/{share_den} must): the test did not test resuming"
    );
}

/// The first of `names` found on PATH.
pub fn find_program(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in names {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Chromium and chromedriver for the page tests; a test that needs them fails, naming what to
/// install, when they are missing.
pub fn browser_programs() -> (PathBuf, PathBuf) {
    let chromium = find_program(&["chromium", "chromium-browser"]);
    let driver = find_program(&["chromedriver"]);
    let (Some(chromium), Some(driver)) = (chromium, driver) else {
        panic!(
            "Chromium and chromedriver are needed for the browser test and were not found on PATH: \
             install Debian's packages with `apt-get install chromium chromium-driver` (scripts/setup.sh --tests does)"
        );
    };
    (chromium, driver)
}

/// Where tests leave files worth looking at (screenshots): `target/test-artifacts/`.
pub fn artifacts_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("target")
        });
    let dir = target.join("test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A child process killed when the test ends, however it ends.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `kingmaker serve DIR --listen 127.0.0.1:0`, killed on drop; its base URL.
pub fn start_serve(dir: &std::path::Path) -> (Killed, String) {
    start_serve_at(dir, "127.0.0.1:0")
}

/// `kingmaker serve DIR --listen LISTEN` (a loopback address), killed on drop; its base URL.
pub fn start_serve_at(dir: &std::path::Path, listen: &str) -> (Killed, String) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(bin("kingmaker"))
        .arg("serve")
        .arg(dir)
        .args(["--listen", listen])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .expect("starting kingmaker serve");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.split_whitespace().last().unwrap_or("").to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "serve said {line:?}");
    (Killed(child), url)
}

/// A raw GET of `path` from `base` (`http://HOST:PORT/` or `HOST:PORT`) over a fresh connection,
/// closed after the answer: the whole response, head and body (paths an HTTP client would
/// normalise are sent as they are).
pub fn raw_get(base: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).unwrap();
    out
}

/// [`raw_get`] split: (status line, body).
pub fn http_get(base: &str, path: &str) -> (String, String) {
    let out = raw_get(base, path);
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    (head.lines().next().unwrap_or("").to_string(), body.into())
}

/// A headless Chromium driven through chromedriver (both started here, stopped on drop):
/// `session(tmp, "1280,900")` gives the running driver and a connected WebDriver client.
pub async fn browser_session(
    tmp: &std::path::Path,
    window_size: &str,
) -> (Killed, fantoccini::Client) {
    use std::time::{Duration, Instant};
    let (chromium, driver) = browser_programs();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Killed(
        std::process::Command::new(&driver)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("starting chromedriver"),
    );
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "chromedriver did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let profile = tmp.join("chromium-profile");
    let mut caps = serde_json::Map::new();
    caps.insert("browserName".into(), "chrome".into());
    caps.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({
            "binary": chromium,
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run",
                "--disable-dev-shm-usage", format!("--window-size={window_size}"),
                format!("--user-data-dir={}", profile.display()),
            ],
        }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    let client = fantoccini::ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a chromedriver session");
    (child, client)
}

/// Wait (up to 15 s) for an element matching `css`.
pub async fn wait_for(client: &fantoccini::Client, css: &str) -> fantoccini::elements::Element {
    client
        .wait()
        .at_most(std::time::Duration::from_secs(15))
        .for_element(fantoccini::Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("waiting for {css}: {e}"))
}

/// A process held with SIGSTOP until this guard is dropped (then SIGCONT), pass or fail.
/// [`Stopped::hold`] returns once every thread of the process is stopped, so nothing it does
/// (write progress.json, answer a call, close a wave) can happen until the guard goes.
pub struct Stopped(u32);

impl Stopped {
    pub fn hold(pid: u32) -> Stopped {
        send_signal(pid, libc::SIGSTOP);
        let held = Stopped(pid);
        let start = std::time::Instant::now();
        let tasks = Path::new("/proc").join(pid.to_string()).join("task");
        loop {
            let states: Vec<char> = std::fs::read_dir(&tasks)
                .unwrap_or_else(|e| panic!("reading {}: {e}", tasks.display()))
                .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("stat")).ok())
                .filter_map(|stat| stat.rsplit_once(')')?.1.trim_start().chars().next())
                .collect();
            if !states.is_empty() && states.iter().all(|&c| c == 'T' || c == 't') {
                return held;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "process {pid} did not stop: thread states {states:?}"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        // SAFETY: a plain system call; the process may be gone already.
        unsafe { libc::kill(self.0 as libc::pid_t, libc::SIGCONT) };
    }
}

/// Send signal `sig` to process `pid` (which must exist).
pub fn send_signal(pid: u32, sig: libc::c_int) {
    // SAFETY: a plain system call.
    let r = unsafe { libc::kill(pid as libc::pid_t, sig) };
    assert_eq!(
        r,
        0,
        "kill({pid}, {sig}): {}",
        std::io::Error::last_os_error()
    );
}

/// `GET http://ADDR/metrics` (Prometheus text): the body, or why there is none (nothing listens
/// any more, a status other than 200...).
pub fn scrape_metrics(addr: &str) -> Result<String, String> {
    let url = format!("http://{addr}/metrics");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    agent
        .get(&url)
        .call()
        .and_then(|mut answer| answer.body_mut().read_to_string())
        .map_err(|e| format!("GET {url}: {e}"))
}

/// The value of the sample `name` (no labels) in Prometheus text, if present.
pub fn metric(text: &str, name: &str) -> Option<u64> {
    text.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
        let (n, v) = l.split_once(' ')?;
        (n == name).then(|| v.trim().parse().ok())?
    })
}

/// A packed level-1 cc3p release in `tmp/rel` (built in `tmp/run`).
pub fn packed_release(tmp: &Path) -> PathBuf {
    let (run, rel) = (tmp.join("run"), tmp.join("rel"));
    let (run_s, rel_s) = (run.to_str().unwrap(), rel.to_str().unwrap());
    kingmaker_ok(&["build", "cc3p", "--level", "1", "--out", run_s]);
    kingmaker_ok(&["pack", run_s, "--out", rel_s]);
    rel
}

/// A path as `&str` for an argument list (panics if it is not UTF-8).
pub fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The token of the workers of [`slow_workers`] and of the builds of [`distributed`].
pub const TOKEN: &str = "e2e-coverage-token";
/// A hang guard for waiting on an event: generous, never a judge of speed.
pub const HANG: Duration = Duration::from_secs(120);
/// The game of the held distributed builds: cc3p level 1 (1,662 states, ~12 waves a layer).
pub const CC3P: [&str; 3] = ["cc3p", "--level", "1"];

/// The embedded build of cc3p level 1 in `base` (a test's `CARGO_TARGET_TMPDIR`), once a binary.
pub fn cc3p_reference_in(base: &Path) -> &'static Path {
    static REF: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    REF.get_or_init(|| reference_build(base, "coverage-cc3p", &CC3P))
}

/// The run ended with the reference's tables (values and depths) and summary.
#[track_caller]
pub fn assert_like(run: &Path, reference: &Path, what: &str) {
    assert_same_tables(run, reference);
    assert_eq!(
        read_json(&run.join("summary.json"))["layers"],
        read_json(&reference.join("summary.json"))["layers"],
        "{what}"
    );
}

/// Two workers whose every wave starts 40 ms late (cc3p level 1 then lasts about 2 s).
pub fn slow_workers() -> Vec<Worker> {
    (0..2)
        .map(|_| Worker::start(TOKEN, &["--wave-delay-ms", "40"]))
        .collect()
}

/// `kingmaker ARGS...` in the background, stderr into `log` (stdout beside it), killed on drop.
pub fn spawn(args: &[String], log: &Path) -> Killed {
    Killed(
        Command::new(bin("kingmaker"))
            .args(args)
            .stdout(std::fs::File::create(log.with_extension("out")).unwrap())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .expect("starting kingmaker"),
    )
}

/// cc3p level 1 on [`slow_workers`] into `dir/run` (log `run.log`), checkpointed every wave.
pub fn checkpointed_distributed_build(dir: &Path) -> (Vec<Worker>, PathBuf, PathBuf, Killed) {
    let workers = slow_workers();
    let (run, log) = (dir.join("run"), dir.join("run.log"));
    let build = spawn(
        &distributed(
            &CC3P,
            &workers,
            &run,
            &["--shard-size", "256", "--checkpoint-every-waves", "1"],
        ),
        &log,
    );
    (workers, run, log, build)
}

/// `build GAME... --out RUN --workers ... --worker-timeout 60 EXTRA...`: time to hold a worker.
pub fn distributed(game: &[&str], workers: &[Worker], run: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["build"]
        .iter()
        .chain(game)
        .map(|s| s.to_string())
        .collect();
    args.extend([
        "--out".into(),
        run.display().to_string(),
        "--workers".into(),
        addrs(workers),
        "--token".into(),
        TOKEN.into(),
        "--worker-timeout".into(),
        "60".into(),
    ]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// Wait for the build to end (a hang guard fails the test, with its log).
pub fn finish(build: &mut Killed, log: &Path) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = build.0.try_wait().unwrap() {
            return status;
        }
        assert!(
            start.elapsed() < HANG,
            "the build did not end in {HANG:?}:\n{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// What a process has logged to the file `log` so far (empty if there is none).
pub fn log_text(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

/// A number as the CLI prints it: 4947100130 -> "4,947,100,130" (the CLI's own function).
pub use kingmaker_tablefmt::release::manifest::thousands as grouped;

/// A tmpfs the test mounted (it needs root, as CI and the development machines have), unmounted
/// lazily on drop (a process may still hold it).
pub struct Tmpfs(pub PathBuf);

impl Tmpfs {
    /// A tmpfs of `bytes` (rounded up to pages) at `dir`, made if missing.
    pub fn mount(dir: &Path, bytes: u64) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok,
            "mounting a tmpfs at {} failed: the test needs root (as in CI)",
            dir.display()
        );
        Tmpfs(dir.to_path_buf())
    }

    /// Grow or shrink it to `bytes`.
    pub fn resize(&self, bytes: u64) {
        let ok = Command::new("mount")
            .args(["-o", &format!("remount,size={bytes}")])
            .arg(&self.0)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "resizing the tmpfs at {}", self.0.display());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// `kingmaker ARGS...` in a memory cgroup (v1, counting the page cache) of `limit` bytes, through
/// scripts/in-cgroup.sh: whether it succeeded, and its stderr.
pub fn kingmaker_in_cgroup(name: &str, limit: u64, args: &[&str]) -> (bool, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/in-cgroup.sh");
    let group = format!("e2e-{}-{name}", std::process::id());
    let out = Command::new(script)
        .args([&group, &limit.to_string(), "--"])
        .arg(bin("kingmaker"))
        .args(args)
        .output()
        .expect("running scripts/in-cgroup.sh");
    let _ = std::fs::remove_dir(format!("/sys/fs/cgroup/memory/kingmaker-{group}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A static HTTP server of the plain file names in `root` at `http://ADDR/rel/` (one request per
/// connection); each request's line and `Authorization` header are logged in `seen`.
pub fn serve_files(root: PathBuf, seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>) -> String {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/rel/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            let _ = reader.read_line(&mut request);
            let mut auth = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if line.to_ascii_lowercase().starts_with("authorization:") {
                    auth = line.trim().to_string();
                }
            }
            seen.lock()
                .unwrap()
                .push(format!("{} {auth}", request.trim()));
            let path = request.split_whitespace().nth(1).unwrap_or("/");
            let body = path
                .strip_prefix("/rel/")
                .filter(|n| !n.is_empty() && !n.contains('/'))
                .and_then(|n| std::fs::read(root.join(n)).ok());
            let _ = match body {
                Some(b) => write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    b.len()
                )
                .and_then(|()| stream.write_all(&b)),
                None => write!(
                    stream,
                    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                ),
            };
        }
    });
    url
}

#[cfg(test)]
mod tests {
    use super::*;
    use kingmaker_tablefmt::layer::LayerIdentity;
    use kingmaker_tablefmt::table::TableWriter;

    /// `scrape_metrics` against a one-answer server on loopback: the body of a 200, an error
    /// naming the URL and the status otherwise, and an error when nothing listens.
    #[test]
    fn metrics_are_scraped_and_a_bad_answer_is_named() {
        use std::io::{Read, Write};
        let answer_once = |status: &'static str| {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = listener.local_addr().unwrap().to_string();
            std::thread::spawn(move || {
                let (mut stream, _) = listener.accept().unwrap();
                let mut head = [0u8; 4096];
                let _ = stream.read(&mut head);
                let body = "# TYPE kingmaker_x counter\nkingmaker_x_total 3\n";
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
            addr
        };
        let text = scrape_metrics(&answer_once("200 OK")).unwrap();
        assert_eq!(metric(&text, "kingmaker_x_total"), Some(3), "{text}");
        let addr = answer_once("503 Service Unavailable");
        let err = scrape_metrics(&addr).unwrap_err();
        assert!(
            err.contains(&format!("http://{addr}/metrics")) && err.contains("503"),
            "{err}"
        );
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = closed.local_addr().unwrap().to_string();
        drop(closed);
        assert!(scrape_metrics(&addr).is_err());
    }

    /// A run directory holding one layer `solo` with these values and depths.
    fn run_with(dir: &std::path::Path, values: &[u8], depth: &[u16]) {
        let layers = dir.join("layers");
        std::fs::create_dir_all(&layers).unwrap();
        let identity = LayerIdentity::new(serde_json::json!({"game": "test"}), "solo");
        let mut w = TableWriter::create(&layers, &identity, values.len() as u64).unwrap();
        w.append(values, depth).unwrap();
        w.finish().unwrap();
    }

    #[test]
    fn same_tables_pass() {
        let tmp = tempfile::tempdir().unwrap();
        let values: Vec<u8> = (0..1000).map(|i| (i % 4) as u8).collect();
        let depth: Vec<u16> = (0..1000).map(|i| (i % 4 != 0) as u16 * (i % 7)).collect();
        run_with(&tmp.path().join("a"), &values, &depth);
        run_with(&tmp.path().join("b"), &values, &depth);
        assert_same_tables(&tmp.path().join("a"), &tmp.path().join("b"));
    }

    /// Equal values (so equal digests and counts) but one depth apart: the tables differ, and the
    /// state is named.
    #[test]
    #[should_panic(expected = "state 500 has (value, depth) (1, 3)")]
    fn a_depth_alone_differing_is_caught() {
        let tmp = tempfile::tempdir().unwrap();
        let values = vec![1u8; 1000];
        let depth = vec![3u16; 1000];
        let mut other = depth.clone();
        other[500] = 5;
        run_with(&tmp.path().join("a"), &values, &depth);
        run_with(&tmp.path().join("b"), &values, &other);
        assert_same_tables(&tmp.path().join("a"), &tmp.path().join("b"));
    }
}
