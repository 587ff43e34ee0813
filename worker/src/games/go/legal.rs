//! Which states are legal.
//!
//! A state is legal when
//! 1. every group on the board has at least one liberty, and
//! 2. if it carries a ko ban on point `p` (side `s` to move, `m` the other player), the ban is
//!    explained by a last move: there is a stone `x` of `m` next to `p` such that the board `P`
//!    obtained by removing `x` and putting a stone of `s` on `p` has every group breathing (1), and
//!    `m` playing `x` on `P` gives exactly this board with a ko ban on `p`.
//!
//! Flags "clear", "last move was a pass" and "game over" need nothing beyond (1). Legality is
//! closed under moves: a move never leaves a group without liberties, and a ko ban set by a move
//! is explained by that very move. Legal states need not be reachable from the empty board (an
//! arbitrary board with flag "clear" is legal); they are solved all the same.

use super::board::Board;
use super::index::{Flag, State};
use super::surface::Geometry;

/// True when `state` is legal (see the module documentation).
pub fn is_legal(g: &Geometry, state: &State) -> bool {
    if !state.board.all_groups_breathe(g) {
        return false;
    }
    match state.flag {
        Flag::Ko(p) => ko_explained(g, &state.board, state.side, p as usize),
        _ => true,
    }
}

/// Condition (2) for a board whose groups all breathe: `side` is to move and banned from `p`.
pub fn ko_explained(g: &Geometry, board: &Board, side: u8, p: usize) -> bool {
    if board.occupied() >> p & 1 == 1 {
        return false;
    }
    let last = 1 - side;
    // Quick filter: every neighbour of the captured point belongs to the last mover.
    if g.nbr[p] == 0 || g.nbr[p] & !board.stones(last) != 0 {
        return false;
    }
    let mut movers = g.nbr[p];
    while movers != 0 {
        let x = movers.trailing_zeros() as usize;
        movers &= movers - 1;
        let mut parent = *board;
        parent.set(1 << x, None);
        parent.set(1 << p, Some(side));
        if !parent.all_groups_breathe(g) {
            continue;
        }
        if let Some(played) = parent.play(g, last, x) {
            if played.board == *board && played.ko == Some(p as u8) {
                return true;
            }
        }
    }
    false
}
