//! The catalogue of graph classes: every occupied-cell graph that can arise on a decomino, up to
//! isomorphism, each in nauty's canonical labelling, with its vertex [`Removal`]s and
//! [`Extension`]s.
//! 1. These are exactly the connected subsets of decominoes, found by brute force over the 4655
//!    decominoes' subsets (why: docs/games-internals.md, `games/src/toppen/catalogue.rs`).

use std::collections::HashMap;
use std::os::raw::c_int;

use nauty_Traces_sys::{densenauty, optionblk, statsblk, TRUE};

use super::polyomino::{adjacency, all_decominoes, connected, Cell, TILES};

/// Most vertices a graph class has.
pub const MAX_V: usize = TILES;

/// A graph in canonical form, packed: the vertex count in the low 4 bits, then the upper triangle
/// of the adjacency matrix.
pub type GraphKey = u64;

/// The result of canonically labelling one graph.
#[derive(Clone, Debug)]
pub struct Canon {
    /// The canonical graph.
    pub key: GraphKey,
    /// Canonical adjacency masks (vertex `i` of the canonical graph).
    pub adj: [u16; MAX_V],
    /// `to_canon[u]`: the canonical vertex of input vertex `u`.
    pub to_canon: [u8; MAX_V],
    /// Size of the automorphism group.
    pub automorphisms: u64,
}

/// Packs `n` canonical adjacency masks into a key.
pub fn pack(adj: &[u16]) -> GraphKey {
    let n = adj.len();
    let mut key = n as u64;
    let mut pos = 4;
    for (i, &row) in adj.iter().enumerate() {
        for j in i + 1..n {
            if row & (1 << j) != 0 {
                key |= 1 << pos;
            }
            pos += 1;
        }
    }
    key
}

/// Canonical labelling of the graph with adjacency masks `adj` (1..=10 vertices) by nauty.
pub fn canonical(adj: &[u16]) -> Canon {
    let n = adj.len();
    assert!((1..=MAX_V).contains(&n), "graphs have 1..=10 vertices");
    debug_assert!((0..n).all(|v| (0..n).all(|w| (adj[v] >> w & 1) == (adj[w] >> v & 1))));
    // One setword per row (n <= 10 <= WORDSIZE); nauty's element i is the word's bit WORDSIZE-1-i.
    let m = 1usize;
    let word_bits = nauty_Traces_sys::WORDSIZE as usize;
    let elem = |i: usize| nauty_Traces_sys::bit[i];
    debug_assert_eq!(elem(0), 1 << (word_bits - 1));
    let mut g: Vec<nauty_Traces_sys::graph> = vec![0; m * n];
    for (v, &row) in adj.iter().enumerate() {
        for w in 0..n {
            if row & (1 << w) != 0 {
                g[v] |= elem(w);
            }
        }
    }
    let mut lab: Vec<c_int> = vec![0; n];
    let mut ptn: Vec<c_int> = vec![0; n];
    let mut orbits: Vec<c_int> = vec![0; n];
    let mut options = optionblk {
        getcanon: TRUE,
        ..optionblk::default()
    };
    let mut stats = statsblk::default();
    let mut h: Vec<nauty_Traces_sys::graph> = vec![0; m * n];
    // SAFETY: every buffer has the length nauty expects for m = 1 word per row and n vertices;
    // options and stats are fully initialised; the `tls` feature makes nauty's work areas
    // thread-local, so concurrent calls are fine.
    unsafe {
        densenauty(
            g.as_mut_ptr(),
            lab.as_mut_ptr(),
            ptn.as_mut_ptr(),
            orbits.as_mut_ptr(),
            &mut options,
            &mut stats,
            m as c_int,
            n as c_int,
            h.as_mut_ptr(),
        );
    }
    assert_eq!(stats.errstatus, 0, "nauty failed on a {n}-vertex graph");
    let mut cadj = [0u16; MAX_V];
    for (i, row) in h.iter().enumerate() {
        for w in 0..n {
            if row & elem(w) != 0 {
                cadj[i] |= 1 << w;
            }
        }
    }
    // nauty: vertex lab[i] of g becomes vertex i of the canonical graph.
    let mut to_canon = [0u8; MAX_V];
    for (i, &l) in lab.iter().enumerate() {
        to_canon[l as usize] = i as u8;
    }
    let automorphisms = (stats.grpsize1 * 10f64.powi(stats.grpsize2)).round() as u64;
    Canon {
        key: pack(&cadj[..n]),
        adj: cadj,
        to_canon,
        automorphisms,
    }
}

