//! Two-player Chinese Checkers on Sturtevant's m×m diamond boards (`cc2p`), exactly as docs/rules.md §3
//! defines it.
//!
//! **Board.** N = m² cells in rows of widths 1, 2, …, m, …, 2, 1, numbered row by row, left to right.
//! In doubled coordinates the cell at row r, position i of a row of width w sits at
//! x = 2i − (w − 1); its neighbours are (r, x ± 2) and (r ± 1, x ± 1). The point reflection
//! (r, x) ↦ (2m − 2 − r, −x) is cell c ↦ N − 1 − c.
//!
//! **State.** Player 0's cell set, player 1's cell set (k cells each, disjoint) and the side to
//! move. Dense index: `(rank0 · C(N−k, k) + rank1) · 2 + mover`, where `rank0` is the colex rank of
//! player 0's set among the k-subsets of the N cells and `rank1` is the colex rank of player 1's set
//! among the k-subsets of the N − k cells player 0 leaves free (renumbered 0.. in cell order).
//!
//! **Classification** (`Game::node`):
//! - *Illegal*: the player to move satisfies its win condition; or (k = 6) a goal's tip is empty while
//!   the opponent holds the four cells around it (the tip rule). With [`TipRule::SolverShortcut`] the
//!   tip rule only applies when the player to move has a piece in its own start or goal area.
//! - *Terminal{winner: y}*: y is the player who just moved and y's goal is full (pieces of either
//!   colour) with at least one of y's own; or the player to move has moves, but every one of them
//!   leads into an illegal state (that player has lost: y is the other player).
//! - *Live{mover}* otherwise. A player with no move at all passes: the pass is its single successor
//!   (same placement, other player to move).
//!
//! Moves are steps and jump chains; a jump chain's reachable landings are the jump-connected
//! component of the origin (with the moving piece lifted), which is symmetric, so unmoves use the
//! same reachability from the moved piece's current cell.

use crate::game::{Game, Node};

pub mod half;
mod presentation;
pub use presentation::count_fields;

/// Smallest supported board side.
pub const MIN_BOARD: u8 = 4;
/// Largest supported board side (N = 81 cells fits the 128-bit cell masks).
pub const MAX_BOARD: u8 = 9;
/// Largest supported number of pieces per player (the start areas are defined for 1..=6).
pub const MAX_PIECES: u8 = 6;

const MAX_CELLS: usize = 81;
const K_MAX: usize = MAX_PIECES as usize;

/// Errors from constructing a game or reading a position.
#[derive(Debug, thiserror::Error)]
pub enum Cc2pError {
    /// The board side is not one of the supported sizes.
    #[error("board size {0} is out of range: cc2p supports m×m boards with m = 4..=9")]
    BoardOutOfRange(u8),
    /// The number of pieces per player is not one of the supported values.
    #[error("{0} pieces per player is out of range: cc2p supports 1..=6 pieces per player")]
    PiecesOutOfRange(u8),
    /// A position text could not be read.
    #[error(
        "cannot read cc2p position {text:?}: {reason} \
         (expected `0:<cells>;1:<cells>;<mover>`, e.g. `0:0,1,2;1:46,47,48;0`)"
    )]
    BadPosition {
        /// The text as given.
        text: String,
        /// What was wrong with it.
        reason: String,
    },
}

/// How the 6-piece tip rule (docs/rules.md §3, illegal states) is applied.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum TipRule {
    /// The rule as stated: a blocked empty tip is illegal whoever is to move.
    #[default]
    Exact,
    /// The published solver's shortcut: the tip rule is only tested when the player to move has a
    /// piece in its own start or goal area (reproduces the published 5×5/6 and 6×6/6 illegal counts).
    SolverShortcut,
}

/// One cell's neighbourhood: neighbour mask and the (jumped-over cell, landing cell) pairs, also
/// as masks (`over`, `land`) for the move generator's inner loop.
#[derive(Copy, Clone, Debug)]
struct Cell {
    nb: u128,
    over: [u128; 6],
    land: [u128; 6],
    nj: u8,
    jumps: [(u8, u8); 6],
}

/// An unranked state with what ranking its neighbours needs: both players' cells ascending
/// (`a`, `b`), player 1's compressed positions (`q`: ranks among the cells player 0 leaves free)
/// as a list and a mask, and player 0's rank.
#[derive(Copy, Clone, Debug)]
struct Expanded {
    pos: Pos,
    a: [u8; K_MAX],
    b: [u8; K_MAX],
    q: [u8; K_MAX],
    qmask: u128,
    r0: u64,
}

/// An unranked state: the two players' cell masks and the side to move.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Pos {
    o: [u128; 2],
    mover: usize,
}

/// Two-player Chinese Checkers on an m×m board with k pieces per player.
#[derive(Clone, Debug)]
pub struct Cc2p {
    m: u8,
    k: u8,
    n: u8,
    tip_rule: TipRule,
    cells: Vec<Cell>,
    /// (row, doubled x) of every cell.
    coords: Vec<(u8, i8)>,
    /// `choose[i][a]` = C(a, i) (the sizes are powers of two so masked indices need no checks).
    choose: [[u64; 128]; 8],
    /// `unrank_start[i][bucket(r)]`: the largest a with C(a, i) ≤ the smallest r of the bucket.
    unrank_start: [[u8; BUCKETS]; 8],
    start: [u128; 2],
    goal: [u128; 2],
    /// `tip[y]`: the tip cell of y's goal; `block[y]`: the cells the opponent holds to block it.
    tip: [u128; 2],
    block: [u128; 2],
    /// C(N, k) and C(N − k, k).
    sets0: u64,
    sets1: u64,
    size: u64,
}

/// Buckets of the unrank lookup: 0..16 exactly, then 8 per binary order of magnitude.
const BUCKETS: usize = 16 + 60 * 8;

/// The bucket of a rank: its value below 16, else its bit length and next three bits.
#[inline]
fn bucket(r: u64) -> usize {
    if r < 16 {
        r as usize
    } else {
        let b = 63 - r.leading_zeros() as usize;
        16 + ((b - 4) << 3) + ((r >> (b - 3)) as usize & 7)
    }
}

/// The smallest rank in a bucket.
fn bucket_floor(key: usize) -> u64 {
    if key < 16 {
        key as u64
    } else {
        let (b, top) = (4 + (key - 16) / 8, 8 + (key - 16) % 8);
        (top as u64) << (b - 3)
    }
}

#[inline]
fn bit(c: usize) -> u128 {
    1u128 << c
}

/// Iterate the set bits of a mask, lowest first.
#[inline]
fn bits(mut m: u128) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let c = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(c)
        }
    })
}

