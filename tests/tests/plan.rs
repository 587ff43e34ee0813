//! `kingmaker plan`: the bill of a job on this machine and on an inventory's servers, its rates
//! measured once and reused, and the refusal of servers that cannot hold the job.

use kingmaker_e2e::kingmaker;
use std::path::Path;

fn plan(args: &[&str], calibration: &Path) -> (bool, String, String) {
    let mut all = vec!["plan"];
    all.extend_from_slice(args);
    all.extend(["--calibration", calibration.to_str().unwrap()]);
    let out = kingmaker(&all);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// An inventory of a coordinator and `workers` workers of the given size.
fn inventory(dir: &Path, game: &[&str], workers: usize, memory: &str, disk: &str) -> String {
    let options: Vec<String> = game[1..].iter().map(|o| format!("{o:?}")).collect();
    let mut text = format!(
        "[run]\nname = \"p\"\ngame = {:?}\noptions = [{}]\ntoken_file = \"p.token\"\n\n\
         [[host]]\nname = \"coord\"\nrole = \"coordinator\"\naddress = \"10.0.0.1\"\n\
         private_address = \"10.0.0.1\"\ncores = 4\nmemory = \"16GiB\"\ndisk = \"100GiB\"\n",
        game[0],
        options.join(", ")
    );
    for w in 1..=workers {
        text += &format!(
            "\n[[host]]\nname = \"w{w}\"\nrole = \"worker\"\naddress = \"10.0.0.{}\"\n\
             private_address = \"10.0.0.{}\"\ncores = 32\nmemory = {memory:?}\ndisk = {disk:?}\n",
            w + 1,
            w + 1
        );
    }
    let path = dir.join(format!("inv-{workers}-{memory}-{disk}.toml"));
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// On this machine: the JSON has every field an operator scripts against, the rates are measured
/// the first time and read from the calibration the second, and the text names each source.
#[test]
fn the_bill_on_this_machine_names_its_sources_and_keeps_its_rates() {
    let tmp = tempfile::tempdir().unwrap();
    let cal = tmp.path().join("calibration.json");
    let (ok, out, err) = plan(&["toppen", "--json"], &cal);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for key in [
        "states",
        "solved_states",
        "cpu_hours",
        "wall_hours",
        "wire_bytes",
        "table_bytes",
    ] {
        assert!(v[key].is_number(), "{key} in {v}");
    }
    assert_eq!(v["states"], 3_428_208);
    assert_eq!(v["wire_bytes"], 0, "one machine sends nothing");
    let host = &v["hosts"][0];
    assert!(host["name"].is_string() && host["peak_memory_bytes"].as_u64() > Some(0));
    assert!(host["peak_disk_bytes"].as_u64() > Some(0));
    assert_eq!(v["rates"]["moves_source"], "measured");
    assert_eq!(v["fits"], true);
    assert!(cal.exists());
    let (ok, text, err) = plan(&["toppen"], &cal);
    assert!(ok, "{err}");
    assert!(
        text.contains("[calibrated here]") && !text.contains("[measured here]"),
        "{text}"
    );
    // --calibrate measures again.
    let (ok, text, _) = plan(&["toppen", "--calibrate"], &cal);
    assert!(ok && text.contains("[measured here]"), "{text}");
}

/// An inventory whose workers hold the job is priced per host, with the wire between them; one
/// whose workers lack disk or memory is refused, naming each host and what it lacks; hosts
/// without sizes are named too.
#[test]
fn an_inventory_is_priced_per_host_and_refused_when_it_cannot_hold_the_job() {
    let tmp = tempfile::tempdir().unwrap();
    let cal = tmp.path().join("calibration.json");
    let game = ["connect4", "--board", "5x4"];
    let fits = inventory(tmp.path(), &game, 3, "8GiB", "10GiB");
    let (ok, out, err) = plan(&["--inventory", &fits, "--json"], &cal);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["hosts"].as_array().unwrap().len(), 4);
    assert!(
        v["wire_bytes"].as_u64() > Some(0),
        "workers exchange updates: {v}"
    );
    // What carries the wire, summed: updates, gathered layers (no replica: the job takes less
    // than a checkpoint's ten minutes).
    let w = &v["wire"];
    let part = |k: &str| w[k].as_u64().unwrap();
    assert!(part("updates") > 0 && part("gathered") > 0, "{w}");
    assert_eq!(
        (part("replicas"), w["checkpoints_per_layer"].as_f64()),
        (0, Some(0.0))
    );
    assert_eq!(
        part("updates") + part("replicas") + part("expansion") + part("gathered"),
        v["wire_bytes"].as_u64().unwrap()
    );
    assert_eq!(v["hosts"][1]["name"], "w1");
    assert!(v["hosts"][1]["cells_bytes"].as_u64() > Some(0));
    assert_eq!(
        v["hosts"][0]["cells_bytes"], 0,
        "the coordinator holds no cells"
    );

    let small = inventory(tmp.path(), &game, 2, "8GiB", "1KiB");
    let (ok, _, err) = plan(&["--inventory", &small], &cal);
    assert!(!ok);
    assert!(
        err.contains("w1 (worker): disk: needs up to")
            && err.contains("w2 (worker)")
            && !err.contains("coord (coordinator)"),
        "{err}"
    );
    let tiny = inventory(tmp.path(), &game, 1, "16MiB", "10GiB");
    let (ok, _, err) = plan(&["--inventory", &tiny], &cal);
    assert!(!ok && err.contains("w1 (worker): memory"), "{err}");

    let no_sizes = tmp.path().join("no-sizes.toml");
    let text = std::fs::read_to_string(&fits)
        .unwrap()
        .replace("cores = 32\nmemory = \"8GiB\"\ndisk = \"10GiB\"\n", "");
    std::fs::write(&no_sizes, text).unwrap();
    let (ok, _, err) = plan(&["--inventory", no_sizes.to_str().unwrap()], &cal);
    assert!(
        !ok && err.contains("hosts w1, w2, w3 give no size"),
        "{err}"
    );
    let bad = inventory(tmp.path(), &game, 1, "lots", "10GiB");
    let (ok, _, err) = plan(&["--inventory", &bad], &cal);
    assert!(!ok && err.contains("memory"), "{err}");
}

/// Without a game or an inventory there is nothing to plan.
#[test]
fn a_plan_needs_a_game() {
    let tmp = tempfile::tempdir().unwrap();
    let (ok, _, err) = plan(&[], &tmp.path().join("c.json"));
    assert!(!ok && err.contains("name a game"), "{err}");
}