/// Removing one vertex of a class: the class that remains and the vertex mapping.
#[derive(Clone, Debug)]
pub struct Removal {
    /// The class of the graph without the vertex.
    pub child: u32,
    /// `phi[u]`: the child's canonical vertex for parent vertex `u` (unused at the removed vertex).
    pub phi: [u8; MAX_V],
}

/// One way a class grows back by one vertex: the inverse of a [`Removal`].
#[derive(Clone, Debug)]
pub struct Extension {
    /// The larger class.
    pub parent: u32,
    /// The parent's vertex that is not in this class.
    pub x: u8,
    /// `psi[w]`: the parent's vertex for this class's vertex `w`.
    pub psi: [u8; MAX_V],
    /// This class's vertices that are adjacent to `x` in the parent.
    pub x_nbrs: u16,
}

/// One graph class.
#[derive(Clone, Debug)]
pub struct GraphClass {
    /// Number of vertices.
    pub n: u8,
    /// Canonical adjacency masks.
    pub adj: [u16; MAX_V],
    /// The packed canonical graph.
    pub key: GraphKey,
    /// Vertices whose removal leaves the rest connected (none for a single vertex).
    pub removable: u16,
    /// Size of the automorphism group.
    pub automorphisms: u64,
    /// A representative occupied set drawing the class (normalised, reading order).
    pub rep: Vec<Cell>,
    /// `rep_vertex[k]`: the canonical vertex of the representative's `k`-th cell.
    pub rep_vertex: Vec<u8>,
    /// `removal[u]` for each removable vertex `u`.
    pub removal: Vec<Option<Removal>>,
    /// Every (parent class, removed vertex) whose removal gives this class.
    pub extensions: Vec<Extension>,
}

/// All graph classes of one adjacency variant.
#[derive(Clone, Debug)]
pub struct Catalogue {
    /// 8-neighbour adjacency?
    pub diagonal: bool,
    /// Classes ordered by vertex count, then by canonical key.
    pub classes: Vec<GraphClass>,
    /// Canonical key to class id.
    pub by_key: HashMap<GraphKey, u32>,
}

/// How attractive a representative drawing is (smaller is better): small bounding box, few rows.
fn rep_rank(cells: &[Cell]) -> (usize, usize, Vec<Cell>) {
    let rows = cells.iter().map(|c| c.0 as usize + 1).max().unwrap_or(0);
    let cols = cells.iter().map(|c| c.1 as usize + 1).max().unwrap_or(0);
    (rows * cols, rows, cells.to_vec())
}