impl Cc2p {
    /// A game on the `board`×`board` diamond with `pieces` pieces per player.
    pub fn new(board: u8, pieces: u8, tip_rule: TipRule) -> Result<Cc2p, Cc2pError> {
        if !(MIN_BOARD..=MAX_BOARD).contains(&board) {
            return Err(Cc2pError::BoardOutOfRange(board));
        }
        if !(1..=MAX_PIECES).contains(&pieces) {
            return Err(Cc2pError::PiecesOutOfRange(pieces));
        }
        let m = board as usize;
        let n = m * m;
        let rows = 2 * m - 1;
        // Grid of cell ids indexed by (row, x + m - 1); x + m - 1 ranges over 0..=2m-2.
        let width = 2 * m - 1;
        let mut grid = vec![u8::MAX; rows * width];
        let mut coords = Vec::with_capacity(n);
        for r in 0..rows {
            let w = if r < m { r + 1 } else { 2 * m - 1 - r };
            for i in 0..w {
                let x = 2 * i as i32 - (w as i32 - 1);
                grid[r * width + (x + m as i32 - 1) as usize] = coords.len() as u8;
                coords.push((r as u8, x as i8));
            }
        }
        debug_assert_eq!(coords.len(), n);
        let at = |r: i32, x: i32| -> Option<usize> {
            let col = x + m as i32 - 1;
            if r < 0 || r >= rows as i32 || col < 0 || col >= width as i32 {
                return None;
            }
            let id = grid[r as usize * width + col as usize];
            (id != u8::MAX).then_some(id as usize)
        };
        const DIRS: [(i32, i32); 6] = [(0, -2), (0, 2), (-1, -1), (-1, 1), (1, -1), (1, 1)];
        let cells = coords
            .iter()
            .map(|&(r, x)| {
                let (r, x) = (r as i32, x as i32);
                let mut cell = Cell {
                    nb: 0,
                    over: [0; 6],
                    land: [0; 6],
                    nj: 0,
                    jumps: [(0, 0); 6],
                };
                for (dr, dx) in DIRS {
                    if let Some(a) = at(r + dr, x + dx) {
                        cell.nb |= bit(a);
                        if let Some(b) = at(r + 2 * dr, x + 2 * dx) {
                            cell.jumps[cell.nj as usize] = (a as u8, b as u8);
                            cell.over[cell.nj as usize] = bit(a);
                            cell.land[cell.nj as usize] = bit(b);
                            cell.nj += 1;
                        }
                    }
                }
                cell
            })
            .collect();

        let mut choose = [[0u64; 128]; 8];
        for a in 0..128 {
            choose[0][a] = 1;
            for i in 1..8 {
                choose[i][a] = if a == 0 {
                    0
                } else {
                    choose[i - 1][a - 1] + choose[i][a - 1]
                };
            }
        }
        let mut unrank_start = [[0u8; BUCKETS]; 8];
        for (i, row) in unrank_start.iter_mut().enumerate().skip(1) {
            for (key, slot) in row.iter_mut().enumerate() {
                let least = bucket_floor(key);
                *slot = (0..=MAX_CELLS)
                    .rev()
                    .find(|&a| choose[i][a] <= least)
                    .unwrap() as u8;
            }
        }
        let k = pieces as usize;
        let start0: &[usize] = match pieces {
            1 => &[0],
            2 => &[0, 1],
            3 => &[0, 1, 2],
            4 => &[0, 1, 2, 4],
            5 => &[1, 2, 3, 4, 5],
            _ => &[0, 1, 2, 3, 4, 5],
        };
        let s0: u128 = start0.iter().map(|&c| bit(c)).sum();
        let s1: u128 = start0.iter().map(|&c| bit(n - 1 - c)).sum();
        // Player 0's goal is player 1's start: tip N-1, blocked by player 1 on N-2, N-3, N-4, N-6.
        let block0: u128 = [2, 3, 4, 6].iter().map(|&d| bit(n - d)).sum();
        let block1: u128 = [1, 2, 3, 5].iter().map(|&c| bit(c)).sum();
        let sets0 = choose[k][n];
        let sets1 = choose[k][n - k];
        Ok(Cc2p {
            m: board,
            k: pieces,
            n: n as u8,
            tip_rule,
            cells,
            coords,
            choose,
            unrank_start,
            start: [s0, s1],
            goal: [s1, s0],
            tip: [bit(n - 1), bit(0)],
            block: [block0, block1],
            sets0,
            sets1,
            size: 2 * sets0 * sets1,
        })
    }

    /// The board side m.
    pub fn board(&self) -> u8 {
        self.m
    }

    /// Pieces per player k.
    pub fn pieces(&self) -> u8 {
        self.k
    }

    /// Number of cells N = m².
    pub fn cells(&self) -> u8 {
        self.n
    }

    /// The tip-rule convention this game was built with.
    pub fn tip_rule(&self) -> TipRule {
        self.tip_rule
    }

    /// Placements: player 0's k cells and player 1's k cells, disjoint: C(N, k) · C(N − k, k).
    pub fn placements(&self) -> u64 {
        self.sets0 * self.sets1
    }

    /// The number of illegal states (both sides to move), without enumerating the index space:
    /// legality only looks at the 2k start-area cells (the goals, and for k = 6 the tips and the
    /// cells that block them), so each way to fill those cells is tested once and multiplied by
    /// the ways to place the remaining pieces on the other cells. 3^(2k) ≤ 531,441 tests.
    pub fn illegal_count(&self) -> u64 {
        let k = self.k as usize;
        let special: Vec<usize> = bits(self.start[0] | self.start[1]).collect();
        let rest = self.n as usize - special.len();
        let mut total = 0u64;
        for code in 0..3usize.pow(special.len() as u32) {
            let mut o = [0u128; 2];
            let mut t = code;
            for &c in &special {
                match t % 3 {
                    1 => o[0] |= bit(c),
                    2 => o[1] |= bit(c),
                    _ => {}
                }
                t /= 3;
            }
            let (a0, a1) = (o[0].count_ones() as usize, o[1].count_ones() as usize);
            if a0 > k || a1 > k || rest < k - a0 {
                continue;
            }
            let ways = self.choose[k - a0][rest] * self.choose[k - a1][rest - (k - a0)];
            for mover in 0..2 {
                if self.illegal(&o, mover) {
                    total += ways;
                }
            }
        }
        total
    }

    /// The start position: both players on their start areas, player 0 to move.
    pub fn start_index(&self) -> u64 {
        self.rank(&Pos {
            o: self.start,
            mover: 0,
        })
    }

    /// Colour swap: board flipped (cell c ↦ N−1−c), players exchanged, side to move exchanged.
    /// An involution that commutes with moves and maps a win of one player to a win of the other.
    pub fn swap_colours(&self, index: u64) -> u64 {
        let p = self.unrank(index);
        self.rank(&Pos {
            o: [self.mirror(p.o[1]), self.mirror(p.o[0])],
            mover: 1 - p.mover,
        })
    }

    /// Read a position written as `0:<cells>;1:<cells>;<mover>` (see docs/cc2p-notation.md), or
    /// `start` for the start position.
    pub fn parse_position(&self, text: &str) -> Result<u64, Cc2pError> {
        if text.trim().eq_ignore_ascii_case("start") {
            return Ok(self.start_index());
        }
        let bad = |reason: String| Cc2pError::BadPosition {
            text: text.to_string(),
            reason,
        };
        let fields: Vec<&str> = text.trim().split(';').map(str::trim).collect();
        if fields.len() != 3 {
            return Err(bad(format!(
                "expected 3 fields separated by `;`, found {}",
                fields.len()
            )));
        }
        let mut o = [0u128; 2];
        for (y, field) in fields[..2].iter().enumerate() {
            let (label, list) = field
                .split_once(':')
                .ok_or_else(|| bad(format!("field {} must start with `{y}:`", y + 1)))?;
            if label.trim() != y.to_string() {
                return Err(bad(format!(
                    "field {} must start with `{y}:`, found `{}:`",
                    y + 1,
                    label.trim()
                )));
            }
            let list = list.trim();
            let items: Vec<&str> = if list.is_empty() {
                Vec::new()
            } else {
                list.split(',').map(str::trim).collect()
            };
            for item in items {
                let c: usize = item
                    .parse()
                    .map_err(|_| bad(format!("`{item}` is not a cell number")))?;
                if c >= self.n as usize {
                    return Err(bad(format!(
                        "cell {c} is off the board (cells are 0..={})",
                        self.n - 1
                    )));
                }
                if (o[0] | o[1]) & bit(c) != 0 {
                    return Err(bad(format!("cell {c} is listed twice")));
                }
                o[y] |= bit(c);
            }
            if o[y].count_ones() != self.k as u32 {
                return Err(bad(format!(
                    "player {y} has {} pieces, this game has {} per player",
                    o[y].count_ones(),
                    self.k
                )));
            }
        }
        let mover = match fields[2] {
            "0" => 0,
            "1" => 1,
            other => {
                return Err(bad(format!(
                    "the side to move must be 0 or 1, found `{other}`"
                )))
            }
        };
        Ok(self.rank(&Pos { o, mover }))
    }

