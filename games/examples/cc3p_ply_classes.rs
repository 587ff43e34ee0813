//! The control classes of the cc3p states first reached at each ply from the start, up to a ply,
//! from a finished `solo` layer file: a second count of `summarize --reachable`'s per-ply census.
//!
//! `cargo run --release -p kingmaker-games --example cc3p_ply_classes -- LEVEL SOLO.kmt PLIES`

use anyhow::{Context, Result};
use kingmaker_games::cc3p::Cc3p;
use kingmaker_kernel::{Game, Node, DRAW, WIN};
use kingmaker_tablefmt::layer::{LayerFile, ValuesPlane};
use std::collections::HashSet;
use std::path::Path;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: cc3p_ply_classes LEVEL SOLO.kmt PLIES";
    let level: u8 = args.get(1).context(usage)?.parse().context(usage)?;
    let file = Path::new(args.get(2).context(usage)?);
    let plies: usize = args.get(3).context(usage)?.parse().context(usage)?;
    let game = Cc3p::new(level)?;
    let solo = LayerFile::open(file)?.values_plane()?;
    println!("ply\tnew\tkingmaker\tsolo_win\tspoiler_draw\tterminal");
    let start = game.start_index();
    let mut seen = HashSet::from([start]);
    let mut ply_states = vec![start];
    let mut children = Vec::new();
    for ply in 0..=plies {
        let mut counts = [0u64; 4];
        for &s in &ply_states {
            counts[class(&game, &solo, s)] += 1;
        }
        let [kingmaker, solo_win, spoiler_draw, terminal] = counts;
        let new = ply_states.len();
        println!("{ply}\t{new}\t{kingmaker}\t{solo_win}\t{spoiler_draw}\t{terminal}");
        // Breadth first, terminal states not expanded (docs/rules.md §1).
        let mut next = Vec::new();
        for &s in &ply_states {
            if !matches!(game.node(s), Node::Live { .. }) {
                continue;
            }
            children.clear();
            game.successors(s, &mut children);
            next.extend(children.iter().filter(|&&c| seen.insert(c)));
        }
        ply_states = next;
    }
    Ok(())
}

/// 0 kingmaker, 1 solo win, 2 spoiler draw, 3 terminal: from the `solo` values of the state as A
/// (itself), as B (rotated twice) and as C (rotated once).
fn class(game: &Cc3p, solo: &ValuesPlane, s: u64) -> usize {
    if !matches!(game.node(s), Node::Live { .. }) {
        return 3;
    }
    let r1 = game.rotate(s);
    let values = [solo.get(s), solo.get(game.rotate(r1)), solo.get(r1)];
    if values.contains(&WIN) {
        1
    } else if values.contains(&DRAW) {
        2
    } else {
        0
    }
}