impl Catalogue {
    /// Builds the catalogue for orthogonal (`diagonal == false`) or 8-neighbour adjacency.
    pub fn build(diagonal: bool) -> Catalogue {
        // Distinct occupied sets (normalised cells packed 10 per row into a u128), then classes.
        let mut seen_sets: HashMap<u128, ()> = HashMap::new();
        struct Found {
            adj: [u16; MAX_V],
            n: u8,
            automorphisms: u64,
            rep: Vec<Cell>,
            rep_vertex: Vec<u8>,
        }
        let mut found: HashMap<GraphKey, Found> = HashMap::new();
        for terrain in all_decominoes() {
            let cells = terrain.cell_list();
            let adj = adjacency(cells, diagonal);
            for set in 1u16..(1 << cells.len()) {
                if !connected(&adj, set) {
                    continue;
                }
                let sub: Vec<Cell> = (0..cells.len())
                    .filter(|&i| set & (1 << i) != 0)
                    .map(|i| cells[i])
                    .collect();
                let r0 = sub.iter().map(|c| c.0).min().unwrap_or(0);
                let c0 = sub.iter().map(|c| c.1).min().unwrap_or(0);
                let sub: Vec<Cell> = sub.iter().map(|&(r, c)| (r - r0, c - c0)).collect();
                let packed = sub.iter().fold(0u128, |acc, &(r, c)| {
                    acc | 1u128 << (r as usize * TILES + c as usize)
                });
                if seen_sets.insert(packed, ()).is_some() {
                    continue;
                }
                // `sub` is in reading order already (subset of a reading-ordered list, translated).
                let sub_adj = adjacency(&sub, diagonal);
                let canon = canonical(&sub_adj);
                let rep_vertex: Vec<u8> = canon.to_canon[..sub.len()].to_vec();
                match found.get_mut(&canon.key) {
                    Some(f) => {
                        if rep_rank(&sub) < rep_rank(&f.rep) {
                            f.rep = sub;
                            f.rep_vertex = rep_vertex;
                        }
                    }
                    None => {
                        found.insert(
                            canon.key,
                            Found {
                                adj: canon.adj,
                                n: sub_adj.len() as u8,
                                automorphisms: canon.automorphisms,
                                rep: sub,
                                rep_vertex,
                            },
                        );
                    }
                }
            }
        }
        let mut keys: Vec<(u8, GraphKey)> = found.iter().map(|(k, f)| (f.n, *k)).collect();
        keys.sort_unstable();
        let by_key: HashMap<GraphKey, u32> = keys
            .iter()
            .enumerate()
            .map(|(i, &(_, k))| (k, i as u32))
            .collect();
        let mut classes: Vec<GraphClass> = keys
            .iter()
            .map(|(_, k)| {
                let f = found.remove(k).expect("found");
                GraphClass {
                    n: f.n,
                    adj: f.adj,
                    key: *k,
                    removable: 0,
                    automorphisms: f.automorphisms,
                    rep: f.rep,
                    rep_vertex: f.rep_vertex,
                    removal: vec![None; f.n as usize],
                    extensions: Vec::new(),
                }
            })
            .collect();
        // Removals and their inverses.
        for p in 0..classes.len() {
            let n = classes[p].n as usize;
            if n < 2 {
                continue;
            }
            let adj = classes[p].adj;
            let all = (1u16 << n) - 1;
            for x in 0..n {
                if !connected(&adj[..n], all & !(1 << x)) {
                    continue;
                }
                // The graph without x, its vertices renumbered 0..n-1 in order.
                let old: Vec<usize> = (0..n).filter(|&u| u != x).collect();
                let sub_adj: Vec<u16> = old
                    .iter()
                    .map(|&u| {
                        old.iter()
                            .enumerate()
                            .filter(|&(_, &w)| adj[u] & (1 << w) != 0)
                            .fold(0u16, |acc, (k, _)| acc | 1 << k)
                    })
                    .collect();
                let canon = canonical(&sub_adj);
                let child = *by_key
                    .get(&canon.key)
                    .expect("the catalogue is closed under connected vertex removal");
                let mut phi = [u8::MAX; MAX_V];
                let mut psi = [0u8; MAX_V];
                for (k, &u) in old.iter().enumerate() {
                    phi[u] = canon.to_canon[k];
                    psi[canon.to_canon[k] as usize] = u as u8;
                }
                let x_nbrs = (0..n)
                    .filter(|&u| adj[x] & (1 << u) != 0)
                    .fold(0u16, |acc, u| acc | 1 << phi[u]);
                classes[p].removable |= 1 << x;
                classes[p].removal[x] = Some(Removal { child, phi });
                classes[child as usize].extensions.push(Extension {
                    parent: p as u32,
                    x: x as u8,
                    psi,
                    x_nbrs,
                });
            }
        }
        Catalogue {
            diagonal,
            classes,
            by_key,
        }
    }

    /// Number of classes with `v` vertices, for `v` in 0..=10 (index 0 is always 0).
    pub fn sizes(&self) -> [usize; MAX_V + 1] {
        let mut out = [0; MAX_V + 1];
        for c in &self.classes {
            out[c.n as usize] += 1;
        }
        out
    }