    /// Write a position as `0:<cells>;1:<cells>;<mover>`, cells ascending.
    pub fn format_position(&self, index: u64) -> String {
        let p = self.unrank(index);
        let list = |m: u128| bits(m).map(|c| c.to_string()).collect::<Vec<_>>().join(",");
        format!("0:{};1:{};{}", list(p.o[0]), list(p.o[1]), p.mover)
    }

    /// The legal moves of a live state with their children, one per distinct child: steps
    /// `"0 12-5"`, jump chains `"0 12-26-40"` (a shortest chain), a pass `"1 pass"`. Empty for
    /// illegal and terminal states.
    pub fn moves(&self, index: u64) -> Vec<(String, u64)> {
        let p = self.unrank(index);
        let mut out = Vec::new();
        if self.illegal(&p.o, p.mover) || self.wins(&p.o, 1 - p.mover) {
            return out;
        }
        let y = p.mover;
        let all = p.o[0] | p.o[1];
        let mut any = false;
        for c in bits(p.o[y]) {
            let (dests, parent) = self.dests_with_paths(c, all & !bit(c));
            any |= dests != 0;
            for t in bits(dests) {
                let mut o = p.o;
                o[y] ^= bit(c) | bit(t);
                if self.illegal(&o, 1 - y) {
                    continue;
                }
                let mut path = vec![t];
                if self.cells[c].nb & bit(t) == 0 {
                    let mut at = t;
                    while parent[at] as usize != c {
                        at = parent[at] as usize;
                        path.push(at);
                    }
                }
                path.push(c);
                path.reverse();
                let text = path
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join("-");
                out.push((format!("{y} {text}"), self.rank(&Pos { o, mover: 1 - y })));
            }
        }
        if !any && !self.illegal(&p.o, 1 - y) {
            out.push((format!("{y} pass"), index ^ 1));
        }
        out
    }

    /// An ASCII picture of the diamond: `0` and `1` for the players' pieces, `.` for empty cells,
    /// and a last line naming the side to move.
    pub fn picture(&self, index: u64) -> String {
        let p = self.unrank(index);
        self.draw(1, |c| {
            if p.o[0] & bit(c) != 0 {
                "0".to_string()
            } else if p.o[1] & bit(c) != 0 {
                "1".to_string()
            } else {
                ".".to_string()
            }
        }) + &format!("player {} to move\n", p.mover)
    }

    /// The cell numbering as an ASCII diamond (used for docs/cc2p-notation.md).
    pub fn numbering_picture(&self) -> String {
        self.draw(2, |c| format!("{c:>2}"))
    }

