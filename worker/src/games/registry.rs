//! The game registry: every game the tool knows, in one place. `GameSpec` is the serialisable
//! description of a run's game that coordinator and workers exchange (`run.json`); `AnyGame` is
//! the one type the kernel is instantiated for, and it forwards the game traits ([`Game`],
//! [`Notation`]) to the game's own code. Nothing outside `games/` names a game: a new game is a
//! folder under `games/` and its entries here.

use crate::game::{Game, Node};
use crate::games::cc2p::half::Cc2pHalf;
use crate::games::cc2p::{self, Cc2p, TipRule};
use crate::games::cc3p::{self, Cc3p};
use crate::games::go::{self, Go, Surface};
use crate::games::toppen::{Toppen, ToppenOptions};
use crate::kernel::Layer;
use crate::notation::Notation;
use crate::reduction::Reduction;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::any::Any;

/// A game family and its parameters, as written to `run.json` and sent to workers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "game", rename_all = "lowercase")]
pub enum GameSpec {
    Cc3p {
        level: u8,
    },
    /// `first`: the player who moves first at the start (0 = A); `diagonal`: 8-neighbour moves.
    Toppen {
        first: u8,
        diagonal: bool,
    },
    /// `board`×`board` diamond, `pieces` per player; `shortcut_tip_rule`: the published solver's
    /// shortcut for the 6-piece tip rule instead of the exact rule.
    Cc2p {
        board: u8,
        pieces: u8,
        shortcut_tip_rule: bool,
    },
    /// Go on `surface` (plane, cylinder, torus, klein, projective), `rows`×`cols`: one layer per
    /// threshold "Black's final score ≥ k". `thresholds` empty: the layers of a binary search for
    /// the start's optimal score ([`GameSpec::next_layer`]); else exactly these.
    Go {
        surface: String,
        rows: u8,
        cols: u8,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        thresholds: Vec<i32>,
    },
    /// The colour-swap half of `Cc2p` with the same parameters (`games::cc2p::half`), and with
    /// `mirror` the quarter (reduced by the board's reflection too): what the kernel solves for a
    /// cc2p build, never a run's game (see [`GameSpec::reduced`]). Runs written before the
    /// quarter existed have no `mirror` and solve the half.
    #[serde(rename = "cc2p_half")]
    Cc2pHalf {
        board: u8,
        pieces: u8,
        shortcut_tip_rule: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        mirror: bool,
    },
}

impl GameSpec {
    /// Construct the game (may take a moment: ranking tables, catalogues).
    pub fn build(&self) -> anyhow::Result<AnyGame> {
        Ok(match self {
            GameSpec::Cc3p { level } => AnyGame::Cc3p(Cc3p::new(*level)?),
            GameSpec::Toppen { first, diagonal } => AnyGame::Toppen(Toppen::new(ToppenOptions {
                first: *first,
                diagonal: *diagonal,
            })?),
            GameSpec::Cc2p {
                board,
                pieces,
                shortcut_tip_rule,
            } => AnyGame::Cc2p(cc2p(*board, *pieces, *shortcut_tip_rule)?),
            GameSpec::Cc2pHalf {
                board,
                pieces,
                shortcut_tip_rule,
                mirror,
            } => {
                let full = cc2p(*board, *pieces, *shortcut_tip_rule)?;
                AnyGame::Cc2pHalf(if *mirror {
                    anyhow::ensure!(
                        full.has_reflection(),
                        "{} has no quarter: the board's reflection is not a symmetry of its rules",
                        full.name()
                    );
                    Cc2pHalf::quarter(full)
                } else {
                    Cc2pHalf::new(full)
                })
            }
            GameSpec::Go {
                surface,
                rows,
                cols,
                thresholds,
            } => {
                let game = Go::new(Surface::parse(surface)?, *rows as usize, *cols as usize)?;
                for (i, &k) in thresholds.iter().enumerate() {
                    anyhow::ensure!(
                        !thresholds[..i].contains(&k),
                        "--thresholds lists {k} twice; list each threshold once"
                    );
                    game.threshold_layer(k)?;
                }
                AnyGame::Go(game)
            }
        })
    }

