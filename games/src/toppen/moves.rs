//! Moves and unmoves (docs/rules.md §2) on decoded states; the cases: docs/games-internals.md.
//! 1. Only a move that empties a vertex changes the class (the child relabelled through a
//!    [`Removal`](super::catalogue::Removal)), and only such children can coincide (by an
//!    automorphism of the smaller class): only they, and the matching
//!    [`Extension`](super::catalogue::Extension) unmoves, are sorted and de-duplicated.

use super::catalogue::MAX_V;
use super::index::State;
use super::Toppen;

/// Iterates over the set bits of a mask.
#[inline]
fn bits(mut mask: u16) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            None
        } else {
            let b = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            Some(b)
        }
    })
}

/// Sorts and de-duplicates `out[from..]` in place.
fn dedup_tail(out: &mut Vec<u64>, from: usize) {
    if out.len() - from < 2 {
        return;
    }
    out[from..].sort_unstable();
    let mut w = from + 1;
    for r in from + 1..out.len() {
        if out[r] != out[w - 1] {
            out[w] = out[r];
            w += 1;
        }
    }
    out.truncate(w);
}

impl Toppen {
    /// Whether `player` has a legal move in the stacks of `s` (which must have 2+ vertices).
    #[inline]
    pub(crate) fn has_move(&self, s: &State, player: u8) -> bool {
        let removable = self.cat.classes[s.class as usize].removable;
        (0..s.n as usize).any(|u| s.top(u) == player && (s.h[u] >= 2 || removable & (1 << u) != 0))
    }

    /// Calls `f(from, to, child)` for every legal move of the side to move in `s` (not a pass),
    /// `from` and `to` being vertices of `s`'s class. Returns whether a vertex vanished in any.
    #[inline]
    pub(crate) fn for_each_move(&self, s: &State, mut f: impl FnMut(usize, usize, &State)) -> bool {
        let cls = &self.cat.classes[s.class as usize];
        let n = s.n as usize;
        let mut vanished = false;
        if n < 2 {
            return false;
        }
        for i in 0..n {
            if s.top(i) != s.mover {
                continue;
            }
            if s.h[i] >= 2 {
                let mut base = *s;
                let b = base.pop(i);
                base.mover ^= 1;
                for j in bits(cls.adj[i]) {
                    let mut child = base;
                    child.push(j, b);
                    f(i, j, &child);
                }
            } else if let Some(r) = &cls.removal[i] {
                vanished = true;
                let mut base = State {
                    class: r.child,
                    n: s.n - 1,
                    h: [0; MAX_V],
                    bits: [0; MAX_V],
                    mover: s.mover ^ 1,
                };
                for u in (0..n).filter(|&u| u != i) {
                    let w = r.phi[u] as usize;
                    base.h[w] = s.h[u];
                    base.bits[w] = s.bits[u];
                }
                let b = s.bits[i] & 1;
                for j in bits(cls.adj[i]) {
                    let mut child = base;
                    child.push(r.phi[j] as usize, b);
                    f(i, j, &child);
                }
            }
        }
        vanished
    }

    /// The distinct successors of a decoded state (appended to `out`).
    pub(crate) fn successors_of(&self, s: &State, out: &mut Vec<u64>) {
        if s.n < 2 {
            return;
        }
        let from = out.len();
        let space = &self.space;
        let vanished = self.for_each_move(s, |_, _, child| out.push(space.encode(child)));
        if out.len() == from {
            // No legal move: pass.
            let mut pass = *s;
            pass.mover ^= 1;
            out.push(space.encode(&pass));
        } else if vanished {
            dedup_tail(out, from);
        }
    }

    /// The distinct predecessors of a decoded state (appended to `out`).
    pub(crate) fn predecessors_of(&self, s: &State, out: &mut Vec<u64>) {
        let space = &self.space;
        let last = s.mover ^ 1;
        let n = s.n as usize;
        let cls = &self.cat.classes[s.class as usize];
        // A pass by the last mover.
        if n >= 2 && !self.has_move(s, last) {
            let mut p = *s;
            p.mover = last;
            out.push(space.encode(&p));
        }
        // A move within the class: a tile of the last mover's colour went from i onto j.
        for j in 0..n {
            if s.h[j] < 2 || s.top(j) != last {
                continue;
            }
            let mut base = *s;
            let b = base.pop(j);
            base.mover = last;
            for i in bits(cls.adj[j]) {
                let mut p = base;
                p.push(i, b);
                out.push(space.encode(&p));
            }
        }
        // A move that emptied a vertex: the vertex reappears in a parent class.
        let from = out.len();
        for ext in &cls.extensions {
            let pn = n + 1;
            for w in bits(ext.x_nbrs) {
                if s.h[w] < 2 || s.top(w) != last {
                    continue;
                }
                let mut p = State {
                    class: ext.parent,
                    n: pn as u8,
                    h: [0; MAX_V],
                    bits: [0; MAX_V],
                    mover: last,
                };
                for u in 0..n {
                    let pu = ext.psi[u] as usize;
                    p.h[pu] = s.h[u];
                    p.bits[pu] = s.bits[u];
                }
                let b = p.pop(ext.psi[w] as usize);
                p.push(ext.x as usize, b);
                out.push(space.encode(&p));
            }
        }
        dedup_tail(out, from);
    }
}
