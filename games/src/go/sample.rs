//! Random legal Go states, the one sampler of the Go tests and the move-rate bench.

use super::{Board, Flag, Go, State};
use kingmaker_kernel::Game;
use rand::Rng;

/// About `count + count / 4` random legal states of `g`, a reproducible function of `rng`'s
/// sequence: `count / 2` walks from the empty board, random boards with every legal flag up to
/// `count`, then up to `count / 4` ko shapes (fewer where none can be made).
pub fn random_states<R: Rng + ?Sized>(g: &Go, rng: &mut R, count: usize) -> Vec<u64> {
    let geom = g.geometry();
    let mut out = Vec::new();
    let mut kids = Vec::new();
    while out.len() < count / 2 {
        let mut i = g.start();
        for _ in 0..rng.gen_range(0..3 * geom.n) {
            kids.clear();
            g.successors(i, &mut kids);
            if kids.is_empty() {
                break;
            }
            // Passes end games quickly: prefer stones.
            let k = rng.gen_range(0..kids.len());
            i = if k == kids.len() - 1 && rng.gen_bool(0.7) {
                kids[0]
            } else {
                kids[k]
            };
        }
        out.push(i);
    }
    while out.len() < count {
        let (mut black, mut white) = (0u64, 0u64);
        for p in 0..geom.n {
            match rng.gen_range(0..3) {
                1 => black |= 1 << p,
                2 => white |= 1 << p,
                _ => {}
            }
        }
        let board = Board { black, white };
        if !board.all_groups_breathe(geom) {
            continue;
        }
        let side = rng.gen_range(0..2);
        let flags = [Flag::Clear, Flag::Pass, Flag::End]
            .into_iter()
            .chain((0..geom.n as u8).map(Flag::Ko));
        for flag in flags {
            let i = g.index(&State { board, side, flag });
            if g.is_legal(i) {
                out.push(i);
            }
        }
    }
    // Ko shapes: p empty with the last mover's stones around it, one of them (x) a single stone
    // whose other neighbours belong to the side to move.
    let mut tries = 0;
    while out.len() < count + count / 4 && tries < 100 * count {
        tries += 1;
        let mut board = g.state(out[rng.gen_range(0..out.len())]).board;
        let (p, side) = (rng.gen_range(0..geom.n), rng.gen_range(0..2u8));
        let around = geom.nbr[p];
        if around == 0 {
            break;
        }
        let choices: Vec<usize> = (0..geom.n).filter(|&q| around >> q & 1 == 1).collect();
        let x = choices[rng.gen_range(0..choices.len())];
        board.set(1 << p, None);
        board.set(around, Some(1 - side));
        board.set(geom.nbr[x] & !(1 << p), Some(side));
        let i = g.index(&State {
            board,
            side,
            flag: Flag::Ko(p as u8),
        });
        if g.is_legal(i) {
            out.push(i);
        }
    }
    out
}
