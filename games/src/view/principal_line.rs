//! A principal line of optimal play in one solved forcing layer, read as a two-team game (the
//! coalition against the rest): docs/games-internals.md, `games/src/view/principal_line.rs`.
//! 1. A decided line plays the shortest win and the longest resistance, so the depth drops by one
//!    every ply and the line ends after exactly `depth` plies; a drawn line follows drawn children
//!    until a state repeats (preferring one already on the line). Ties: the first move in order.

use crate::AnyGame;
use kingmaker_kernel::Node;
use kingmaker_kernel::{Value, DRAW, LOSS, WIN};
use kingmaker_tablefmt::FormatError;
use std::collections::HashMap;

/// What the line finder needs from a game: the rules' verdict on a state and its moves as text.
pub trait LineGame {
    /// Illegal, terminal (with the winner) or live (with the side to move).
    fn node(&self, index: u64) -> Node;
    /// Every legal move with the state it leads to (a pass is one move).
    fn moves(&self, index: u64) -> Vec<(String, u64)>;
}

impl LineGame for AnyGame {
    fn node(&self, index: u64) -> Node {
        kingmaker_kernel::Game::node(self, index)
    }
    fn moves(&self, index: u64) -> Vec<(String, u64)> {
        crate::Notation::moves(self, index)
    }
}

/// One ply of a line: the move that led here (`None` at the start) and the state reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ply {
    /// The move's text in the game's notation.
    pub mv: Option<String>,
    /// The state reached.
    pub index: u64,
    /// W, L or D (see `kingmaker_kernel`), read from the coalition's side.
    pub value: u8,
    /// Its depth: plies to the end with best play.
    pub depth: u16,
}

/// How a line ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The last ply is a terminal state won by `winner`.
    GameOver {
        /// The winning player (or outcome).
        winner: u8,
    },
    /// The last ply's state is the state of ply `from`: the plies `from..last` repeat forever.
    Cycle {
        /// The ply the line returns to.
        from: usize,
    },
    /// The line was cut after the given number of plies (only a drawn line can be this long).
    Cut,
}

/// A principal line: `plies[0]` is the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The plies, the start first.
    pub plies: Vec<Ply>,
    /// How it ends.
    pub ending: Ending,
}

/// Why no line could be found.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// The table could not be read (a damaged block, an I/O error): the reader's own error.
    #[error(transparent)]
    Read(#[from] FormatError),
    /// The position cannot arise in play.
    #[error("position {index} is illegal: it cannot arise in play")]
    Illegal {
        /// The position.
        index: u64,
    },
    #[error("position {index} has no W, L or D value in the table (value byte {value})")]
    /// The position has no W, L or D value.
    Unsolved {
        /// The position.
        index: u64,
        /// The byte found.
        value: u8,
    },
    #[error(
        "the table disagrees with the rules at position {index}: no move keeps its value {value} \
         (the table is damaged or belongs to another game; rebuild it)"
    )]
    /// No move keeps the position's value: a damaged table, or another game's.
    Inconsistent {
        /// The position.
        index: u64,
        /// Its value's letter.
        value: char,
    },
}

/// The letter of a value: `W`, `L`, `D`, or `-` for anything else.
pub fn value_letter(value: u8) -> char {
    Value::letter_of(value)
}

