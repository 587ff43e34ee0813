//! What an operator reads on the way from a build to a fetched release: `--version` names the
//! commit, the worker's fault-rehearsal option is listed, `query` says whose turn it is once,
//! counts read in the singular when there is one, and `pack` and `fetch` report progress with
//! the time left on stderr (stdout unchanged).

use kingmaker_e2e::{bin, kingmaker, kingmaker_ok, path_str, serve_files};
use std::process::Command;

#[test]
fn version_names_the_commit_and_the_rehearsal_option_is_listed() {
    let version = kingmaker_ok(&["--version"]);
    assert!(
        version.starts_with("kingmaker ") && version.contains(" (commit "),
        "{version}"
    );
    let help = Command::new(bin("kingmaker-worker"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--wave-delay-ms") && help.contains("rehearsed"),
        "{help}"
    );
}

#[test]
fn query_verify_pack_and_fetch_say_it_once_in_the_right_number_with_progress() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    kingmaker_ok(&[
        "build",
        "cc2p",
        "--board",
        "4x4",
        "--pieces",
        "2",
        "--out",
        path_str(&run),
    ]);

    let query = kingmaker_ok(&["query", path_str(&run), "start"]);
    let turns = query.lines().filter(|l| *l == "player 0 to move").count();
    assert_eq!(turns, 1, "the side to move, once:\n{query}");

    // A line for every step of the work (KINGMAKER_PROGRESS_SECS=0): one layer, read three times.
    let rel = tmp.path().join("rel");
    let pack = Command::new(bin("kingmaker"))
        .args(["pack", path_str(&run), "--out", path_str(&rel)])
        .env("KINGMAKER_PROGRESS_SECS", "0")
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&pack.stdout),
        String::from_utf8_lossy(&pack.stderr),
    );
    assert!(pack.status.success(), "{err}");
    assert!(
        err.lines().any(
            |l| l.starts_with("pack: 100.0% (65520 of 65520 states; layer solo: values alone)")
        ),
        "pack reports its progress on stderr:\n{err}"
    );
    assert!(
        out.starts_with("release of cc2p-4x4-2 written to ") && !out.contains("pack: "),
        "{out}"
    );

    let verify = kingmaker_ok(&["verify", path_str(&rel)]);
    assert!(
        verify.contains(" 1 layer of 21,840 states decoded"),
        "{verify}"
    );

    let url = serve_files(rel.clone(), Default::default());
    let copy = tmp.path().join("copy");
    let fetch = Command::new(bin("kingmaker"))
        .args(["fetch", &url, path_str(&copy)])
        .env("KINGMAKER_PROGRESS_SECS", "0")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&fetch.stderr);
    assert!(fetch.status.success(), "{err}");
    assert!(
        err.lines().any(|l| l.starts_with("fetch: 100.0% (")),
        "fetch reports its progress on stderr:\n{err}"
    );
    assert!(kingmaker(&["verify", path_str(&copy)]).status.success());
}