    /// The smaller game the kernel solves instead of this one, when a symmetry allows it and the
    /// finished tables can be expanded back: cc2p's colour-swap quarter, or half where the
    /// board's reflection is no symmetry (expanded by `Cc2pHalf::expand_rows`). None for games
    /// solved as they are.
    pub fn reduced(&self) -> Option<GameSpec> {
        match *self {
            GameSpec::Cc2p {
                board,
                pieces,
                shortcut_tip_rule,
            } => Some(GameSpec::Cc2pHalf {
                board,
                pieces,
                shortcut_tip_rule,
                mirror: cc2p(board, pieces, shortcut_tip_rule).is_ok_and(|g| g.has_reflection()),
            }),
            _ => None,
        }
    }

    /// The family name used on the command line and in summaries.
    pub fn family(&self) -> &'static str {
        match self {
            GameSpec::Cc3p { .. } => "cc3p",
            GameSpec::Toppen { .. } => "toppen",
            GameSpec::Cc2p { .. } => "cc2p",
            GameSpec::Cc2pHalf { .. } => "cc2p_half",
            GameSpec::Go { .. } => "go",
        }
    }

    /// The size of the game's index space and how many states are illegal, without solving, as
    /// `kingmaker count` prints it (numbers as strings: JSON readers lose digits past 2^53).
    pub fn count(&self) -> anyhow::Result<Value> {
        let mut out = serde_json::to_value(self)?;
        let extra = match *self {
            GameSpec::Cc3p { level } => cc3p::count_fields(level)?,
            GameSpec::Cc2p {
                board,
                pieces,
                shortcut_tip_rule,
            } => cc2p::count_fields(board, pieces, shortcut_tip_rule)?,
            _ => enumerated_count(&self.build()?),
        };
        for (k, v) in extra {
            out[k] = v;
        }
        Ok(out)
    }

    /// The next layer to solve, given the value at the start of every layer solved so far, for a
    /// game whose layers depend on the answers (Go's search for the optimal score); None when it
    /// has all it needs, and always for games with a fixed set of layers.
    pub fn next_layer(&self, start_values: &[(String, u8)]) -> Option<Layer> {
        let GameSpec::Go { thresholds, .. } = self else {
            return None;
        };
        if !thresholds.is_empty() {
            return None;
        }
        let Ok(AnyGame::Go(game)) = self.build() else {
            return None;
        };
        let solved: Vec<(i32, u8)> = start_values
            .iter()
            .filter_map(|(name, v)| Some((Go::layer_threshold(name)?, *v)))
            .collect();
        let k = go::search::next_threshold(game.geometry().n, &solved)?;
        game.threshold_layer(k).ok()
    }

    /// The game's parameters as `summary.json` lists them (cc2p's board written `MxM`).
    pub fn params(&self) -> Map<String, Value> {
        let Ok(Value::Object(mut params)) = serde_json::to_value(self) else {
            unreachable!("a spec serialises to an object")
        };
        params.remove("game");
        if let GameSpec::Cc2p { board, .. } = self {
            params.insert("board".into(), json!(format!("{board}x{board}")));
        }
        params
    }

    /// Every layer this game's build solves, in order.
    pub fn layers(&self) -> Vec<Layer> {
        match self {
            // Players A, B, C are 0, 1, 2. The other nine questions follow by rotation.
            GameSpec::Cc3p { .. } => vec![
                Layer::new("solo", 0b001, 0b001),
                Layer::new("enable_ab", 0b011, 0b010),
                Layer::new("enable_ac", 0b101, 0b100),
            ],
            // Two-player games need one layer: "the first colour (player 0) wins".
            // In the half game "player 0" is the side to move, and the table expands to this one.
            GameSpec::Toppen { .. } | GameSpec::Cc2p { .. } | GameSpec::Cc2pHalf { .. } => {
                vec![Layer::new("solo", 0b01, 0b01)]
            }
            // Bad sizes or thresholds give no layer here; `build` refuses them.
            GameSpec::Go { thresholds, .. } => {
                let Ok(AnyGame::Go(game)) = self.build() else {
                    return Vec::new();
                };
                let n = game.geometry().n;
                let first = go::search::next_threshold(n, &[]);
                let ks = if thresholds.is_empty() {
                    first.into_iter().collect()
                } else {
                    thresholds.clone()
                };
                ks.iter()
                    .filter_map(|&k| game.threshold_layer(k).ok())
                    .collect()
            }
        }
    }
}