    /// Draw the diamond with `label(c)` (of `cw` characters) for each cell; one x unit is `cw`
    /// columns, so neighbours in a row are `2·cw` columns apart.
    fn draw(&self, cw: usize, label: impl Fn(usize) -> String) -> String {
        let m = self.m as i32;
        let mut lines: Vec<String> = vec![String::new(); 2 * self.m as usize - 1];
        for (c, &(r, x)) in self.coords.iter().enumerate() {
            let line = &mut lines[r as usize];
            let col = (x as i32 + m - 1) as usize * cw;
            while line.len() < col {
                line.push(' ');
            }
            line.push_str(&label(c));
        }
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    // ---- index space -------------------------------------------------------------------------

    #[inline]
    fn mirror(&self, m: u128) -> u128 {
        m.reverse_bits() >> (128 - self.n as u32)
    }

    /// Colex unrank of `r` (below C(n, k)) as a k-subset of `0..n`, ascending into `out[..k]`:
    /// element i is the largest a with C(a, i) ≤ what is left of r.
    #[inline]
    fn unrank_set(&self, mut r: u64, out: &mut [u8; K_MAX]) {
        for i in (2..=self.k as usize).rev() {
            let col = &self.choose[i & 7];
            let mut a = self.unrank_start[i & 7][bucket(r)] as usize;
            while col[(a + 1) & 127] <= r {
                a += 1;
            }
            r -= col[a & 127];
            out[i - 1] = a as u8;
        }
        out[0] = r as u8;
    }

    /// Unrank an index into both players' sorted cells (and player 1's compressed positions,
    /// which the successor and predecessor ranking reuse).
    #[inline]
    fn expand(&self, index: u64) -> Expanded {
        debug_assert!(index < self.size, "index {index} out of range");
        let k = self.k as usize;
        let mover = (index & 1) as usize;
        let r = index >> 1;
        let (r0, r1) = (r / self.sets1, r % self.sets1);
        debug_assert!(r0 < self.sets0);
        let mut e = Expanded {
            pos: Pos { o: [0, 0], mover },
            a: [0; K_MAX],
            b: [0; K_MAX],
            q: [0; K_MAX],
            qmask: 0,
            r0,
        };
        self.unrank_set(r0, &mut e.a);
        for &c in &e.a[..k] {
            e.pos.o[0] |= bit(c as usize);
        }
        self.unrank_set(r1, &mut e.q);
        for j in 0..k {
            // The q-th free cell: skip over player 0's cells, ascending.
            let q = e.q[j] as usize;
            let mut c = q;
            for &x in &e.a[..k] {
                c += (x as usize <= c) as usize;
            }
            e.b[j] = c as u8;
            e.pos.o[1] |= bit(c);
            e.qmask |= bit(q);
        }
        e
    }

    #[inline]
    fn unrank(&self, index: u64) -> Pos {
        self.expand(index).pos
    }

    /// Colex rank of a cell set: the sum of C(i-th lowest cell, i), i from 1.
    #[inline]
    fn colex(&self, set: u128) -> u64 {
        let mut r = 0;
        for (i, c) in bits(set).enumerate() {
            r += self.choose[(i + 1) & 7][c & 127];
        }
        r
    }

    #[inline]
    fn rank(&self, p: &Pos) -> u64 {
        let k = self.k as usize;
        let mut a = [u8::MAX; K_MAX];
        for (i, c) in bits(p.o[0]).enumerate() {
            a[i] = c as u8;
        }
        let mut r1 = 0;
        for (i, c) in bits(p.o[1]).enumerate() {
            let below: usize = a[..k].iter().map(|&x| ((x as usize) < c) as usize).sum();
            r1 += self.choose[(i + 1) & 7][(c - below) & 127];
        }
        ((self.colex(p.o[0]) * self.sets1 + r1) << 1) | p.mover as u64
    }

    /// Every move of player `y`'s pieces in the placement `e` (piece c → t), whatever the side
    /// to move: calls `emit` with the placement rank (index without the mover bit) of each
    /// resulting placement `o` that `keep(o)` accepts. Returns whether y had any move at all.
    #[inline(always)]
    fn each_move(
        &self,
        e: &Expanded,
        y: usize,
        keep: impl Fn(&[u128; 2]) -> bool,
        mut emit: impl FnMut(u64),
    ) -> bool {
        let k = self.k as usize;
        let all = e.pos.o[0] | e.pos.o[1];
        let mut any = false;
        for j in 0..k {
            let c = if y == 0 { e.a[j] } else { e.b[j] } as usize;
            let d = self.dests(c, all & !bit(c));
            any |= d != 0;
            for t in bits(d) {
                let mut o = e.pos.o;
                o[y] ^= bit(c) | bit(t);
                if !keep(&o) {
                    continue;
                }
                let placement = if y == 0 {
                    // Player 1's cells keep their order; each one's compressed position moves up
                    // by one if c was below it and down by one if t is.
                    let mut r1 = 0;
                    for i in 0..k {
                        let b = e.b[i] as usize;
                        let q = e.q[i] as usize + (c < b) as usize - (t < b) as usize;
                        r1 += self.choose[(i + 1) & 7][q & 127];
                    }
                    self.colex(o[0]) * self.sets1 + r1
                } else {
                    let below: usize = e.a[..k].iter().map(|&x| ((x as usize) < t) as usize).sum();
                    let qmask = e.qmask ^ bit(e.q[j] as usize) ^ bit(t - below);
                    e.r0 * self.sets1 + self.colex(qmask)
                };
                emit(placement);
            }
        }
        any
    }

    // ---- rules ---------------------------------------------------------------------------------

    /// Player y's win condition on a placement (ignoring whose turn it is).
    #[inline]
    fn wins(&self, o: &[u128; 2], y: usize) -> bool {
        let g = self.goal[y];
        (o[0] | o[1]) & g == g && o[y] & g != 0
    }

    /// The 6-piece tip rule: some goal's tip is empty and the opponent holds the four cells around it.
    #[inline]
    fn tip_blocked(&self, o: &[u128; 2]) -> bool {
        if self.k != 6 {
            return false;
        }
        let all = o[0] | o[1];
        (all & self.tip[0] == 0 && o[1] & self.block[0] == self.block[0])
            || (all & self.tip[1] == 0 && o[0] & self.block[1] == self.block[1])
    }

    #[inline]
    fn illegal(&self, o: &[u128; 2], mover: usize) -> bool {
        if self.wins(o, mover) {
            return true;
        }
        if !self.tip_blocked(o) {
            return false;
        }
        match self.tip_rule {
            TipRule::Exact => true,
            TipRule::SolverShortcut => o[mover] & (self.start[mover] | self.goal[mover]) != 0,
        }
    }

    /// Every cell a piece at `from` can move to (steps and jump chains), `all` being the occupied
    /// cells with that piece lifted. Symmetric: `t ∈ dests(f)` iff `f ∈ dests(t)` for the same `all`.
    #[inline]
    fn dests(&self, from: usize, all: u128) -> u128 {
        let steps = self.cells[from].nb & !all;
        if self.cells[from].nb & all == 0 {
            return steps;
        }
        let mut seen = bit(from);
        let mut stack = [0u8; MAX_CELLS];
        stack[0] = from as u8;
        let mut sp = 1;
        while sp > 0 {
            sp -= 1;
            let cell = &self.cells[stack[sp] as usize];
            for j in 0..cell.nj as usize {
                let lb = cell.land[j];
                if all & cell.over[j] != 0 && (all | seen) & lb == 0 {
                    seen |= lb;
                    stack[sp] = cell.jumps[j].1;
                    sp += 1;
                }
            }
        }
        steps | (seen & !bit(from))
    }

    /// `dests` plus the breadth-first jump tree (`parent[t]` is the landing before `t`).
    fn dests_with_paths(&self, from: usize, all: u128) -> (u128, [u8; MAX_CELLS]) {
        let steps = self.cells[from].nb & !all;
        let mut parent = [u8::MAX; MAX_CELLS];
        let mut seen = bit(from);
        let mut queue = vec![from];
        let mut head = 0;
        while head < queue.len() {
            let at = queue[head];
            head += 1;
            let cell = &self.cells[at];
            for &(over, land) in &cell.jumps[..cell.nj as usize] {
                let lb = bit(land as usize);
                if all & bit(over as usize) != 0 && (all | seen) & lb == 0 {
                    seen |= lb;
                    parent[land as usize] = at as u8;
                    queue.push(land as usize);
                }
            }
        }
        (steps | (seen & !bit(from)), parent)
    }

    /// Whether the mover of a legal, non-terminal position has a move into a legal state (a pass
    /// counts as a move).
    fn has_legal_move(&self, p: &Pos) -> bool {
        let y = p.mover;
        let all = p.o[0] | p.o[1];
        let mut any = false;
        for c in bits(p.o[y]) {
            let d = self.dests(c, all & !bit(c));
            any |= d != 0;
            for t in bits(d) {
                let mut o = p.o;
                o[y] ^= bit(c) | bit(t);
                if !self.illegal(&o, 1 - y) {
                    return true;
                }
            }
        }
        !any && !self.illegal(&p.o, 1 - y)
    }

    fn classify(&self, p: &Pos) -> Node {
        let y = p.mover;
        if self.illegal(&p.o, y) {
            Node::Illegal
        } else if self.wins(&p.o, 1 - y) || !self.has_legal_move(p) {
            Node::Terminal {
                winner: 1 - y as u8,
            }
        } else {
            Node::Live { mover: y as u8 }
        }
    }

    /// The placement rank (index without the mover bit) of an expanded state.
    #[inline]
    fn placement(&self, e: &Expanded) -> u64 {
        e.r0 * self.sets1 + self.colex(e.qmask)
    }

    /// The placement of the colour-swapped twin of every placement `first .. first + out.len()`
    /// (`swap_colours(p << 1 | m) >> 1` for either mover m), in one sweep: player 1's compressed
    /// cells are enumerated in colex order instead of unranked, and the free cells around player
    /// 0's are looked up, so each costs a few table lookups (this is what expanding the half
    /// table to the full one spends its arithmetic on).
    pub(crate) fn twin_placements(&self, first: u64, out: &mut [u64]) {
        let k = self.k as usize;
        let n = self.n as usize;
        let (mut r0, mut r1) = (first / self.sets1, first % self.sets1);
        let mut done = 0;
        while done < out.len() {
            // Player 0's cells a (ascending) and the free cells around them.
            let mut a = [0u8; K_MAX];
            self.unrank_set(r0, &mut a);
            let mask0: u128 = a[..k].iter().map(|&c| bit(c as usize)).sum();
            let mut free = [0u8; MAX_CELLS];
            for (j, c) in bits(!mask0 & (bit(n) - 1)).enumerate() {
                free[j] = c as u8;
            }
            // The twin's player 1 is the mirror of player 0: cells n-1-a, ascending.
            let mut ma = [0usize; K_MAX];
            for j in 0..k {
                ma[j] = n - 1 - a[k - 1 - j] as usize;
            }
            let mut q = [0u8; K_MAX];
            self.unrank_set(r1, &mut q);
            let run = ((self.sets1 - r1) as usize).min(out.len() - done);
            for slot in &mut out[done..done + run] {
                // Player 1's cells b, ascending; the twin's player 0 is their mirror.
                let mut twin0 = 0u64;
                let mut mask1 = 0u128;
                for j in 0..k {
                    let b = free[q[j] as usize] as usize;
                    mask1 |= bit(b);
                    twin0 += self.choose[(k - j) & 7][(n - 1 - b) & 127];
                }
                // Mirror cell n-1-a_j has as many twin player-0 cells below it as b above a_j.
                let mut twin1 = 0u64;
                for (j, &m) in ma[..k].iter().enumerate() {
                    let above = (mask1 >> (n - m)).count_ones() as usize;
                    twin1 += self.choose[(j + 1) & 7][(m - above) & 127];
                }
                *slot = twin0 * self.sets1 + twin1;
                // The next k-subset of 0..n-k in colex order.
                let mut i = 0;
                while i + 1 < k && q[i] + 1 == q[i + 1] {
                    q[i] = i as u8;
                    i += 1;
                }
                q[i] += 1;
            }
            done += run;
            r0 += 1;
            r1 = 0;
        }
    }

    /// The colour-swapped twin of `index`, expanded: the board flipped, the players exchanged,
    /// the side to move exchanged (`swap_colours(index)`).
    #[inline]
    fn expand_swapped(&self, index: u64) -> Expanded {
        let e = self.expand(index);
        let (k, n) = (self.k as usize, self.n as usize);
        let mut s = Expanded {
            pos: Pos {
                o: [0, 0],
                mover: 1 - e.pos.mover,
            },
            a: [0; K_MAX],
            b: [0; K_MAX],
            q: [0; K_MAX],
            qmask: 0,
            r0: 0,
        };
        // Player 0 of the twin: the mirror of player 1's cells, ascending.
        for i in 0..k {
            let c = n - 1 - e.b[k - 1 - i] as usize;
            s.a[i] = c as u8;
            s.pos.o[0] |= bit(c);
            s.r0 += self.choose[(i + 1) & 7][c & 127];
        }
        // Player 1 of the twin: the mirror of player 0's cells; below mirror cell n-1-a lie the
        // mirrors of the old player 1's cells above a.
        for j in 0..k {
            let a = e.a[k - 1 - j] as usize;
            let c = n - 1 - a;
            let q = c - (e.pos.o[1] >> (a + 1)).count_ones() as usize;
            s.b[j] = c as u8;
            s.q[j] = q as u8;
            s.pos.o[1] |= bit(c);
            s.qmask |= bit(q);
        }
        s
    }

    /// The successors of an expanded state, as placements (the side to move after any move is
    /// the other player): every legal move, or the pass of a player with no move at all.
    #[inline(always)]
    fn each_successor(&self, e: &Expanded, mut emit: impl FnMut(u64)) {
        let (o, y) = (&e.pos.o, e.pos.mover);
        if self.illegal(o, y) || self.wins(o, 1 - y) {
            return;
        }
        let any = self.each_move(e, y, |o| !self.illegal(o, 1 - y), &mut emit);
        if !any && !self.illegal(o, 1 - y) {
            emit(self.placement(e));
        }
    }

    /// The predecessors of an expanded state, as placements (the other player was to move in
    /// every one of them).
    #[inline(always)]
    fn each_predecessor(&self, e: &Expanded, mut emit: impl FnMut(u64)) {
        let (o, x) = (&e.pos.o, e.pos.mover);
        if self.illegal(o, x) {
            return;
        }
        // y just moved; a predecessor is (placement before y's move, y to move), and it must be
        // live: not illegal, not already won by x. It has the legal move to this state, so it is
        // not lost for lack of legal moves.
        let y = 1 - x;
        let any = self.each_move(e, y, |o| !self.illegal(o, y) && !self.wins(o, x), &mut emit);
        // y passed: y had no move at all in this very placement. (x's win condition does not hold
        // here, since this state is legal with x to move.)
        if !any && !self.illegal(o, y) {
            emit(self.placement(e));
        }
    }
}

impl Game for Cc2p {
    fn name(&self) -> String {
        format!("cc2p-{m}x{m}-{k}", m = self.m, k = self.k)
    }

