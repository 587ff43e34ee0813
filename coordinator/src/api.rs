//! The versioned HTTP API of `kingmaker serve` (`/api/v1/...`, docs/api.md): the probing
//! library's answers as JSON, moves best first with their categories, errors as
//! `{"error": MESSAGE}`. The explorer page's own routes (`/api/info`, `/api/position`) may change
//! with the page; these do not within a version.

use crate::explore::ApiError;
use kingmaker_probe::{Game, Notation, ProbeError, Tables};
use serde_json::{json, Value};

/// The version in the paths and in every answer.
pub const API_VERSION: u32 = 1;

/// Longest position text accepted.
const MAX_POSITION_LEN: usize = 1000;

/// `GET /api/v1/info`: the game, its players and layers, and its start.
pub fn info(tables: &Tables) -> Value {
    let game = tables.game();
    let layers: Vec<Value> = tables
        .layers()
        .iter()
        .map(|l| {
            json!({
                "name": l.name, "coalition": l.coalition, "objective": l.objective,
                "present": l.present, "depths": l.depths,
            })
        })
        .collect();
    json!({
        "api_version": API_VERSION,
        "game": tables.spec(),
        "name": game.name(),
        "players": (0..game.players()).map(|p| game.player_name(p)).collect::<Vec<_>>(),
        "states": game.size(),
        "source": crate::tables::kind_name(tables),
        "layers": layers,
        "start": game.start_index().map(|i| game.format_position(i)),
    })
}

/// `GET /api/v1/probe?position=TEXT`: the position's probe and its moves, best first for the side
/// to move, each with its category and depth.
pub fn probe(tables: &Tables, text: &str) -> Result<Value, ApiError> {
    if text.len() > MAX_POSITION_LEN {
        return Err(ApiError::BadRequest(format!(
            "position text longer than {MAX_POSITION_LEN} characters"
        )));
    }
    let here = tables.probe(text).map_err(api_error)?;
    let moves = tables.moves_of(here.index).map_err(api_error)?;
    let mut out = serde_json::to_value(&here).expect("a probe is JSON");
    out["api_version"] = json!(API_VERSION);
    out["moves"] = serde_json::to_value(&moves).expect("moves are JSON");
    Ok(out)
}

fn api_error(e: ProbeError) -> ApiError {
    match e {
        ProbeError::BadPosition { .. } => ApiError::BadRequest(e.to_string()),
        // A layer the verdict needs is reported in the verdict; one asked for by name is not
        // missing here, so anything else is the tables' fault.
        _ => ApiError::Internal(format!(
            "reading the tables: {e}; run `kingmaker verify` on them"
        )),
    }
}
