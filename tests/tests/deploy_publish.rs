//! `kingmaker deploy publish` on lab hosts: a run whose layers stayed on its three workers is
//! published where it lies (each host packs and serves its own parts, the manifest lists them at
//! their URLs), then fetched, verified and read without being gathered; a host down and a part
//! served with other bytes are named, never answered from.

use kingmaker_e2e::lab::*;
use kingmaker_e2e::{assert_failed_saying, kingmaker, kingmaker_ok, read_json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const RUN: &str = "pub1";
const WORKERS: [&str; 3] = ["h1", "h2", "h3"];

/// Kills what the test started that outlives the lab's namespaces: the hosts' servers of their
/// parts (also on a failed assertion) and the manifest's server.
struct Servers<'a> {
    lab: &'a Lab,
    manifest: Option<Child>,
}

impl Drop for Servers<'_> {
    fn drop(&mut self) {
        if let Some(mut c) = self.manifest.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        for h in WORKERS {
            let pid = serve_pid(self.lab, h);
            if let Ok(p) = std::fs::read_to_string(&pid) {
                run_quiet(&["kill", p.trim()]);
            }
        }
    }
}

fn serve_pid(lab: &Lab, host: &str) -> PathBuf {
    lab.dir()
        .join(host)
        .join("data")
        .join(RUN)
        .join("published/serve.pid")
}

/// A host's packed part file.
fn packed(lab: &Lab, host: &str, name: &str) -> PathBuf {
    lab.dir()
        .join(host)
        .join("data")
        .join(RUN)
        .join("published/release")
        .join(name)
}

/// Serve `dir` (the manifest alone) over HTTP on loopback; its base URL.
fn serve_manifest(dir: &Path) -> (Child, String) {
    let port = free_port();
    let mut child = Command::new("python3")
        .args([
            "-m",
            "http.server",
            "--bind",
            "127.0.0.1",
            &port.to_string(),
        ])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 -m http.server");
    let url = format!("http://127.0.0.1:{port}/");
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return (child, url);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the manifest's server did not start");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn fails_with(args: &[&str], expect: &[&str]) -> String {
    assert_failed_saying(&kingmaker(args), args, expect)
}

#[test]
fn a_kept_run_is_published_from_its_hosts_then_fetched_verified_and_read_where_it_lies() {
    require_prerequisites();
    let lab = Lab::new(4);
    let mut servers = Servers {
        lab: &lab,
        manifest: None,
    };
    let reference_run = lab.dir().join("ref");
    let reference = reference(&["cc3p", "--level", "1"], &reference_run);
    let inv = lab.inventory(
        RUN,
        "game = \"cc3p\"\noptions = [\"--level\", \"1\"]\n\
         build_args = [\"--keep-layers-on-workers\", \"--shard-size\", \"256\"]",
        &WORKERS,
    );
    deploy_err(&inv, &["publish"], "not complete|no run");
    deploy_ok(&inv, &["provision"]);
    deploy_ok(&inv, &["launch"]);
    wait_status(&inv, "the run to complete", 300, |s| phase(s) == "complete");

    let out = deploy_ok(&inv, &["publish"]);
    let rel = lab.dir().join("releases").join(format!("{RUN}.parts"));
    assert!(out.contains("published in parts"), "{out}");
    // Nothing was gathered: the coordinator holds the list of parts and the manifest, no table.
    let m = read_json(&rel.join("manifest.json"));
    assert_eq!(m["format_version"], 3, "{m:#}");
    assert_eq!(release_digests(&rel), reference, "the published digests");
    for layer in m["layers"].as_array().unwrap() {
        let parts = layer["parts"].as_array().unwrap();
        assert_eq!(parts.len(), 3, "one part per worker: {layer:#}");
    }
    let urls: Vec<&str> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["url"].as_str().expect("every file lies at its host"))
        .collect();
    for (k, h) in WORKERS.iter().enumerate() {
        let ip = &lab.host(h).ip;
        let at = format!("http://{ip}:8090/release/solo.part-{k:04}.kmt");
        assert!(urls.contains(&at.as_str()), "{at} not among {urls:?}");
    }
    // Again, after a teardown stopped the workers whose services read the kept layers for the
    // release's summary: they are started, every part is packed already, and the manifest is the
    // same.
    deploy_ok(&inv, &["teardown"]);
    let again = deploy_ok(&inv, &["publish"]);
    assert!(again.contains("already packed"), "{again}");
    assert_eq!(read_json(&rel.join("manifest.json"))["layers"], m["layers"]);

    // Fetched whole from where it lies, it verifies with the embedded build's digests.
    let (child, url) = serve_manifest(&rel);
    servers.manifest = Some(child);
    let copy = lab.dir().join("copy");
    kingmaker_ok(&["fetch", &url, copy.to_str().unwrap()]);
    kingmaker_ok(&["verify", copy.to_str().unwrap()]);
    assert_eq!(release_digests(&copy), reference);

    // Read where it lies, from the manifest alone: every layer answers as the copy does.
    let here = rel.to_str().unwrap();
    for layer in ["solo", "enable_ab", "enable_ac"] {
        let lines = |dir: &str| kingmaker_ok(&["line", dir, "start", "--layer", layer, "--json"]);
        assert_eq!(lines(here), lines(copy.to_str().unwrap()), "layer {layer}");
    }

    // A host down: fetch and the readers name the part and its host; fetch keeps what it has
    // to resume.
    let h2 = lab.host("h2").ip.clone();
    let pid = std::fs::read_to_string(serve_pid(&lab, "h2")).unwrap();
    assert!(
        run_quiet(&["kill", pid.trim()]),
        "h2's server was not running"
    );
    let copy2 = lab.dir().join("copy2");
    fails_with(
        &["fetch", &url, copy2.to_str().unwrap()],
        &["part-0001", &h2],
    );
    fails_with(&["query", here, "start"], &["part-0001", &h2]);
    // Publishing again serves it again (its parts are packed), and the fetch resumes.
    deploy_ok(&inv, &["publish"]);
    kingmaker_ok(&["fetch", &url, copy2.to_str().unwrap()]);
    assert_eq!(release_digests(&copy2), reference);

    // A part served with other bytes (one byte flipped on h3) is refused.
    let file = packed(&lab, "h3", "solo.part-0002.values.kmt");
    let good = std::fs::read(&file).unwrap();
    let mut bad = good.clone();
    let at = bad.len() - 3;
    bad[at] ^= 0x55;
    std::fs::write(&file, &bad).unwrap();
    let copy3 = lab.dir().join("copy3");
    fails_with(
        &["fetch", &url, copy3.to_str().unwrap()],
        &["solo.part-0002.values.kmt", "sha256"],
    );
    std::fs::write(&file, &good).unwrap();

    // Teardown stops the hosts' servers of their parts.
    let out = deploy_ok(&inv, &["teardown"]);
    assert!(out.contains("stopped serving its published parts"), "{out}");
    drop(servers);
}
