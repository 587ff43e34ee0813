//! What every game answers alike, behind the types `games!` generates: a run's `GameSpec` and
//! its layers, counts and reductions; `AnyGame` forwarding the game traits ([`Game`],
//! [`Notation`]) to each game's own code (static dispatch).

use super::{AnyGame, GameSpec};
use crate::drawing::Drawing;
use crate::family::GameFamily;
use crate::notation::Notation;
use kingmaker_kernel::Layer;
use kingmaker_kernel::{Game, Node};
use serde_json::{json, Map, Value};
use std::any::Any;

/// [`GameFamily`]'s methods behind a reference, for what every family answers alike.
pub(super) trait FamilyParams {
    fn layers(&self) -> Vec<Layer>;
    fn most_layers(&self) -> usize;
    fn next_layer(&self, start_values: &[(String, u8)]) -> Option<Layer>;
    fn reduced(&self) -> Option<GameSpec>;
    fn count(&self) -> Option<anyhow::Result<Map<String, Value>>>;
    fn summary_params(&self, params: &mut Map<String, Value>);
}

impl<F: GameFamily> FamilyParams for F {
    fn layers(&self) -> Vec<Layer> {
        GameFamily::layers(self)
    }
    fn most_layers(&self) -> usize {
        GameFamily::most_layers(self)
    }
    fn next_layer(&self, start_values: &[(String, u8)]) -> Option<Layer> {
        GameFamily::next_layer(self, start_values)
    }
    fn reduced(&self) -> Option<GameSpec> {
        GameFamily::reduced(self)
    }
    fn count(&self) -> Option<anyhow::Result<Map<String, Value>>> {
        GameFamily::count(self)
    }
    fn summary_params(&self, params: &mut Map<String, Value>) {
        GameFamily::summary_params(self, params)
    }
}

impl GameSpec {
    /// The smaller game the kernel solves instead of this one, when a symmetry allows it and the
    /// finished tables can be expanded back; None for games solved as they are.
    pub fn reduced(&self) -> Option<GameSpec> {
        self.family_params().reduced()
    }

    /// The size of the game's index space and how many states are illegal, without solving, as
    /// `kingmaker count` prints it (numbers as strings: JSON readers lose digits past 2^53).
    pub fn count(&self) -> anyhow::Result<Value> {
        let mut out = serde_json::to_value(self)?;
        let extra = match self.family_params().count() {
            Some(fields) => fields?,
            None => enumerated_count(&self.build()?),
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
        self.family_params().next_layer(start_values)
    }

    /// The game's parameters as `summary.json` lists them.
    pub fn params(&self) -> Map<String, Value> {
        let Ok(Value::Object(mut params)) = serde_json::to_value(self) else {
            unreachable!("a spec serialises to an object")
        };
        params.remove("game");
        self.family_params().summary_params(&mut params);
        params
    }

    /// Every layer this game's build solves, in order.
    pub fn layers(&self) -> Vec<Layer> {
        self.family_params().layers()
    }

    /// The most layers a build of this game may solve (more than [`GameSpec::layers`] where
    /// further layers are chosen from the answers).
    pub fn most_layers(&self) -> usize {
        self.family_params().most_layers()
    }
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
    fn predecessor_span(&self, index: u64) -> Option<std::ops::Range<u64>> {
        each_game!(self, g => g.predecessor_span(index))
    }
    fn nodes(&self, first: u64, out: &mut [Node]) {
        each_game!(self, g => g.nodes(first, out))
    }
    fn each_non_live(&self, f: &mut dyn FnMut(u64, Node)) -> bool {
        each_game!(self, g => g.each_non_live(f))
    }
    fn alternates_sides(&self) -> bool {
        each_game!(self, g => g.alternates_sides())
    }
    fn mover_period(&self) -> Option<u8> {
        each_game!(self, g => g.mover_period())
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
    fn illegal_reason(&self, index: u64) -> Option<String> {
        each_game!(self, g => g.illegal_reason(index))
    }
}

impl Drawing for AnyGame {
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
    /// The game itself, for a per-game view that knows its type (`downcast_ref::<Cc3p>()`).
    pub fn as_any(&self) -> &dyn Any {
        each_game!(self, g => g as &dyn Any)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `AnyGame` must forward the provided methods, or the kernel silently loses a game's fast
    /// paths (their defaults would answer instead): some example answers each one with more
    /// than the default does.
    #[test]
    fn any_game_forwards_the_fast_paths() {
        let games: Vec<AnyGame> = GameSpec::examples()
            .iter()
            .map(|s| s.build().unwrap())
            .collect();
        assert!(games.iter().any(|g| g.each_non_live(&mut |_, _| {})));
        assert!(games.iter().any(|g| g.alternates_sides()));
        assert!(games.iter().any(|g| {
            let start = Notation::start_index(g).unwrap_or(0);
            let mut out = Vec::new();
            let mut kids = Vec::new();
            g.successors(start, &mut kids);
            kids.iter()
                .any(|&c| g.predecessors_and_count(c, &mut out).is_some())
        }));
    }
}
