//! Moves and exact unmoves (docs/go.md, "Moves and unmoves").
//! 1. An unmove of a stone `x` empties `x` and restores any subset of the empty regions next to it
//!    bordered only by the mover's stones; a candidate is kept when replaying `x` on it gives
//!    exactly this state (board and ko ban): that replay is the exactness check.

use super::board::Board;
use super::index::{Flag, State};
use super::legal::ko_explained;
use super::surface::Geometry;

/// The children of a live legal state (the caller checks legality and that the game is not over).
/// Distinct moves give distinct children (a stone move fills its own point, a pass changes only the
/// flag), so no list needs de-duplicating.
pub fn successors(g: &Geometry, s: &State, out: &mut Vec<State>) {
    let banned = match s.flag {
        Flag::Ko(p) => 1u64 << p,
        _ => 0,
    };
    let next = 1 - s.side;
    let mut free = s.board.empty(g) & !banned;
    while free != 0 {
        let x = free.trailing_zeros() as usize;
        free &= free - 1;
        if let Some(played) = s.board.play(g, s.side, x) {
            out.push(State {
                board: played.board,
                side: next,
                flag: played.ko.map_or(Flag::Clear, Flag::Ko),
            });
        }
    }
    out.push(State {
        board: s.board,
        side: next,
        flag: if s.flag == Flag::Pass {
            Flag::End
        } else {
            Flag::Pass
        },
    });
}

/// Number of children of a live legal state (cheaper than listing them: no result boards kept).
pub fn successor_count(g: &Geometry, s: &State) -> usize {
    let banned = match s.flag {
        Flag::Ko(p) => 1u64 << p,
        _ => 0,
    };
    let mut free = s.board.empty(g) & !banned;
    let mut count = 1; // the pass
    while free != 0 {
        let x = free.trailing_zeros() as usize;
        free &= free - 1;
        count += s.board.play(g, s.side, x).is_some() as usize;
    }
    count
}

/// Every legal state with `m` to move and flag "clear", "pass", or a legal ko ban other than
/// `skip`, on `board` (whose groups all breathe).
fn with_every_flag(g: &Geometry, board: Board, m: u8, skip: Option<usize>, out: &mut Vec<State>) {
    out.push(State {
        board,
        side: m,
        flag: Flag::Clear,
    });
    out.push(State {
        board,
        side: m,
        flag: Flag::Pass,
    });
    push_ko_flags(g, board, m, skip, out);
}

fn push_ko_flags(g: &Geometry, board: Board, m: u8, skip: Option<usize>, out: &mut Vec<State>) {
    // A ko ban on q needs q empty with every neighbour a stone of the player who just moved.
    let last = board.stones(1 - m);
    let mut candidates = board.empty(g);
    while candidates != 0 {
        let q = candidates.trailing_zeros() as usize;
        candidates &= candidates - 1;
        if Some(q) == skip || g.nbr[q] == 0 || g.nbr[q] & !last != 0 {
            continue;
        }
        if ko_explained(g, &board, m, q) {
            out.push(State {
                board,
                side: m,
                flag: Flag::Ko(q as u8),
            });
        }
    }
}

/// The parents of a legal state, `m` having just played a stone `x` or passed. They are distinct
/// without de-duplicating: two choices of `x` differ on `x` (empty in one parent, `m`'s stone in
/// the other), two subsets of restored regions differ on a region, and the flags differ. Every
/// parent is found: a stone move's captured groups are such regions and its parent board is
/// exactly "this board, `x` emptied, the captured groups back".
pub fn predecessors(g: &Geometry, s: &State, out: &mut Vec<State>) {
    let m = 1 - s.side;
    let ko = match s.flag {
        Flag::End => {
            out.push(State {
                board: s.board,
                side: m,
                flag: Flag::Pass,
            });
            return;
        }
        Flag::Pass => {
            out.push(State {
                board: s.board,
                side: m,
                flag: Flag::Clear,
            });
            push_ko_flags(g, s.board, m, None, out);
            return;
        }
        Flag::Clear => None,
        Flag::Ko(p) => Some(p),
    };
    let mine = s.board.stones(m);
    let empty = s.board.empty(g);
    let mut last_stones = match ko {
        Some(p) => mine & g.nbr[p as usize],
        None => mine,
    };
    while last_stones != 0 {
        let x = last_stones.trailing_zeros() as usize;
        last_stones &= last_stones - 1;
        // The empty regions next to x bordered by m's stones only: the groups x may have captured.
        let mut regions = [0u64; 4];
        let mut k = 0;
        let mut near = g.nbr[x] & empty;
        while near != 0 {
            let region = g.component(empty, near.trailing_zeros() as usize);
            near &= !region;
            let border = g.spread(region) & !region;
            if border & !mine == 0 {
                regions[k] = region;
                k += 1;
            }
        }
        for subset in 0u32..1 << k {
            let restored = (0..k)
                .filter(|&i| subset >> i & 1 == 1)
                .fold(0u64, |acc, i| acc | regions[i]);
            let mut parent = s.board;
            parent.set(1 << x, None);
            parent.set(restored, Some(s.side));
            if !parent.all_groups_breathe(g) {
                continue;
            }
            match parent.play(g, m, x) {
                Some(played) if played.board == s.board && played.ko == ko => {
                    with_every_flag(g, parent, m, Some(x), out);
                }
                _ => {}
            }
        }
    }
}