    fn players(&self) -> u8 {
        2
    }

    fn size(&self) -> u64 {
        self.size
    }

    fn node(&self, index: u64) -> Node {
        self.classify(&self.unrank(index))
    }

    fn successors(&self, index: u64, out: &mut Vec<u64>) {
        let e = self.expand(index);
        let child_mover = 1 - (index & 1);
        self.each_successor(&e, |placement| out.push((placement << 1) | child_mover));
    }

    fn predecessors(&self, index: u64, out: &mut Vec<u64>) {
        let e = self.expand(index);
        let parent_mover = 1 - (index & 1);
        self.each_predecessor(&e, |placement| out.push((placement << 1) | parent_mover));
    }

    fn mover(&self, index: u64) -> u8 {
        (index & 1) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{HashSet, VecDeque};

    fn g(m: u8, k: u8) -> Cc2p {
        Cc2p::new(m, k, TipRule::Exact).unwrap()
    }

    #[test]
    fn state_counts() {
        assert_eq!(g(7, 1).size(), 4_704);
        assert_eq!(g(7, 2).size(), 2_542_512);
        assert_eq!(g(7, 3).size(), 559_352_640);
        assert_eq!(g(4, 6).size(), 3_363_360);
        assert_eq!(g(5, 6).size(), 9_610_154_400);
        assert_eq!(g(6, 6).size(), 2_313_100_389_600);
        assert_eq!(g(7, 3).name(), "cc2p-7x7-3");
        assert_eq!(g(7, 3).players(), 2);
        // The largest space still fits the index type.
        assert!(g(9, 6).size() > 1u64 << 56);
    }

    #[test]
    fn constructor_rejects_out_of_range() {
        for (m, k) in [(3, 1), (10, 1), (0, 3), (7, 0), (7, 7), (4, 255)] {
            let e = Cc2p::new(m, k, TipRule::Exact).unwrap_err();
            assert!(!e.to_string().is_empty());
        }
        assert!(matches!(
            Cc2p::new(3, 1, TipRule::Exact),
            Err(Cc2pError::BoardOutOfRange(3))
        ));
        assert!(matches!(
            Cc2p::new(7, 7, TipRule::Exact),
            Err(Cc2pError::PiecesOutOfRange(7))
        ));
    }

    #[test]
    fn geometry() {
        for m in MIN_BOARD..=MAX_BOARD {
            let game = g(m, 1);
            let m = m as u32;
            let n = (m * m) as usize;
            let degree: u32 = game.cells.iter().map(|c| c.nb.count_ones()).sum();
            // Two directions with m(m-1) edges each, one with (m-1)².
            assert_eq!(degree / 2, 2 * m * (m - 1) + (m - 1) * (m - 1));
            // The acute corners (the tips) have 2 neighbours, the obtuse ones 3.
            assert_eq!(game.cells[0].nb, bit(1) | bit(2));
            assert_eq!(game.cells[n - 1].nb, bit(n - 2) | bit(n - 3));
            for c in 0..n {
                // Symmetric, and the point reflection is a symmetry of the board.
                for d in bits(game.cells[c].nb) {
                    assert!(game.cells[d].nb & bit(c) != 0);
                }
                assert_eq!(
                    game.mirror(game.cells[c].nb),
                    game.cells[n - 1 - c].nb,
                    "cell {c}"
                );
                for &(over, land) in &game.cells[c].jumps[..game.cells[c].nj as usize] {
                    assert!(game.cells[c].nb & bit(over as usize) != 0);
                    assert!(game.cells[land as usize].nb & bit(over as usize) != 0);
                    assert!(game.cells[c].nb & bit(land as usize) == 0);
                }
            }
        }
        let g4 = g(4, 1);
        // 4×4: rows 0 | 1 2 | 3 4 5 | 6 7 8 9 | 10 11 12 | 13 14 | 15.
        assert_eq!(
            g4.cells[4].nb,
            [1, 2, 3, 5, 7, 8].iter().map(|&c| bit(c)).sum()
        );
        assert_eq!(g4.cells[6].nb, [3, 7, 10].iter().map(|&c| bit(c)).sum());
        let mut jumps4: Vec<(u8, u8)> = g4.cells[4].jumps[..g4.cells[4].nj as usize].to_vec();
        jumps4.sort();
        assert_eq!(jumps4, vec![(7, 10), (8, 12)]);
    }

    #[test]
    fn start_areas_and_tip_cells() {
        let g6 = g(4, 6);
        assert_eq!(g6.start[0], 0b111111);
        assert_eq!(g6.start[1], 0b111111 << 10);
        assert_eq!(g6.block[0], [10, 12, 13, 14].iter().map(|&c| bit(c)).sum());
        assert_eq!(g6.block[1], [1, 2, 3, 5].iter().map(|&c| bit(c)).sum());
        let g5 = g(7, 5);
        assert_eq!(
            g5.start[1],
            [43, 44, 45, 46, 47].iter().map(|&c| bit(c)).sum()
        );
        let g4 = g(7, 4);
        assert_eq!(g4.goal[1], [0, 1, 2, 4].iter().map(|&c| bit(c)).sum());
        let s = g(7, 3).start_index();
        assert_eq!(g(7, 3).format_position(s), "0:0,1,2;1:46,47,48;0");
    }

    #[test]
    fn start_position_moves() {
        let game = g(7, 3);
        let s = game.start_index();
        assert_eq!(game.node(s), Node::Live { mover: 0 });
        let moves = game.moves(s);
        let names: Vec<&str> = moves.iter().map(|(t, _)| t.as_str()).collect();
        // 7×7 rows: 0 | 1 2 | 3 4 5 | 6 7 8 9 | ...; the tip jumps over 1 and 2.
        assert_eq!(
            names,
            ["0 0-3", "0 0-5", "0 1-3", "0 1-4", "0 2-4", "0 2-5"]
        );
        let game = g(4, 6);
        let s = game.start_index();
        let names: Vec<String> = game.moves(s).into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            names,
            [
                "0 1-6", "0 1-8", "0 2-7", "0 2-9", "0 3-6", "0 3-7", "0 4-7", "0 4-8", "0 5-8",
                "0 5-9"
            ]
        );
    }