/// Finds the principal line from `start` in a layer whose coalition is `coalition` (bit `p` set:
/// player `p` plays for it). `value_of` reads `(value, depth)` from the layer's table (a read
/// error ends the search with that error); `max_plies` bounds a drawn line (a decided line is
/// never longer than its depth).
pub fn principal_line(
    game: &impl LineGame,
    coalition: u8,
    start: u64,
    value_of: impl Fn(u64) -> Result<(u8, u16), FormatError>,
    max_plies: usize,
) -> Result<Line, LineError> {
    let ply = |mv: Option<String>, index: u64| -> Result<Ply, LineError> {
        let (value, depth) = value_of(index)?;
        if !matches!(value, WIN | LOSS | DRAW) {
            return Err(LineError::Unsolved { index, value });
        }
        Ok(Ply {
            mv,
            index,
            value,
            depth,
        })
    };
    // An illegal start has no value to read: say that it is illegal, not that it is unsolved.
    if matches!(game.node(start), Node::Illegal) {
        return Err(LineError::Illegal { index: start });
    }
    let mut plies = vec![ply(None, start)?];
    let mut seen: HashMap<u64, usize> = HashMap::from([(start, 0)]);
    loop {
        let here = plies.last().expect("a line has a start").clone();
        let mover = match game.node(here.index) {
            Node::Illegal => return Err(LineError::Illegal { index: here.index }),
            Node::Terminal { outcome: winner } => {
                return Ok(Line {
                    plies,
                    ending: Ending::GameOver { winner },
                })
            }
            Node::Live { mover } => mover,
        };
        if plies.len() > max_plies {
            return Ok(Line {
                plies,
                ending: Ending::Cut,
            });
        }
        let children = game
            .moves(here.index)
            .into_iter()
            .map(|(mv, child)| ply(Some(mv), child))
            .collect::<Result<Vec<_>, _>>()?;
        // What the side to move plays for: W for the coalition's players, L for the others.
        let good = if coalition >> mover & 1 == 1 {
            WIN
        } else {
            LOSS
        };
        let pick = if here.value == DRAW {
            // Any drawn child keeps the draw; one already on the line closes the cycle at once.
            let drawn = || children.iter().filter(|c| c.value == DRAW);
            drawn()
                .find(|c| seen.contains_key(&c.index))
                .or_else(|| drawn().next())
        } else if here.value == good {
            // Shortest win: the first winning child of least depth.
            children
                .iter()
                .filter(|c| c.value == good)
                .reduce(|best, c| if c.depth < best.depth { c } else { best })
        } else if children.iter().all(|c| c.value == here.value) {
            // Longest resistance: the first child of greatest depth.
            children
                .iter()
                .reduce(|best, c| if c.depth > best.depth { c } else { best })
        } else {
            None
        };
        let Some(next) = pick.cloned() else {
            return Err(LineError::Inconsistent {
                index: here.index,
                value: value_letter(here.value),
            });
        };
        let index = next.index;
        plies.push(next);
        if let Some(&from) = seen.get(&index) {
            return Ok(Line {
                plies,
                ending: Ending::Cycle { from },
            });
        }
        seen.insert(index, plies.len() - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kingmaker_kernel::check::reference_solve;
    use kingmaker_kernel::Game;
    use kingmaker_kernel::Layer;

    /// A game given by its graph: `edges[i]` are the children of state `i`, `end[i]` the winner
    /// when `i` is terminal. The mover is `i % players`.
    struct Graph {
        players: u8,
        edges: Vec<Vec<u64>>,
        end: Vec<Option<u8>>,
    }

    impl Game for Graph {
        fn name(&self) -> String {
            "graph".into()
        }
        fn players(&self) -> u8 {
            self.players
        }
        fn size(&self) -> u64 {
            self.edges.len() as u64
        }
        fn node(&self, index: u64) -> Node {
            match self.end[index as usize] {
                Some(winner) => Node::Terminal { outcome: winner },
                None => Node::Live {
                    mover: self.mover(index),
                },
            }
        }
        fn successors(&self, index: u64, out: &mut Vec<u64>) {
            out.extend(&self.edges[index as usize]);
        }
        fn predecessors(&self, index: u64, out: &mut Vec<u64>) {
            for (p, kids) in self.edges.iter().enumerate() {
                if kids.contains(&index) {
                    out.push(p as u64);
                }
            }
        }
        fn mover(&self, index: u64) -> u8 {
            (index % self.players as u64) as u8
        }
    }

    impl LineGame for Graph {
        fn node(&self, index: u64) -> Node {
            Game::node(self, index)
        }
        fn moves(&self, index: u64) -> Vec<(String, u64)> {
            self.edges[index as usize]
                .iter()
                .map(|&c| (format!("{index}>{c}"), c))
                .collect()
        }
    }

    fn solve(g: &Graph) -> (Vec<u8>, Vec<u16>) {
        reference_solve(g, &Layer::new("solo", 0b01, 0b01))
    }

    fn line(g: &Graph, start: u64) -> Line {
        let (v, d) = solve(g);
        principal_line(g, 0b01, start, |i| Ok((v[i as usize], d[i as usize])), 1000).unwrap()
    }

    fn states(l: &Line) -> Vec<u64> {
        l.plies.iter().map(|p| p.index).collect()
    }

    /// Even states: player 0 to move; odd: player 1.
    /// 0 → {1, 3, 5}; 1 → {2}; 2 → {7 (0 wins)}; 3 → {8 (0 wins)}; 5 → {6, 9}; 6 → {10 (1 wins)};
    /// 9 → {4}; 4 → {9} (a drawn loop 4 ⇄ 9); 7, 8, 10 terminal.
    fn example() -> Graph {
        let mut edges = vec![Vec::new(); 11];
        let mut end = vec![None; 11];
        edges[0] = vec![1, 3, 5];
        edges[1] = vec![2];
        edges[2] = vec![7];
        edges[3] = vec![8];
        edges[5] = vec![6, 9];
        edges[6] = vec![10];
        edges[9] = vec![4];
        edges[4] = vec![9];
        end[7] = Some(0);
        end[8] = Some(0);
        end[10] = Some(1);
        Graph {
            players: 2,
            edges,
            end,
        }
    }

    #[test]
    fn winner_takes_the_shortest_win() {
        let g = example();
        let l = line(&g, 0);
        assert_eq!(states(&l), vec![0, 3, 8]);
        assert_eq!(l.ending, Ending::GameOver { winner: 0 });
        assert_eq!(l.plies[1].mv.as_deref(), Some("0>3"));
        assert_eq!(
            l.plies.iter().map(|p| p.depth).collect::<Vec<_>>(),
            [2, 1, 0]
        );
    }

    #[test]
    fn loser_resists_longest_and_a_draw_ends_in_its_cycle() {
        let g = example();
        // 5 (player 1 to move): to 6 loses for 0, to 9 draws; player 1 wins by going to 6.
        let l = line(&g, 5);
        assert_eq!(states(&l), vec![5, 6, 10]);
        assert_eq!(l.ending, Ending::GameOver { winner: 1 });
        // 9 is drawn: 9 → 4 → 9.
        let l = line(&g, 9);
        assert_eq!(states(&l), vec![9, 4, 9]);
        assert_eq!(l.ending, Ending::Cycle { from: 0 });
        assert!(l.plies.iter().all(|p| p.value == DRAW));
    }

    #[test]
    fn a_terminal_start_is_a_line_of_one_ply() {
        let g = example();
        let l = line(&g, 10);
        assert_eq!(states(&l), vec![10]);
        assert_eq!(l.ending, Ending::GameOver { winner: 1 });
    }

    #[test]
    fn longest_loss_is_chosen_by_the_loser() {
        // 1 (player 1 to move) → {2, 11}; 2 → {7}: 0 wins in 2; 11 → {12}; 12 → {13}; 13 → {14}:
        // 0 wins in 4 more. Player 1 loses either way and takes the long road.
        let mut edges = vec![Vec::new(); 15];
        let mut end = vec![None; 15];
        edges[1] = vec![2, 11];
        edges[2] = vec![7];
        edges[11] = vec![12];
        edges[12] = vec![13];
        edges[13] = vec![14];
        end[7] = Some(0);
        end[14] = Some(0);
        let g = Graph {
            players: 2,
            edges,
            end,
        };
        let l = line(&g, 1);
        assert_eq!(states(&l), vec![1, 11, 12, 13, 14]);
        assert_eq!(l.plies[0].depth as usize, l.plies.len() - 1);
    }

    /// On random graphs: every line plays optimally, a decided line is exactly `depth` plies long
    /// and ends in a win for the right side, a drawn line stays drawn and ends in a cycle. Two
    /// players with the `solo` layer, and three with every coalition of cc3p's layers (solo(A),
    /// enable(A→B), enable(A→C)) and a few more.
    #[test]
    fn random_graphs() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let layers = [
            (2u8, Layer::new("solo", 0b01, 0b01)),
            (3, Layer::new("solo", 0b001, 0b001)),
            (3, Layer::new("enable_ab", 0b011, 0b010)),
            (3, Layer::new("enable_ac", 0b101, 0b100)),
            (3, Layer::new("pair", 0b110, 0b110)),
        ];
        let mut draws = 0;
        for round in 0..100 {
            let (players, layer) = &layers[round % layers.len()];
            let n = 40u64;
            let mut edges = vec![Vec::new(); n as usize];
            let mut end = vec![None; n as usize];
            for i in 0..n as usize {
                if rand(5) == 0 {
                    end[i] = Some(rand(*players as u64) as u8);
                } else {
                    let k = 1 + rand(3);
                    let mut kids: Vec<u64> = (0..k).map(|_| rand(n)).collect();
                    kids.sort_unstable();
                    kids.dedup();
                    edges[i] = kids;
                }
            }
            let g = Graph {
                players: *players,
                edges,
                end,
            };
            let (v, d) = reference_solve(&g, layer);
            let read = |i: u64| Ok((v[i as usize], d[i as usize]));
            for start in 0..n {
                let l = principal_line(&g, layer.coalition, start, read, 1000).unwrap();
                let first = &l.plies[0];
                match l.ending {
                    Ending::GameOver { winner } => {
                        assert_ne!(first.value, DRAW);
                        assert_eq!(layer.wins(winner), first.value == WIN);
                        assert_eq!(l.plies.len() - 1, first.depth as usize);
                        assert!(l.plies.iter().all(|p| p.value == first.value));
                    }
                    Ending::Cycle { from } => {
                        draws += 1;
                        assert!(l.plies.iter().all(|p| p.value == DRAW));
                        assert_eq!(l.plies[from].index, l.plies.last().unwrap().index);
                    }
                    Ending::Cut => panic!("a line of at most 40 states was cut"),
                }
                // Every ply is a move of the game.
                for w in l.plies.windows(2) {
                    assert!(g.edges[w[0].index as usize].contains(&w[1].index));
                }
            }
        }
        assert!(draws > 0, "some random graphs have drawn states");
    }

    /// Three players (A moves at states ≡ 0 mod 3, B at 1, C at 2), the layer solo(A): a spoiler
    /// draw. A cannot win, since C escapes A's win at 8 by going back to 6, but A keeps B and C
    /// from forcing A out by going round the loop 0 → 1 → 2 → 0 instead of to 3 (B's win). The
    /// line keeps the draw until the start repeats.
    #[test]
    fn a_three_player_draw_ends_in_its_cycle() {
        // 0 (A) → {1, 3}; 1 (B) → {2}; 2 (C) → {0, 6}; 6 (A) → {7}; 7 (B) → {8}; 8 (C) → {6, 9};
        // 3 terminal: B wins; 9 terminal: A wins.
        let mut edges = vec![Vec::new(); 10];
        let mut end = vec![None; 10];
        edges[0] = vec![1, 3];
        edges[1] = vec![2];
        edges[2] = vec![0, 6];
        edges[6] = vec![7];
        edges[7] = vec![8];
        edges[8] = vec![6, 9];
        end[3] = Some(1);
        end[9] = Some(0);
        let g = Graph {
            players: 3,
            edges,
            end,
        };
        let solo = Layer::new("solo", 0b001, 0b001);
        let (v, d) = reference_solve(&g, &solo);
        let read = |i: u64| Ok((v[i as usize], d[i as usize]));
        assert!([0, 1, 2, 6, 7, 8].iter().all(|&i| v[i] == DRAW));
        let l = principal_line(&g, solo.coalition, 0, read, 100).unwrap();
        assert_eq!(states(&l), vec![0, 1, 2, 0]);
        assert_eq!(l.ending, Ending::Cycle { from: 0 });
        // In enable(A→B) A and B play for B's win: A goes to 3 at once.
        let ab = Layer::new("enable_ab", 0b011, 0b010);
        let (v, d) = reference_solve(&g, &ab);
        let l = principal_line(
            &g,
            ab.coalition,
            0,
            |i| Ok((v[i as usize], d[i as usize])),
            100,
        )
        .unwrap();
        assert_eq!(states(&l), vec![0, 3]);
        assert_eq!(l.ending, Ending::GameOver { winner: 1 });
    }

    #[test]
    fn a_damaged_table_is_reported() {
        let g = example();
        // Claim 0 wins at state 5 (player 1 to move), which no child supports.
        let (v, d) = solve(&g);
        let bad = |i: u64| {
            Ok(if i == 5 {
                (WIN, 3)
            } else {
                (v[i as usize], d[i as usize])
            })
        };
        let err = principal_line(&g, 0b01, 5, bad, 100).unwrap_err();
        assert!(
            matches!(err, LineError::Inconsistent { index: 5, .. }),
            "{err}"
        );
        let err = principal_line(&g, 0b01, 0, |_| Ok((0, 0)), 100).unwrap_err();
        assert!(matches!(err, LineError::Unsolved { .. }), "{err}");
    }

    /// A table that cannot be read (here state 3's block) ends the search with the reader's own
    /// error, not a made-up value.
    #[test]
    fn a_read_error_surfaces_as_itself() {
        let g = example();
        let (v, d) = solve(&g);
        let read = |i: u64| {
            if i == 3 {
                Err(FormatError::Corrupt(
                    "solo.kmt: block 0: crc32 mismatch (the block was altered or damaged)".into(),
                ))
            } else {
                Ok((v[i as usize], d[i as usize]))
            }
        };
        let err = principal_line(&g, 0b01, 0, read, 100).unwrap_err();
        assert!(matches!(err, LineError::Read(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            "solo.kmt: block 0: crc32 mismatch (the block was altered or damaged)"
        );
    }
}
