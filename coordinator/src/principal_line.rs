//! A principal line of optimal play in a solved two-player game.
//!
//! The table is the `solo` layer of a two-player game: coalition {player 0}, objective "player 0
//! wins". So W means player 0 can force a win, L means player 1 can, D means neither can (with
//! best play the game goes on forever). The depth of a decided state is the wave that decided it:
//! a won state's depth is one more than its best winning child's, a lost state's depth one more
//! than its slowest child's.
//!
//! From a decided state the line plays the *shortest win* for the side that wins (a winning child
//! of least depth) and the *longest resistance* for the side that loses (a child of greatest
//! depth). The depth drops by one every ply, so the line ends in a terminal state after exactly
//! `depth` plies. From a drawn state the line follows drawn children (the only ones that keep the
//! draw) until a state repeats; it then ends with the repeating cycle, a draw record. To keep the
//! cycle short it prefers a drawn child that is already on the line. Ties go to the first move in
//! the game's move order, so the line is deterministic.

use kingmaker_tablefmt::FormatError;
use kingmaker_worker::kernel::{Value, DRAW, LOSS, WIN};
use kingmaker_worker::spec::AnyGame;
use kingmaker_worker::Node;
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
        kingmaker_worker::Game::node(self, index)
    }
    fn moves(&self, index: u64) -> Vec<(String, u64)> {
        kingmaker_worker::Notation::moves(self, index)
    }
}

/// One ply of a line: the move that led here (`None` at the start) and the state reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ply {
    pub mv: Option<String>,
    pub index: u64,
    /// W, L or D (see `kingmaker_worker::kernel`), read from player 0's side.
    pub value: u8,
    pub depth: u16,
}

/// How a line ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The last ply is a terminal state won by `winner`.
    GameOver { winner: u8 },
    /// The last ply's state is the state of ply `from`: the plies `from..last` repeat forever.
    Cycle { from: usize },
    /// The line was cut after the given number of plies (only a drawn line can be this long).
    Cut,
}

/// A principal line: `plies[0]` is the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub plies: Vec<Ply>,
    pub ending: Ending,
}

/// Why no line could be found.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// The table could not be read (a damaged block, an I/O error): the reader's own error.
    #[error(transparent)]
    Read(#[from] FormatError),
    #[error("position {index} is illegal: it cannot arise in play")]
    Illegal { index: u64 },
    #[error("position {index} has no W, L or D value in the table (value byte {value})")]
    Unsolved { index: u64, value: u8 },
    #[error(
        "the table disagrees with the rules at position {index}: no move keeps its value {value} \
         (the table is damaged or belongs to another game; rebuild it)"
    )]
    Inconsistent { index: u64, value: char },
}

/// The letter of a value: `W`, `L`, `D`, or `-` for anything else.
pub fn value_letter(value: u8) -> char {
    Value::letter_of(value)
}

/// Finds the principal line from `start`. `value_of` reads `(value, depth)` from the table (a
/// read error ends the search with that error); `max_plies` bounds a drawn line (a decided line
/// is never longer than its depth).
pub fn principal_line(
    game: &impl LineGame,
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
    let mut plies = vec![ply(None, start)?];
    let mut seen: HashMap<u64, usize> = HashMap::from([(start, 0)]);
    loop {
        let here = plies.last().expect("a line has a start").clone();
        let mover = match game.node(here.index) {
            Node::Illegal => return Err(LineError::Illegal { index: here.index }),
            Node::Terminal { winner } => {
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
        let good = if mover == 0 { WIN } else { LOSS };
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
    use kingmaker_worker::kernel::check::reference_solve;
    use kingmaker_worker::kernel::Layer;
    use kingmaker_worker::Game;

    /// A two-player game given by its graph: `edges[i]` are the children of state `i`, `end[i]` the
    /// winner when `i` is terminal. The mover is `i % 2`.
    struct Graph {
        edges: Vec<Vec<u64>>,
        end: Vec<Option<u8>>,
    }

    impl Game for Graph {
        fn name(&self) -> String {
            "graph".into()
        }
        fn players(&self) -> u8 {
            2
        }
        fn size(&self) -> u64 {
            self.edges.len() as u64
        }
        fn node(&self, index: u64) -> Node {
            match self.end[index as usize] {
                Some(winner) => Node::Terminal { winner },
                None => Node::Live {
                    mover: (index % 2) as u8,
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
            (index % 2) as u8
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
        principal_line(g, start, |i| Ok((v[i as usize], d[i as usize])), 1000).unwrap()
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
        Graph { edges, end }
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
        let g = Graph { edges, end };
        let l = line(&g, 1);
        assert_eq!(states(&l), vec![1, 11, 12, 13, 14]);
        assert_eq!(l.plies[0].depth as usize, l.plies.len() - 1);
    }

    /// On random graphs: every line plays optimally, a decided line is exactly `depth` plies long
    /// and ends in a win for the right side, a drawn line stays drawn and ends in a cycle.
    #[test]
    fn random_graphs() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..50 {
            let n = 40u64;
            let mut edges = vec![Vec::new(); n as usize];
            let mut end = vec![None; n as usize];
            for i in 0..n as usize {
                if rand(5) == 0 {
                    end[i] = Some(rand(2) as u8);
                } else {
                    let k = 1 + rand(3);
                    let mut kids: Vec<u64> = (0..k).map(|_| rand(n)).collect();
                    kids.sort_unstable();
                    kids.dedup();
                    edges[i] = kids;
                }
            }
            let g = Graph { edges, end };
            let (v, d) = solve(&g);
            for start in 0..n {
                let l = principal_line(&g, start, |i| Ok((v[i as usize], d[i as usize])), 1000)
                    .unwrap();
                let first = &l.plies[0];
                match l.ending {
                    Ending::GameOver { winner } => {
                        assert_ne!(first.value, DRAW);
                        assert_eq!(winner == 0, first.value == WIN);
                        assert_eq!(l.plies.len() - 1, first.depth as usize);
                        assert!(l.plies.iter().all(|p| p.value == first.value));
                    }
                    Ending::Cycle { from } => {
                        assert!(l.plies.iter().all(|p| p.value == DRAW));
                        assert_eq!(l.plies[from].index, l.plies.last().unwrap().index);
                    }
                    Ending::Cut => panic!("a line of at most 40 states was cut"),
                }
            }
        }
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
        let err = principal_line(&g, 5, bad, 100).unwrap_err();
        assert!(
            matches!(err, LineError::Inconsistent { index: 5, .. }),
            "{err}"
        );
        let err = principal_line(&g, 0, |_| Ok((0, 0)), 100).unwrap_err();
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
        let err = principal_line(&g, 0, read, 100).unwrap_err();
        assert!(matches!(err, LineError::Read(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            "solo.kmt: block 0: crc32 mismatch (the block was altered or damaged)"
        );
    }
}
