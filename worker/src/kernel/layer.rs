//! Forcing layers: which players form the coalition and which winners count for it.

/// One forcing layer: the coalition's players want a terminal state whose winner is in `objective`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Layer {
    /// Name used for files and summaries (`solo`, `enable_ab`, ...).
    pub name: String,
    /// Bit `p` set: player `p` plays for the coalition.
    pub coalition: u8,
    /// Bit `p` set: a win by player `p` counts as W.
    pub objective: u8,
}

impl Layer {
    pub fn new(name: &str, coalition: u8, objective: u8) -> Layer {
        Layer {
            name: name.to_string(),
            coalition,
            objective,
        }
    }
    pub fn in_coalition(&self, player: u8) -> bool {
        self.coalition & (1 << player) != 0
    }
    pub fn wins(&self, winner: u8) -> bool {
        self.objective & (1 << winner) != 0
    }
}