/// Every game the kernel can solve, behind one type (one kernel instantiation, static dispatch
/// inside each game's own code). A process holds one or two of these, so the size difference
/// between variants does not matter.
#[allow(clippy::large_enum_variant)]
pub enum AnyGame {
    Cc3p(Cc3p),
    Toppen(Toppen),
    Cc2p(Cc2p),
    Cc2pHalf(Cc2pHalf),
    Go(Go),
}

/// States and illegal states by classifying every index (for games without a formula).
/// The largest index space whose illegal states `count` enumerates (a few seconds per core);
/// larger ones get their size only.
const ENUMERATE_AT_MOST: u64 = 1 << 28;

fn enumerated_count(game: &AnyGame) -> Map<String, Value> {
    use rayon::prelude::*;
    if game.size() > ENUMERATE_AT_MOST {
        let mut out = Map::new();
        out.insert("states".into(), json!(game.size().to_string()));
        out.insert("illegal_states".into(), Value::Null);
        out.insert(
            "illegal_states_note".into(),
            json!(format!(
                "not counted: this game's illegal states are found by enumerating its index \
                 space, which count does only up to {ENUMERATE_AT_MOST} states (a build counts them)"
            )),
        );
        return out;
    }
    let illegal = (0..game.size())
        .into_par_iter()
        .filter(|&i| game.node(i) == Node::Illegal)
        .count();
    let mut out = Map::new();
    out.insert("states".into(), json!(game.size().to_string()));
    out.insert("illegal_states".into(), json!(illegal.to_string()));
    out
}

fn cc2p(board: u8, pieces: u8, shortcut_tip_rule: bool) -> anyhow::Result<Cc2p> {
    let tip = if shortcut_tip_rule {
        TipRule::SolverShortcut
    } else {
        TipRule::Exact
    };
    Ok(Cc2p::new(board, pieces, tip)?)
}

macro_rules! each_game {
    ($self:expr, $g:ident => $body:expr) => {
        match $self {
            AnyGame::Cc3p($g) => $body,
            AnyGame::Toppen($g) => $body,
            AnyGame::Cc2p($g) => $body,
            AnyGame::Cc2pHalf($g) => $body,
            AnyGame::Go($g) => $body,
        }
    };
}

impl Game for AnyGame {
    fn name(&self) -> String {
        each_game!(self, g => g.name())
    }
    fn players(&self) -> u8 {
        each_game!(self, g => g.players())
    }
    fn size(&self) -> u64 {
        each_game!(self, g => g.size())
    }
    fn node(&self, index: u64) -> Node {
        each_game!(self, g => g.node(index))
    }
    fn successors(&self, index: u64, out: &mut Vec<u64>) {
        each_game!(self, g => g.successors(index, out))
    }
    fn predecessors(&self, index: u64, out: &mut Vec<u64>) {
        each_game!(self, g => g.predecessors(index, out))
    }
    fn mover(&self, index: u64) -> u8 {
        each_game!(self, g => g.mover(index))
    }
    // The provided methods too: a game's own versions are its fast paths.
    fn successor_count(&self, index: u64) -> usize {
        each_game!(self, g => g.successor_count(index))
    }
    fn predecessors_and_count(&self, index: u64, out: &mut Vec<u64>) -> Option<(u64, usize)> {
        each_game!(self, g => g.predecessors_and_count(index, out))
    }
    fn each_non_live(&self, f: &mut dyn FnMut(u64, Node)) -> bool {
        each_game!(self, g => g.each_non_live(f))
    }
    fn alternates_sides(&self) -> bool {
        each_game!(self, g => g.alternates_sides())
    }
}

