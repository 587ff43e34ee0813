//! Area scoring with the winding rule (komi 0): a colour's area is its stones and the empty regions
//! that border only its stones and do not wind around the surface (docs/go.md, "Rules").
//! 1. A region winds when it holds a closed path non-zero in H₁(surface; Q), which the crossing
//!    counts of docs/go.md's table detect: [`winds`] labels every point with the counts of a path
//!    from a base point, and the region winds when a point gets two labels.

use super::board::Board;
use super::surface::Geometry;

/// True when the region `region` (a non-empty set of points) winds around the surface.
pub fn winds(g: &Geometry, region: u64) -> bool {
    if g.surface.rational_crossings() == [false, false] {
        return false;
    }
    let mut label = [[0i32; 2]; 64];
    let start = region.trailing_zeros() as usize;
    let mut seen = 1u64 << start;
    let mut stack = vec![start];
    while let Some(u) = stack.pop() {
        for step in g.steps[u].iter().flatten() {
            let v = step.to as usize;
            if region >> v & 1 == 0 {
                continue;
            }
            let want = [
                label[u][0] + step.wind[0] as i32,
                label[u][1] + step.wind[1] as i32,
            ];
            if seen >> v & 1 == 0 {
                seen |= 1 << v;
                label[v] = want;
                stack.push(v);
            } else if label[v] != want {
                return true;
            }
        }
    }
    false
}

/// The areas of Black and White.
pub fn areas(g: &Geometry, board: &Board) -> (u32, u32) {
    let mut area = [board.black.count_ones(), board.white.count_ones()];
    let empty = board.empty(g);
    let mut rest = empty;
    while rest != 0 {
        let region = g.component(empty, rest.trailing_zeros() as usize);
        rest &= !region;
        let border = g.spread(region) & !region;
        let (b, w) = (border & board.black != 0, border & board.white != 0);
        if b != w && !winds(g, region) {
            area[if b { 0 } else { 1 }] += region.count_ones();
        }
    }
    (area[0], area[1])
}

/// Black's score: Black's area minus White's.
pub fn score(g: &Geometry, board: &Board) -> i32 {
    let (b, w) = areas(g, board);
    b as i32 - w as i32
}