    /// Class of every state: 0 illegal, 1 live, 2 won by player 0, 3 won by player 1.
    fn classes(game: &Cc2p) -> Vec<u8> {
        use rayon::prelude::*;
        (0..game.size())
            .into_par_iter()
            .map(|i| match game.node(i) {
                Node::Illegal => 0,
                Node::Live { mover } => {
                    assert_eq!(mover, game.mover(i));
                    1
                }
                Node::Terminal { winner } => 2 + winner,
            })
            .collect()
    }

    #[derive(Debug, Default, PartialEq, Eq)]
    struct Summary {
        illegal: u64,
        terminal: u64,
        /// Terminal states whose mover had moves, all into illegal states.
        stuck: u64,
        passes: u64,
        wins0: u64,
        wins1: u64,
        draws: u64,
        /// The start position's value: 0 or 1 (winner) or 2 (draw).
        start: u8,
    }

    fn mix(p: u64, s: u64) -> u64 {
        let mut h = p.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ s.rotate_left(29);
        h ^= h >> 31;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^ (h >> 29)
    }

    /// Check the move/unmove contract over the whole index space, then solve by counting retrograde
    /// analysis (an independent little solver: the kernel proper lives elsewhere).
    fn exhaustive(game: &Cc2p) -> Summary {
        use rayon::prelude::*;
        let class = classes(game);
        let size = game.size();
        let mut sum = Summary::default();
        let mut counter = vec![0u8; size as usize];
        const CHUNK: usize = 1 << 14;
        // Per chunk: illegal, terminal, stuck, passes, edges, edge hash.
        let parts: Vec<[u64; 6]> = counter
            .par_chunks_mut(CHUNK)
            .enumerate()
            .map(|(ci, counts)| {
                let mut t = [0u64; 6];
                let mut out = Vec::new();
                for (off, count) in counts.iter_mut().enumerate() {
                    let i = (ci * CHUNK + off) as u64;
                    out.clear();
                    game.successors(i, &mut out);
                    let c = class[i as usize];
                    match c {
                        0 => t[0] += 1,
                        1 => assert!(!out.is_empty(), "live state {i} has no successors"),
                        _ => {
                            t[1] += 1;
                            let p = game.unrank(i);
                            if !game.wins(&p.o, 1 - p.mover) {
                                t[2] += 1;
                            }
                        }
                    }
                    if c != 1 {
                        assert!(out.is_empty(), "non-live state {i} has successors");
                    }
                    if out.len() == 1 && out[0] == i ^ 1 {
                        t[3] += 1;
                    }
                    assert!(out.len() < 256);
                    *count = out.len() as u8;
                    for &s in &out {
                        assert_ne!(class[s as usize], 0, "{i} -> illegal {s}");
                        t[5] = t[5].wrapping_add(mix(i, s));
                    }
                    t[4] += out.len() as u64;
                    let mut sorted = out.clone();
                    sorted.sort_unstable();
                    sorted.dedup();
                    assert_eq!(sorted.len(), out.len(), "duplicate successors of {i}");
                }
                t
            })
            .collect();
        let (mut ns, mut hs) = (0u64, 0u64);
        for t in parts {
            sum.illegal += t[0];
            sum.terminal += t[1];
            sum.stuck += t[2];
            sum.passes += t[3];
            ns += t[4];
            hs = hs.wrapping_add(t[5]);
        }
        let (np, hp) = (0..size.div_ceil(CHUNK as u64))
            .into_par_iter()
            .map(|ci| {
                let (mut np, mut hp) = (0u64, 0u64);
                let mut out = Vec::new();
                for i in ci * CHUNK as u64..((ci + 1) * CHUNK as u64).min(size) {
                    out.clear();
                    game.predecessors(i, &mut out);
                    for &p in &out {
                        assert_eq!(class[p as usize], 1, "predecessor {p} of {i} is not live");
                        hp = hp.wrapping_add(mix(p, i));
                    }
                    np += out.len() as u64;
                }
                (np, hp)
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1.wrapping_add(b.1)));
        assert_eq!(
            (ns, hs),
            (np, hp),
            "successor and predecessor edge sets differ"
        );

        let mut out = Vec::new();
        // 0 undecided, 1 won by player 0, 2 won by player 1.
        let mut value = vec![0u8; size as usize];
        let mut queue = VecDeque::new();
        for i in 0..size {
            if class[i as usize] >= 2 {
                value[i as usize] = class[i as usize] - 1;
                queue.push_back(i);
            }
        }
        while let Some(s) = queue.pop_front() {
            let v = value[s as usize];
            out.clear();
            game.predecessors(s, &mut out);
            for &p in &out {
                let p = p as usize;
                if value[p] != 0 {
                    continue;
                }
                if game.mover(p as u64) + 1 == v {
                    value[p] = v;
                    queue.push_back(p as u64);
                } else {
                    counter[p] -= 1;
                    if counter[p] == 0 {
                        value[p] = v;
                        queue.push_back(p as u64);
                    }
                }
            }
        }
        for i in 0..size as usize {
            match (class[i], value[i]) {
                (0, _) => {}
                (_, 1) => sum.wins0 += 1,
                (_, 2) => sum.wins1 += 1,
                _ => sum.draws += 1,
            }
        }
        sum.start = match value[game.start_index() as usize] {
            0 => 2,
            v => v - 1,
        };
        sum
    }

    #[test]
    fn published_7x7_1() {
        let s = exhaustive(&g(7, 1));
        assert_eq!(
            (s.illegal, s.wins0, s.wins1, s.draws),
            (96, 2_304, 2_304, 0)
        );
        assert_eq!(s.start, 0);
    }

    #[test]
    fn published_7x7_2() {
        let s = exhaustive(&g(7, 2));
        assert_eq!(
            (s.illegal, s.wins0, s.wins1, s.draws),
            (10_810, 1_265_851, 1_265_851, 0)
        );
        assert_eq!(s.start, 0);
    }

    #[test]
    fn published_4x4_6() {
        let s = exhaustive(&g(4, 6));
        eprintln!("4x4/6: {s:?}");
        assert_eq!(
            (s.illegal, s.wins0, s.wins1, s.draws),
            (405_420, 1_436_159, 1_436_159, 85_622)
        );
        assert_eq!(s.start, 0);
    }

    #[test]
    fn illegal_counts_by_enumeration() {
        for (m, k, want) in [(7, 1, 96), (7, 2, 10_810), (4, 6, 405_420)] {
            let game = g(m, k);
            let class = classes(&game);
            let got = class.iter().filter(|&&c| c == 0).count() as u64;
            assert_eq!(got, want, "{m}x{m}/{k}");
            assert_eq!(game.illegal_count(), want, "{m}x{m}/{k} by formula");
        }
        // `kingmaker count` uses the formula: it must agree with `node` on every small board, in
        // both tip-rule conventions, and the placements with the index space.
        for tip_rule in [TipRule::Exact, TipRule::SolverShortcut] {
            for (m, k) in (1..=6)
                .map(|k| (4, k))
                .chain([(5, 2), (5, 3), (7, 1), (7, 2)])
            {
                let game = Cc2p::new(m, k, tip_rule).unwrap();
                let enumerated = (0..game.size())
                    .filter(|&i| game.node(i) == Node::Illegal)
                    .count() as u64;
                let what = format!("{m}x{m}/{k} {tip_rule:?}");
                assert_eq!(game.illegal_count(), enumerated, "{what}");
                assert_eq!(2 * game.placements(), game.size(), "{what}");
            }
        }
    }