impl Notation for AnyGame {
    fn parse_position(&self, text: &str) -> anyhow::Result<u64> {
        each_game!(self, g => Notation::parse_position(g, text))
    }
    fn format_position(&self, index: u64) -> String {
        each_game!(self, g => Notation::format_position(g, index))
    }
    fn moves(&self, index: u64) -> Vec<(String, u64)> {
        each_game!(self, g => Notation::moves(g, index))
    }
    fn picture(&self, index: u64) -> String {
        each_game!(self, g => Notation::picture(g, index))
    }
    fn picture_names_the_mover(&self) -> bool {
        each_game!(self, g => g.picture_names_the_mover())
    }
    fn player_name(&self, player: u8) -> String {
        each_game!(self, g => Notation::player_name(g, player))
    }
    fn outcome_text(&self, outcome: u8) -> String {
        each_game!(self, g => g.outcome_text(outcome))
    }
    fn outcome_winner(&self, outcome: u8) -> Option<u8> {
        each_game!(self, g => g.outcome_winner(outcome))
    }
    fn start_index(&self) -> Option<u64> {
        each_game!(self, g => Notation::start_index(g))
    }
    fn example_index(&self) -> Option<u64> {
        each_game!(self, g => g.example_index())
    }
    fn board_drawing(&self) -> Value {
        each_game!(self, g => g.board_drawing())
    }
    fn position_drawing(&self, index: u64) -> Map<String, Value> {
        each_game!(self, g => g.position_drawing(index))
    }
    fn line_moves(&self, line: &[u64]) -> Option<Vec<String>> {
        each_game!(self, g => g.line_moves(line))
    }
}

impl AnyGame {
    /// The full game's table is expanded from this one's, for a game solved in place of a larger
    /// one ([`GameSpec::reduced`]).
    pub fn reduction(&self) -> Option<&dyn Reduction> {
        match self {
            AnyGame::Cc2pHalf(g) => Some(g),
            _ => None,
        }
    }

    /// The game itself, for a per-game view that knows its type (`downcast_ref::<Cc3p>()`).
    pub fn as_any(&self) -> &dyn Any {
        each_game!(self, g => g as &dyn Any)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `AnyGame` must forward the provided methods, or the kernel silently loses a game's fast
    /// paths.
    #[test]
    fn any_game_forwards_the_fast_paths() {
        let game = GameSpec::Cc3p { level: 1 }.build().unwrap();
        assert!(game.each_non_live(&mut |_, _| {}));
        let start = Notation::start_index(&game).unwrap();
        let mut children = Vec::new();
        game.successors(start, &mut children);
        assert_eq!(game.successor_count(start), children.len());
    }

    /// A cc2p build solves the quarter where the board's reflection is a symmetry, else the
    /// half; a `run.json` written before the quarter existed (no `mirror`) still means the half.
    #[test]
    fn cc2p_reduces_to_the_quarter_or_the_half() {
        let spec = |pieces| GameSpec::Cc2p {
            board: 4,
            pieces,
            shortcut_tip_rule: false,
        };
        let name = |spec: &GameSpec| spec.reduced().unwrap().build().unwrap().name();
        assert_eq!(name(&spec(3)), "cc2p-4x4-3-quarter");
        assert_eq!(name(&spec(2)), "cc2p-4x4-2-half");
        let old: GameSpec = serde_json::from_str(
            r#"{"game": "cc2p_half", "board": 4, "pieces": 3, "shortcut_tip_rule": false}"#,
        )
        .unwrap();
        assert_eq!(old.build().unwrap().name(), "cc2p-4x4-3-half");
        let text = serde_json::to_string(&old).unwrap();
        assert!(!text.contains("mirror"), "{text}");
        let quarter = spec(3).reduced().unwrap();
        assert!(serde_json::to_string(&quarter)
            .unwrap()
            .contains(r#""mirror":true"#));
        let forced = GameSpec::Cc2pHalf {
            board: 4,
            pieces: 2,
            shortcut_tip_rule: false,
            mirror: true,
        };
        assert!(forced.build().is_err());
    }
}
