//! TOPPEN (docs/rules.md §2): one universal index space over every terrain, a state being a graph
//! class of the occupied cells ([`Catalogue`]), the stack on each vertex and the side to move.
//! 1. States are kept per labelled vertex, not canonicalised under automorphisms: moves in a class
//!    need none, and every index is legal. Why, the variants, the module map:
//!    docs/games-internals.md, `games/src/toppen/mod.rs`.

mod family;
pub use family::ToppenParams;
pub mod catalogue;
pub mod census;
pub mod command;
pub mod index;
pub mod moves;
pub mod notation;
pub mod polyomino;
pub mod view;

use kingmaker_kernel::{Game, Node};

pub use catalogue::Catalogue;
pub use census::census;
pub use index::IndexSpace;
pub use polyomino::Terrain;

/// Errors of the TOPPEN module: bad SPECs, terrains, positions and options.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToppenError {
    /// A SPEC that cannot be read.
    #[error("bad SPEC {spec:?}: {why}")]
    BadSpec {
        /// The SPEC as given.
        spec: String,
        /// What is wrong with it.
        why: String,
    },
    /// A SPEC that is not a terrain (10 edge-connected cells).
    #[error("bad terrain {spec:?}: {why}")]
    BadTerrain {
        /// The SPEC as given.
        spec: String,
        /// What is wrong with it.
        why: String,
    },
    /// A position text that cannot be read.
    #[error("bad position {text:?}: {why}")]
    BadPosition {
        /// The text as given.
        text: String,
        /// What is wrong with it.
        why: String,
    },
    /// Options that name no variant (a first player other than 0 or 1).
    #[error("bad options: {0}")]
    BadOptions(String),
}

/// Variant choices; `Default` gives the docs/rules.md defaults (A moves first, orthogonal moves).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ToppenOptions {
    /// The player who moves first in starting states: 0 = A (default), 1 = B.
    pub first: u8,
    /// 8-neighbour (king) adjacency instead of orthogonal (default false).
    pub diagonal: bool,
}

/// The TOPPEN game over one universal index space (all terrains of one adjacency variant).
#[derive(Debug, Clone)]
pub struct Toppen {
    opts: ToppenOptions,
    cat: Catalogue,
    space: IndexSpace,
}

impl Toppen {
    /// Builds the catalogue and index space (well under a second for either adjacency).
    pub fn new(opts: ToppenOptions) -> Result<Toppen, ToppenError> {
        if opts.first > 1 {
            return Err(ToppenError::BadOptions(format!(
                "first player {} does not exist; use 0 (A) or 1 (B)",
                opts.first
            )));
        }
        let cat = Catalogue::build(opts.diagonal);
        let space = IndexSpace::new(&cat);
        Ok(Toppen { opts, cat, space })
    }

    /// The options this game was built with.
    pub fn options(&self) -> ToppenOptions {
        self.opts
    }

    /// Parses a terrain SPEC: exactly 10 edge-connected cells.
    pub fn parse_terrain(spec: &str) -> Result<Terrain, ToppenError> {
        polyomino::parse_terrain(spec)
    }

    /// The 4655 free decominoes, one representative each.
    pub fn all_decominoes() -> Vec<Terrain> {
        polyomino::all_decominoes()
    }

    /// The graph catalogue.
    pub fn catalogue(&self) -> &Catalogue {
        &self.cat
    }

    /// Number of graph classes with `v` vertices, for `v` in 0..=10.
    pub fn catalogue_sizes(&self) -> [usize; 11] {
        self.cat.sizes()
    }

    /// The class of a terrain's graph and the canonical vertex of each of its cells.
    fn terrain_class(&self, terrain: &Terrain) -> (u32, Vec<u8>) {
        self.cat
            .classify(terrain.cell_list())
            .expect("every decomino's graph is in the catalogue")
    }

    /// The class id of a terrain's graph.
    pub fn graph_class(&self, terrain: &Terrain) -> usize {
        self.terrain_class(terrain).0 as usize
    }

    /// Number of vertices of a class.
    pub fn class_vertices(&self, class: usize) -> usize {
        self.cat.classes[class].n as usize
    }

    /// Size of a class's automorphism group.
    pub fn automorphisms(&self, class: usize) -> u64 {
        self.cat.classes[class].automorphisms
    }

    /// The 252 starting states of a terrain (one per colouring, the first player to move), as
    /// indices. Colouring `k` is the `k`-th 10-bit mask with five bits set in increasing order,
    /// bit `i` set when the terrain's `i`-th cell (reading order) starts with an A tile.
    pub fn starting_states(&self, terrain: &Terrain) -> Vec<u64> {
        let (class, to_vertex) = self.terrain_class(terrain);
        (0u16..1 << polyomino::TILES)
            .filter(|m| m.count_ones() == 5)
            .map(|mask| {
                let mut s = index::State {
                    class,
                    n: polyomino::TILES as u8,
                    h: [1; catalogue::MAX_V],
                    bits: [0; catalogue::MAX_V],
                    mover: self.opts.first,
                };
                for (cell, &v) in to_vertex.iter().enumerate() {
                    s.bits[v as usize] = (mask >> cell) & 1;
                }
                self.space.encode(&s)
            })
            .collect()
    }
}

impl Game for Toppen {
    fn name(&self) -> String {
        if self.opts.diagonal {
            "toppen-diagonal".into()
        } else {
            "toppen".into()
        }
    }

    fn players(&self) -> u8 {
        2
    }

    fn size(&self) -> u64 {
        self.space.size()
    }

    fn node(&self, index: u64) -> Node {
        if self.space.vertices_of(index) == 1 {
            let s = self.space.decode(index);
            Node::Terminal { outcome: s.top(0) }
        } else {
            Node::Live {
                mover: (index & 1) as u8,
            }
        }
    }

    fn successors(&self, index: u64, out: &mut Vec<u64>) {
        let s = self.space.decode(index);
        self.successors_of(&s, out);
    }

    fn predecessors(&self, index: u64, out: &mut Vec<u64>) {
        let s = self.space.decode(index);
        self.predecessors_of(&s, out);
    }

    fn mover(&self, index: u64) -> u8 {
        (index & 1) as u8
    }

    fn mover_period(&self) -> Option<u8> {
        Some(2)
    }
}

/// Shared instances for tests (building a catalogue takes a moment).
#[cfg(test)]
pub(crate) fn shared(diagonal: bool) -> &'static Toppen {
    use std::sync::OnceLock;
    static ORTH: OnceLock<Toppen> = OnceLock::new();
    static DIAG: OnceLock<Toppen> = OnceLock::new();
    let cell = if diagonal { &DIAG } else { &ORTH };
    cell.get_or_init(|| {
        Toppen::new(ToppenOptions { first: 0, diagonal }).expect("defaults are valid")
    })
}

#[cfg(test)]
mod tests;