    #[test]
    fn illegal_counts_published() {
        let shortcut = |m, k| Cc2p::new(m, k, TipRule::SolverShortcut).unwrap();
        assert_eq!(g(7, 3).illegal_count(), 576_840);
        assert_eq!(shortcut(7, 3).illegal_count(), 576_840);
        assert_eq!(g(4, 6).illegal_count(), 405_420);
        assert_eq!(g(5, 6).illegal_count(), 64_173_018);
        assert_eq!(shortcut(5, 6).illegal_count(), 63_860_706);
        assert_eq!(shortcut(6, 6).illegal_count(), 1_898_692_650);
    }

    // ---- per-state properties ------------------------------------------------------------------

    fn set(v: &[u64]) -> HashSet<u64> {
        let s: HashSet<u64> = v.iter().copied().collect();
        assert_eq!(s.len(), v.len(), "duplicates in {v:?}");
        s
    }

    fn swap_node(n: Node) -> Node {
        match n {
            Node::Illegal => Node::Illegal,
            Node::Live { mover } => Node::Live { mover: 1 - mover },
            Node::Terminal { winner } => Node::Terminal { winner: 1 - winner },
        }
    }

    fn succ(game: &Cc2p, i: u64) -> Vec<u64> {
        let mut v = Vec::new();
        game.successors(i, &mut v);
        v
    }

    fn pred(game: &Cc2p, i: u64) -> Vec<u64> {
        let mut v = Vec::new();
        game.predecessors(i, &mut v);
        v
    }

    fn check_state(game: &Cc2p, i: u64) {
        assert!(i < game.size());
        let p = game.unrank(i);
        assert_eq!(p.o[0].count_ones(), game.k as u32);
        assert_eq!(p.o[1].count_ones(), game.k as u32);
        assert_eq!(p.o[0] & p.o[1], 0);
        assert!(p.o[0] | p.o[1] < bit(game.n as usize));
        assert_eq!(game.rank(&p), i);
        let text = game.format_position(i);
        assert_eq!(game.parse_position(&text).unwrap(), i, "{text}");

        let node = game.node(i);
        let sw = game.swap_colours(i);
        assert_eq!(game.swap_colours(sw), i);
        assert_eq!(game.node(sw), swap_node(node));

        let s = succ(game, i);
        let ss = set(&s);
        match node {
            Node::Live { mover } => {
                assert_eq!(mover, game.mover(i));
                assert!(!s.is_empty());
            }
            _ => assert!(s.is_empty()),
        }
        for &c in &s {
            assert_ne!(game.node(c), Node::Illegal, "{i} -> illegal {c}");
            assert_eq!(game.mover(c), 1 - game.mover(i));
            assert!(set(&pred(game, c)).contains(&i), "{i} -> {c} has no unmove");
        }
        let mapped: HashSet<u64> = s.iter().map(|&c| game.swap_colours(c)).collect();
        assert_eq!(set(&succ(game, sw)), mapped);

        let moves = game.moves(i);
        let mc: Vec<u64> = moves.iter().map(|m| m.1).collect();
        assert_eq!(set(&mc), ss);
        for (text, _) in &moves {
            assert!(text.starts_with(&format!("{} ", game.mover(i))), "{text}");
        }

        let ps = pred(game, i);
        let pset = set(&ps);
        if node == Node::Illegal {
            assert!(ps.is_empty());
        }
        for &q in &ps {
            assert_eq!(
                game.node(q),
                Node::Live {
                    mover: 1 - game.mover(i)
                }
            );
            assert!(
                set(&succ(game, q)).contains(&i),
                "unmove {q} of {i} is no move"
            );
        }
        let mapped: HashSet<u64> = pset.iter().map(|&c| game.swap_colours(c)).collect();
        assert_eq!(set(&pred(game, sw)), mapped);

        let pic = game.picture(i);
        assert_eq!(
            pic.chars().filter(|c| matches!(c, '0' | '1' | '.')).count(),
            game.n as usize + 1
        );
    }

    /// A random position with pieces drawn mostly near the two start areas, where the rules'
    /// special cases (wins, the tip rule, moves into illegal states) live.
    fn biased_index(game: &Cc2p, seed: u64) -> u64 {
        use rand::{rngs::StdRng, Rng, SeedableRng};
        let mut rng = StdRng::seed_from_u64(seed);
        let n = game.n as usize;
        let near = (3 * game.k as usize).max(6).min(n / 2);
        let mut o = [0u128; 2];
        for y in 0..2 {
            while o[y].count_ones() < game.k as u32 {
                let c = if rng.gen_bool(0.7) {
                    let c = rng.gen_range(0..near);
                    if rng.gen_bool(0.5) {
                        c
                    } else {
                        n - 1 - c
                    }
                } else {
                    rng.gen_range(0..n)
                };
                if (o[0] | o[1]) & bit(c) == 0 {
                    o[y] |= bit(c);
                }
            }
        }
        game.rank(&Pos {
            o,
            mover: rng.gen_range(0..2),
        })
    }

    static GAMES: std::sync::LazyLock<Vec<Cc2p>> = std::sync::LazyLock::new(|| {
        let mut v: Vec<Cc2p> = [
            (7, 1),
            (7, 2),
            (7, 3),
            (4, 6),
            (5, 6),
            (4, 1),
            (5, 4),
            (6, 5),
            (9, 6),
            (8, 3),
        ]
        .iter()
        .map(|&(m, k)| g(m, k))
        .collect();
        v.push(Cc2p::new(5, 6, TipRule::SolverShortcut).unwrap());
        v.push(Cc2p::new(4, 6, TipRule::SolverShortcut).unwrap());
        v
    });

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn random_states(which in 0..12usize, r in any::<u64>()) {
            let game = &GAMES[which];
            check_state(game, r % game.size());
        }

        #[test]
        fn random_states_near_goals(which in 0..12usize, seed in any::<u64>()) {
            let game = &GAMES[which];
            check_state(game, biased_index(game, seed));
        }
    }

    #[test]
    fn colex_unrank_at_bucket_edges() {
        for k in 1..=6u8 {
            let game = g(9, k);
            let top = game.choose[k as usize][81];
            let mut ranks: Vec<u64> = (0..=81)
                .flat_map(|a| {
                    let c = game.choose[k as usize][a];
                    [c.saturating_sub(1), c, c + 1]
                })
                .chain((0..BUCKETS).map(bucket_floor))
                .chain((0..BUCKETS).map(|b| bucket_floor(b).saturating_sub(1)))
                .collect();
            ranks.extend((0..2000).map(|j| top / 2000 * j + j));
            ranks.retain(|&r| r < top);
            for r in ranks {
                let mut out = [0u8; K_MAX];
                game.unrank_set(r, &mut out);
                let set = &out[..k as usize];
                assert!(set.windows(2).all(|w| w[0] < w[1]), "k={k} r={r} {set:?}");
                let mask = set.iter().map(|&c| bit(c as usize)).sum();
                assert_eq!(game.colex(mask), r, "k={k}");
            }
        }
    }

