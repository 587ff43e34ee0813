//! The `Game` abstraction every table is built from.
//!
//! A game is a dense index space `[0, size)`: every index names one state (a placement of pieces
//! plus the side to move). The wave kernel only ever sees indices; ranking, move generation and the
//! rules live in the game's own module in the `kingmaker-games` crate.

use std::ops::Range;

/// What the rules say about one index, before any solving.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// A state that cannot arise in play. It has no successors, no predecessors, and it is
    /// excluded from win/loss/draw counts.
    Illegal,
    /// The game is over with `outcome`: the winning player (`0..players`) in most games; a game
    /// with other results numbers them too (Connect Four's draw; Go's final score, shifted to
    /// 0..), and each layer's objective says which outcomes count as won. Outcomes are below 64.
    Terminal {
        /// The result: a winning player or a game's numbered outcome.
        outcome: u8,
    },
    /// The game goes on and `mover` is to move.
    Live {
        /// The player to move.
        mover: u8,
    },
}

/// A finite game over a dense index space, as the wave kernel needs it.
///
/// Contract (checked for every game by `games/src/conformance.rs`):
/// - `successors(i)` lists the children of a live state, one entry per edge: a child appears
///   once, or, in a symmetry-reduced game where two moves lead to states with one
///   representative (cc2p's quarter), once per such move. A pass is one child. Illegal and
///   terminal states have no children, and no child is illegal.
/// - `predecessors(i)` lists the live parents of `i`, each as often as `i` appears among its
///   successors: the edges listed by the two are the same, with their multiplicities, so that
///   the kernel's successor counters see one update per edge.
pub trait Game: Send + Sync {
    /// Short machine name, e.g. `cc3p-1`.
    fn name(&self) -> String;
    /// Number of players (2 or 3). Players are numbered `0..players`.
    fn players(&self) -> u8;
    /// Size of the dense index space.
    fn size(&self) -> u64;
    /// Classify one index.
    fn node(&self, index: u64) -> Node;
    /// Append the distinct successors of `index` to `out` (which the caller clears).
    fn successors(&self, index: u64, out: &mut Vec<u64>);
    /// Append the distinct predecessors of `index` to `out` (which the caller clears).
    fn predecessors(&self, index: u64, out: &mut Vec<u64>);
    /// The side to move encoded in `index` (cheap; meaningful for live states).
    fn mover(&self, index: u64) -> u8;

    /// The number of successors of a live state (a pass counts as one). The kernel counts every
    /// live state that an unfavourable child reaches before a favourable one, so games override
    /// this when counting is cheaper than listing.
    fn successor_count(&self, index: u64) -> usize {
        let mut out = Vec::new();
        self.successors(index, &mut out);
        out.len()
    }

    /// [`Game::predecessors`], and the successor count of another live state when the game
    /// learned it on the way: `Some((state, count))`, with `count` what
    /// [`Game::successor_count`] would return. The kernel keeps it so that it need not count that
    /// state later. (cc3p: the predecessors of a state move the pieces of the player before the
    /// mover, so they list that player's moves in the same placement.)
    fn predecessors_and_count(&self, index: u64, out: &mut Vec<u64>) -> Option<(u64, usize)> {
        self.predecessors(index, out);
        None
    }

    /// A span of indices holding every predecessor of `index`, where the game knows one far
    /// smaller than the index space (cc2p: the states that share one player's set). A worker
    /// owning that span is then sent `index` itself and lists its predecessors there, instead of
    /// being sent each of them. None: the predecessors are sent one by one.
    fn predecessor_span(&self, _index: u64) -> Option<Range<u64>> {
        None
    }

    /// [`Game::node`] of the states `first .. first + out.len()`, into `out`. The initial pass
    /// classifies every state in index order, so games that unrank a run faster in one sweep than
    /// index by index override this.
    fn nodes(&self, first: u64, out: &mut [Node]) {
        for (i, node) in out.iter_mut().enumerate() {
            *node = self.node(first + i as u64);
        }
    }

    /// Call `f` on every state that is not live (terminal or illegal), each once, and return
    /// true; or return false if the game cannot list them directly. Where they are few, this
    /// spares the kernel's initial pass from classifying every index.
    fn each_non_live(&self, _f: &mut dyn FnMut(u64, Node)) -> bool {
        false
    }

    /// True for a two-player game whose every move (a pass too) hands the turn to the other
    /// player and whose indices are seen from the side to move, as in a symmetry-reduced game that
    /// keeps one of each pair of colour-swapped states (the 2-player reductions of the games crate): `mover` is
    /// then always 0, a terminal `outcome` of 0 means the side to move has won, and a value W means
    /// "the side to move wins". A child's value is flipped as it reaches its parent.
    fn alternates_sides(&self) -> bool {
        false
    }

    /// `Some(n)` when the mover of every live state is its index modulo `n` (the players take
    /// turns in the index's lowest digit, base `n`): the kernel then reads the mover of every
    /// state an update reaches off its index, without a call into the game.
    fn mover_period(&self) -> Option<u8> {
        None
    }
}
