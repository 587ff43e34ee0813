//! Class counts over a whole cc2p index space, on all cores.
//! 1. `cargo run --release -p kingmaker-games --example cc2p_census -- M,K[,1]` (default 7,3;
//!    `,1`: the solver-shortcut tip rule).
//! 2. Public API only, so it tells terminals apart itself: won when the player who just moved has
//!    filled its goal (the other's start) with one of its own pieces, else lost for want of a move.

use kingmaker_games::cc2p::{Cc2p, TipRule};
use kingmaker_kernel::{Game, Node};
use rayon::prelude::*;

/// Both players' cells as masks, and the side to move, from `0:<cells>;1:<cells>;<mover>`.
fn placement(text: &str) -> ([u128; 2], usize) {
    let fields: Vec<&str> = text.split(';').collect();
    let cells = |field: &str| -> u128 {
        let list = field.split_once(':').expect("`y:` before the cells").1;
        list.split(',')
            .filter(|c| !c.is_empty())
            .map(|c| 1u128 << c.parse::<u32>().expect("a cell number"))
            .sum()
    };
    let mover = fields[2].parse().expect("the side to move");
    ([cells(fields[0]), cells(fields[1])], mover)
}

fn main() {
    let spec = std::env::args().nth(1).unwrap_or_else(|| "7,3".to_string());
    let nums: Vec<u8> = spec
        .split(',')
        .map(|x| x.trim().parse().expect("M,K[,1]"))
        .collect();
    let rule = if nums.get(2) == Some(&1) {
        TipRule::SolverShortcut
    } else {
        TipRule::Exact
    };
    let game = Cc2p::new(nums[0], nums[1], rule).expect("a supported board");
    let (start, _) = placement(&game.format_position(game.start_index()));
    let goal = [start[1], start[0]];
    let chunk = 1u64 << 20;
    let chunks = game.size().div_ceil(chunk);
    // illegal, live, won (by the player who just moved), stuck (lost for want of a legal
    // move), no move at all (live: passes)
    let total = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let mut t = [0u64; 5];
            let mut kids = Vec::new();
            for i in c * chunk..((c + 1) * chunk).min(game.size()) {
                let slot = match game.node(i) {
                    Node::Illegal => 0,
                    Node::Live { .. } => {
                        if game.successor_count(i) == 1 {
                            kids.clear();
                            game.successors(i, &mut kids);
                            t[4] += (kids == [i ^ 1]) as u64;
                        }
                        1
                    }
                    Node::Terminal { .. } => {
                        let (o, y) = placement(&game.format_position(i));
                        let x = 1 - y;
                        let full = (o[0] | o[1]) & goal[x] == goal[x];
                        if full && o[x] & goal[x] != 0 {
                            2
                        } else {
                            3
                        }
                    }
                };
                t[slot] += 1;
            }
            t
        })
        .reduce(|| [0u64; 5], |a, b| std::array::from_fn(|j| a[j] + b[j]));
    println!(
        "{} {:?}: illegal {}, live {}, terminal (won) {}, terminal (no legal move) {}, \
         passes {}",
        game.name(),
        rule,
        total[0],
        total[1],
        total[2],
        total[3],
        total[4]
    );
}