    /// The class of an occupied set and the canonical vertex of each of its cells, or `None` when
    /// the set is not one of the catalogue's graphs.
    pub fn classify(&self, cells: &[Cell]) -> Option<(u32, Vec<u8>)> {
        if cells.is_empty() || cells.len() > MAX_V {
            return None;
        }
        let adj = adjacency(cells, self.diagonal);
        let canon = canonical(&adj);
        let class = *self.by_key.get(&canon.key)?;
        Some((class, canon.to_canon[..cells.len()].to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::polyomino::free_polyominoes;
    use super::*;
    use std::collections::HashSet;

    fn catalogue(diagonal: bool) -> &'static Catalogue {
        super::super::shared(diagonal).catalogue()
    }

    #[test]
    fn nauty_canonical_forms_are_invariant() {
        // A path 0-1-2-3 given in two vertex orders has one canonical form.
        let a = canonical(&[0b0010, 0b0101, 0b1010, 0b0100]);
        let b = canonical(&[0b0100, 0b1000, 0b1001, 0b0110]);
        assert_eq!(a.key, b.key);
        assert_eq!(a.automorphisms, 2);
        // A 4-cycle has 8 automorphisms, a star with 4 leaves 24.
        assert_eq!(
            canonical(&[0b1010, 0b0101, 0b1010, 0b0101]).automorphisms,
            8
        );
        assert_eq!(
            canonical(&[0b11110, 1, 1, 1, 1]).automorphisms,
            24,
            "the plus pentomino's graph"
        );
        assert_eq!(canonical(&[0]).automorphisms, 1);
    }

    #[test]
    fn orthogonal_catalogue_is_the_polyomino_graphs() {
        let cat = catalogue(false);
        let mut expected: Vec<HashSet<GraphKey>> = vec![HashSet::new(); MAX_V + 1];
        for (k, level) in free_polyominoes(MAX_V).iter().enumerate() {
            for poly in level {
                expected[k + 1].insert(canonical(&adjacency(poly, false)).key);
            }
        }
        let sizes = cat.sizes();
        for v in 1..=MAX_V {
            assert_eq!(sizes[v], expected[v].len(), "{v} vertices");
        }
        for c in &cat.classes {
            assert!(expected[c.n as usize].contains(&c.key));
        }
    }

    #[test]
    fn representatives_draw_their_class() {
        for diagonal in [false, true] {
            let cat = catalogue(diagonal);
            for (id, c) in cat.classes.iter().enumerate() {
                let (class, map) = cat.classify(&c.rep).expect("a representative classifies");
                assert_eq!(class as usize, id);
                assert_eq!(map, c.rep_vertex);
            }
        }
    }

    #[test]
    fn removals_and_extensions_are_inverse() {
        for diagonal in [false, true] {
            let cat = catalogue(diagonal);
            let mut removals = 0;
            for (p, c) in cat.classes.iter().enumerate() {
                let n = c.n as usize;
                for x in 0..n {
                    let Some(r) = &c.removal[x] else { continue };
                    removals += 1;
                    let child = &cat.classes[r.child as usize];
                    assert_eq!(child.n as usize, n - 1);
                    // phi is an isomorphism from c - x onto the child.
                    for u in (0..n).filter(|&u| u != x) {
                        for w in (0..n).filter(|&w| w != x) {
                            let e1 = c.adj[u] & (1 << w) != 0;
                            let e2 = child.adj[r.phi[u] as usize] & (1 << r.phi[w]) != 0;
                            assert_eq!(e1, e2);
                        }
                    }
                    let ext = child
                        .extensions
                        .iter()
                        .find(|e| e.parent as usize == p && e.x as usize == x)
                        .expect("the inverse extension");
                    for w in 0..n - 1 {
                        assert_eq!(r.phi[ext.psi[w] as usize] as usize, w);
                    }
                }
            }
            let exts: usize = cat.classes.iter().map(|c| c.extensions.len()).sum();
            assert_eq!(exts, removals);
        }
    }
}