    #[test]
    fn notation_doc_matches_the_code() {
        let doc = include_str!("../../../docs/cc2p-notation.md");
        for m in [4, 7] {
            let pic = g(m, 1).numbering_picture();
            assert!(doc.contains(&pic), "numbering picture of {m}x{m}:\n{pic}");
        }
        let game = g(7, 3);
        assert!(doc.contains(&game.picture(game.start_index())));
        assert_eq!(
            game.cells[12].nb,
            [11, 13, 7, 8, 17, 18].iter().map(|&c| bit(c)).sum()
        );
        let i = game.parse_position("0:0,1,12;1:18,32,48;0").unwrap();
        let moves: Vec<String> = game.moves(i).into_iter().map(|m| m.0).collect();
        // 18 is taken and 7 is empty (nothing to jump over towards 3).
        for (m, present) in [
            ("0 12-25-38", true),
            ("0 12-25", true),
            ("0 12-7", true),
            ("0 12-18", false),
            ("0 12-3", false),
        ] {
            assert_eq!(moves.iter().any(|x| x == m), present, "{m} in {moves:?}");
        }
        for text in ["0:24,40,47;1:0,2,9;1", "0:0,1,2;1:46,47,48;0"] {
            let i = game.parse_position(text).unwrap();
            assert_eq!(game.format_position(i), text);
        }
        let g46 = g(4, 6);
        let text = "0:0,1,2,3,4,5;1:10,11,12,13,14,15;0";
        assert_eq!(g46.format_position(g46.start_index()), text);
        // `start` names the start position (as in cc3p's notation), for query and the explorer.
        let g72 = g(7, 2);
        let start = g72.parse_position(" Start ").unwrap();
        assert_eq!(start, g72.start_index());
        assert_eq!(g72.format_position(start), "0:0,1;1:47,48;0");
    }

    #[test]
    fn parse_errors() {
        let game = g(7, 3);
        for bad in [
            "",
            "0:0,1,2;1:46,47,48",
            "0:0,1,2;1:46,47,48;2",
            "0:0,1;1:46,47,48;0",
            "0:0,1,2;1:46,47,49;0",
            "0:0,1,2;1:2,47,48;0",
            "1:0,1,2;0:46,47,48;0",
            "0:0,1,x;1:46,47,48;0",
        ] {
            let e = game.parse_position(bad).unwrap_err();
            assert!(e.to_string().contains("expected"), "{e}");
        }
        let i = game.parse_position(" 0: 2,1,0 ; 1:48,47,46 ; 1 ").unwrap();
        assert_eq!(game.format_position(i), "0:0,1,2;1:46,47,48;1");
    }

    #[test]
    fn twin_placements_are_the_swap() {
        use rand::{rngs::StdRng, Rng, SeedableRng};
        let mut rng = StdRng::seed_from_u64(7);
        for game in GAMES.iter() {
            let placements = game.size() / 2;
            // Runs across block boundaries (player 0's rank changes) and at both ends.
            let mut starts = vec![0, placements - 1000.min(placements), game.sets1 - 3];
            starts.extend((0..20).map(|_| rng.gen_range(0..placements)));
            // 7×7 / 1 has 48 placements per block: runs over several blocks there.
            starts.extend((1..4).map(|b| b * game.sets1 - 5));
            for first in starts {
                let len = (2 * game.sets1 + 7).min(3000).min(placements - first) as usize;
                let mut out = vec![0; len];
                game.twin_placements(first, &mut out);
                for (i, &t) in out.iter().enumerate() {
                    let p = first + i as u64;
                    assert_eq!(t, game.swap_colours(p << 1) >> 1, "{} {p}", game.name());
                    assert_eq!(t, game.swap_colours(p << 1 | 1) >> 1);
                }
            }
        }
    }

    #[test]
    fn swap_of_start_is_start_with_other_mover() {
        for k in 1..=6 {
            let game = g(7, k);
            assert_eq!(
                game.swap_colours(game.start_index()),
                game.start_index() ^ 1
            );
        }
    }

    /// `cargo test --release -p kingmaker-worker --lib games::cc2p::tests::throughput -- --ignored
    /// --nocapture`: single-thread successor and predecessor rates on a contiguous index range and
    /// on random indices.
    #[test]
    #[ignore]
    fn throughput() {
        use rand::{rngs::StdRng, Rng, SeedableRng};
        // On-CPU time of this thread (the machine is shared), wall clock where unavailable.
        struct Instant(u64, std::time::Instant);
        impl Instant {
            fn cpu_ns() -> Option<u64> {
                let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
                text.split_whitespace().next()?.parse().ok()
            }
            fn now() -> Instant {
                Instant(Self::cpu_ns().unwrap_or(0), std::time::Instant::now())
            }
            fn elapsed(&self) -> std::time::Duration {
                match Self::cpu_ns() {
                    Some(ns) if self.0 > 0 => std::time::Duration::from_nanos(ns - self.0),
                    _ => self.1.elapsed(),
                }
            }
        }
        for (m, k) in [(7, 3), (4, 6), (5, 6), (7, 6)] {
            let game = g(m, k);
            let n = 2_000_000u64;
            let mut rng = StdRng::seed_from_u64(1);
            let random: Vec<u64> = (0..n).map(|_| rng.gen_range(0..game.size())).collect();
            let first = game.size() / 3;
            let contiguous: Vec<u64> = (first..first + n).collect();
            for (label, idx) in [("contiguous", &contiguous), ("random", &random)] {
                let mut out = Vec::new();
                let t = Instant::now();
                let mut children = 0usize;
                for &i in idx {
                    out.clear();
                    game.successors(i, &mut out);
                    children += out.len();
                }
                let ts = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let mut parents = 0usize;
                for &i in idx {
                    out.clear();
                    game.predecessors(i, &mut out);
                    parents += out.len();
                }
                let tp = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let mut live = 0usize;
                for &i in idx {
                    live += matches!(game.node(i), Node::Live { .. }) as usize;
                }
                let tn = t.elapsed().as_secs_f64();
                eprintln!(
                    "{m}x{m}/{k} {label}: successors {:.2} M states/s ({:.1} children/state), \
                     predecessors {:.2} M states/s ({:.1}/state), node {:.2} M/s ({live} live)",
                    n as f64 / ts / 1e6,
                    children as f64 / n as f64,
                    n as f64 / tp / 1e6,
                    parents as f64 / n as f64,
                    n as f64 / tn / 1e6,
                );
            }
        }
    }

    /// `CC2P_CENSUS=7,3 cargo test --release -p kingmaker-worker --lib games::cc2p::tests::census
    /// -- --ignored --nocapture`: class counts over a whole index space (all cores), including the
    /// states lost because every move leads into an illegal state and the states with no move.
    #[test]
    #[ignore]
    fn census() {
        use rayon::prelude::*;
        let spec = std::env::var("CC2P_CENSUS").unwrap_or_else(|_| "7,3".to_string());
        let nums: Vec<u8> = spec.split(',').map(|x| x.trim().parse().unwrap()).collect();
        let rule = if nums.get(2) == Some(&1) {
            TipRule::SolverShortcut
        } else {
            TipRule::Exact
        };
        let game = Cc2p::new(nums[0], nums[1], rule).unwrap();
        let chunk = 1u64 << 20;
        let chunks = game.size().div_ceil(chunk);
        // illegal, live, won (by the player who just moved), stuck (lost for want of a legal
        // move), no move at all (live: passes)
        let total = (0..chunks)
            .into_par_iter()
            .map(|c| {
                let mut t = [0u64; 5];
                for i in c * chunk..((c + 1) * chunk).min(game.size()) {
                    let p = game.unrank(i);
                    let y = p.mover;
                    let slot = match game.classify(&p) {
                        Node::Illegal => 0,
                        Node::Live { .. } => {
                            let all = p.o[0] | p.o[1];
                            if bits(p.o[y]).all(|c| game.dests(c, all & !bit(c)) == 0) {
                                t[4] += 1;
                            }
                            1
                        }
                        Node::Terminal { .. } if game.wins(&p.o, 1 - y) => 2,
                        Node::Terminal { .. } => 3,
                    };
                    t[slot] += 1;
                }
                t
            })
            .reduce(|| [0u64; 5], |a, b| std::array::from_fn(|j| a[j] + b[j]));
        eprintln!(
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
}
