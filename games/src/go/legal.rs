//! Which states are legal (docs/go.md, "Legal states"): (1) every group has a liberty, and (2) a ko
//! ban on `p` is explained by a last move, a stone `x` of the other player next to `p` whose replay
//! on the board before it gives exactly this board with this ban.
//! 1. Legality is closed under moves. Legal states need not be reachable from the empty board (any
//!    board with flag "clear" whose groups breathe is legal); they are solved all the same.

use super::board::Board;
use super::index::{Flag, State};
use super::surface::Geometry;

/// True when `state` is legal: conditions (1) and (2) of docs/go.md, "Legal states".
pub fn is_legal(g: &Geometry, state: &State) -> bool {
    match state.flag {
        // Most indices carry a ko flag and fail its cheap test: take it before the group search.
        Flag::Ko(p) => {
            let p = p as usize;
            ko_possible(g, &state.board, state.side, p)
                && state.board.all_groups_breathe(g)
                && ko_explained(g, &state.board, state.side, p)
        }
        _ => state.board.all_groups_breathe(g),
    }
}

/// The cheap part of condition (2): `p` is empty and every neighbour of it belongs to the last
/// mover (the captured point was surrounded by the capturing side).
fn ko_possible(g: &Geometry, board: &Board, side: u8, p: usize) -> bool {
    let last = 1 - side;
    board.occupied() >> p & 1 == 0 && g.nbr[p] != 0 && g.nbr[p] & !board.stones(last) == 0
}

/// Condition (2) for a board whose groups all breathe: `side` is to move and banned from `p`.
pub fn ko_explained(g: &Geometry, board: &Board, side: u8, p: usize) -> bool {
    if !ko_possible(g, board, side, p) {
        return false;
    }
    let last = 1 - side;
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
