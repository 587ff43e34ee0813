//! The counts `kingmaker count cc2p` prints, without solving.

use super::{Cc2p, Cc2pError, TipRule};
use kingmaker_kernel::Game;
use serde_json::{json, Map, Value};

/// The counts `kingmaker count cc2p` prints: combinatorial ([`Cc2p::illegal_count`]), as 6×6 / 6
/// has 2.3 trillion states; the illegal states under both tip-rule conventions.
pub fn count_fields(
    board: u8,
    pieces: u8,
    shortcut_tip_rule: bool,
) -> Result<Map<String, Value>, Cc2pError> {
    let exact = Cc2p::new(board, pieces, TipRule::Exact)?;
    let shortcut = Cc2p::new(board, pieces, TipRule::SolverShortcut)?;
    let chosen = if shortcut_tip_rule { &shortcut } else { &exact };
    let mut out = Map::new();
    out.insert("placements".into(), json!(exact.placements().to_string()));
    out.insert("states".into(), json!(exact.size().to_string()));
    out.insert(
        "illegal_states".into(),
        json!(chosen.illegal_count().to_string()),
    );
    out.insert(
        "illegal_states_exact".into(),
        json!(exact.illegal_count().to_string()),
    );
    out.insert(
        "illegal_states_shortcut".into(),
        json!(shortcut.illegal_count().to_string()),
    );
    Ok(out)
}
