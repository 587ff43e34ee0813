//! Forcing layers: which players form the coalition and which outcomes count for it.

/// One forcing layer: the coalition's players want a terminal state whose outcome
/// ([`Node::Terminal`](crate::Node)'s `outcome`: the winning player, or a game's numbered result
/// such as Go's final score) is in `objective`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Layer {
    /// Name used for files and summaries (`solo`, `enable_ab`, ...).
    pub name: String,
    /// Bit `p` set: player `p` plays for the coalition.
    pub coalition: u8,
    /// Bit `o` set: outcome `o` (a win by player `o`) counts as W. Outcomes are 0..64.
    pub objective: u64,
}

impl Layer {
    /// The layer `name` of the players in `coalition` forcing an outcome in `objective`.
    pub fn new(name: &str, coalition: u8, objective: u64) -> Layer {
        Layer {
            name: name.to_string(),
            coalition,
            objective,
        }
    }
    /// Whether `player` plays for the coalition.
    pub fn in_coalition(&self, player: u8) -> bool {
        self.coalition & (1 << player) != 0
    }
    /// Whether `outcome` counts as W (outcomes of 64 and above never do).
    pub fn wins(&self, outcome: u8) -> bool {
        outcome < 64 && self.objective >> outcome & 1 != 0
    }
}
