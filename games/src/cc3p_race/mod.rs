//! 3-player Chinese Checkers with a race for second place (`cc3p_race`, docs/rules.md §1.5): cc3p's
//! states and moves, but when the first player fills its goal the other two race on for second
//! ([`second::Second`], solved when the game is built); nobody is second if that never ends.
//! 1. Outcome: `3 · first + second` ([`ranking`]). Layers, for A (the others by rotation): first
//!    (`solo`), second or better (`top2`), B 1st A 2nd (`deal_ab`), C 1st A 2nd (`deal_ac`).

mod family;
pub mod second;
#[cfg(test)]
mod tests;
pub mod view;

pub use family::Cc3pRaceParams;

use crate::cc3p::Cc3p;
use crate::drawing::Drawing;
use crate::notation::Notation;
use kingmaker_kernel::{solve_in_memory, Game, Layer, Node, LOSS, WIN};
use second::Second;
use serde_json::{Map, Value};
use std::sync::Arc;

/// The outcome code of the ranking (`first`, `second`); `second == first` for nobody second.
pub fn ranking(first: u8, second: u8) -> u8 {
    3 * first + second
}

/// The ranking of an outcome code: (first, second), second None for nobody.
pub fn ranking_of(outcome: u8) -> (u8, Option<u8>) {
    let (first, second) = (outcome / 3, outcome % 3);
    (first, (second != first).then_some(second))
}

/// cc3p at one level, with the race for second place solved.
pub struct Cc3pRace {
    cc3p: Arc<Cc3p>,
    race: Second,
    /// The race's values for "B comes second" (W: B, L: C, D: nobody), by the race's index.
    second: Vec<u8>,
}

impl Cc3pRace {
    /// Build the level's game and solve its race for second place (in memory: 162 states at
    /// level 1, 10,580,000 at level 2).
    pub fn new(level: u8) -> anyhow::Result<Cc3pRace> {
        let cc3p = Arc::new(Cc3p::new(level)?);
        let race = Arc::new(Second::new(cc3p.clone()));
        let b_second = Layer::new("b_second", 0b010, 0b010);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let second = solve_in_memory(&race, &b_second, threads).values;
        let race = Arc::into_inner(race).expect("the solver let go of the race");
        Ok(Cc3pRace { cc3p, race, second })
    }

    /// The plain cc3p game underneath.
    pub fn cc3p(&self) -> &Cc3p {
        &self.cc3p
    }

    /// The race for second place.
    pub fn race(&self) -> &Second {
        &self.race
    }

    /// The race's value of "B comes second" at its state `index`.
    pub fn race_value(&self, index: u64) -> u8 {
        self.second[index as usize]
    }

    /// Who comes second after `first` filled its goal in the cc3p state `index`: the race's
    /// answer from there (None: nobody, play goes on for ever).
    fn second_after(&self, index: u64, first: u8) -> Option<u8> {
        // Turn the board so that the first is A: the race is solved for A having won.
        let mut turned = index;
        for _ in 0..(3 - first) % 3 {
            turned = self.cc3p.rotate(turned);
        }
        let (sets, mover) = self.cc3p.decode(turned);
        // The first's own turn never comes again; a state with it to move (which play cannot
        // reach: its last move handed the turn on) is read as the next player's.
        let mover = if mover == 0 { 1 } else { mover as u8 };
        let value = self.second[self.race.index_of([sets[1], sets[2]], mover) as usize];
        let turned_second = match value {
            WIN => 1,
            LOSS => 2,
            _ => return None,
        };
        Some((turned_second + first) % 3)
    }

    fn ranked(&self, index: u64, node: Node) -> Node {
        match node {
            Node::Terminal { outcome: first } => {
                let second = self.second_after(index, first).unwrap_or(first);
                Node::Terminal {
                    outcome: ranking(first, second),
                }
            }
            other => other,
        }
    }
}

impl Game for Cc3pRace {
    fn name(&self) -> String {
        format!("cc3p_race-{}", self.cc3p.level())
    }

    fn players(&self) -> u8 {
        3
    }

    fn size(&self) -> u64 {
        self.cc3p.size()
    }

    fn node(&self, index: u64) -> Node {
        self.ranked(index, self.cc3p.node(index))
    }

    fn successors(&self, index: u64, out: &mut Vec<u64>) {
        self.cc3p.successors(index, out)
    }

    fn predecessors(&self, index: u64, out: &mut Vec<u64>) {
        self.cc3p.predecessors(index, out)
    }

    fn predecessors_and_count(&self, index: u64, out: &mut Vec<u64>) -> Option<(u64, usize)> {
        self.cc3p.predecessors_and_count(index, out)
    }

    fn mover(&self, index: u64) -> u8 {
        self.cc3p.mover(index)
    }

    fn mover_period(&self) -> Option<u8> {
        self.cc3p.mover_period()
    }

    fn successor_count(&self, index: u64) -> usize {
        self.cc3p.successor_count(index)
    }

    fn each_non_live(&self, f: &mut dyn FnMut(u64, Node)) -> bool {
        self.cc3p
            .each_non_live(&mut |index, node| f(index, self.ranked(index, node)))
    }
}

impl Notation for Cc3pRace {
    fn parse_position(&self, text: &str) -> anyhow::Result<u64> {
        Notation::parse_position(&*self.cc3p, text)
    }

    fn format_position(&self, index: u64) -> String {
        Notation::format_position(&*self.cc3p, index)
    }

    fn moves(&self, index: u64) -> Vec<(String, u64)> {
        Notation::moves(&*self.cc3p, index)
    }

    fn picture(&self, index: u64) -> String {
        Notation::picture(&*self.cc3p, index)
    }

    fn picture_names_the_mover(&self) -> bool {
        self.cc3p.picture_names_the_mover()
    }

    fn player_name(&self, player: u8) -> String {
        Notation::player_name(&*self.cc3p, player)
    }

    /// `A first, B second` or `A first, nobody second`.
    fn outcome_text(&self, outcome: u8) -> String {
        let (first, second) = ranking_of(outcome);
        let name = |p: u8| self.player_name(p);
        match second {
            Some(s) => format!("{} first, {} second", name(first), name(s)),
            None => format!("{} first, nobody second", name(first)),
        }
    }

    fn outcome_winner(&self, outcome: u8) -> Option<u8> {
        Some(ranking_of(outcome).0)
    }

    fn start_index(&self) -> Option<u64> {
        Notation::start_index(&*self.cc3p)
    }

    fn example_index(&self) -> Option<u64> {
        self.cc3p.example_index()
    }
}

impl Drawing for Cc3pRace {
    fn board_drawing(&self) -> Value {
        self.cc3p.board_drawing()
    }

    fn position_drawing(&self, index: u64) -> Map<String, Value> {
        self.cc3p.position_drawing(index)
    }
}
