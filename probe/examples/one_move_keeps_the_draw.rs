//! Which of C's moves keep A's draw? Over cc3p tables, the states with `solo` D and C to move.
//! 1. Counted by how many of C's moves keep the draw (the others let A win), with the first few
//!    where exactly one does: the explorer's question filter ("A alone" = D) shows that move alone.
//! 2. `cargo run --release -p kingmaker-probe --example one_move_keeps_the_draw -- RELEASE [SHOW]`

use kingmaker_kernel::{Game, Node};
use kingmaker_probe::games::Notation;
use kingmaker_probe::{Tables, Value};
use kingmaker_tablefmt::Lookup;
use std::collections::BTreeMap;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .ok_or("usage: one_move_keeps_the_draw DIR [SHOW]")?;
    let show: usize = args.next().map_or(Ok(5), |s| s.parse())?;
    let tables = Tables::open(&dir)?;
    let game = tables.game().clone();
    let solo = tables.layer("solo")?;
    let (draw, c) = (Value::Draw.code(), 2u8);
    let mut by_keeping = BTreeMap::<usize, u64>::new();
    let mut examples = Vec::new();
    let block = 1 << 22;
    let mut first = 0u64;
    while first < tables.states() {
        let count = block.min(tables.states() - first) as usize;
        for (i, &v) in tables.values("solo", first, count)?.iter().enumerate() {
            let s = first + i as u64;
            if v != draw || game.node(s) != (Node::Live { mover: c }) {
                continue;
            }
            let moves = Notation::moves(&*game, s);
            let mut keeping = Vec::new();
            for (text, child) in &moves {
                if solo.lookup(*child)?.0 == draw {
                    keeping.push(text.clone());
                }
            }
            *by_keeping.entry(keeping.len()).or_default() += 1;
            if keeping.len() == 1 && examples.len() < show {
                examples.push((game.format_position(s), moves.len(), keeping[0].clone()));
            }
        }
        first += count as u64;
    }
    println!("states with A's draw and C to move, by how many of C's moves keep it:");
    for (k, n) in &by_keeping {
        println!("  {k:>3} keeping: {n}");
    }
    for (position, moves, keep) in examples {
        println!("{position}: {moves} moves, only {keep} keeps A's draw");
    }
    Ok(())
}
