//! The identity record of a layer file (version 2): which game and which layer the file holds, so
//! that a reader refuses a file that is not the one it asked for (a swapped or misplaced file
//! would otherwise answer every lookup, wrongly). docs/format.md, "Identity record".

use crate::FormatError;
use serde::{Deserialize, Serialize};

/// Largest identity record a reader accepts (the JSON, without its length and crc32).
pub const MAX_IDENTITY_LEN: u32 = 4096;

/// Bytes around the identity's JSON: its length (u32) before, its crc32 after.
pub const IDENTITY_FRAME_LEN: u64 = 8;

/// What a layer file holds: a game, as its parameters (`{"game": FAMILY, PARAMETER: VALUE, ...}`,
/// the same JSON as `run.json`'s `spec` and a manifest's `game`), and one of its layers by name.
/// The format does not interpret either: it only stores them and compares them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerIdentity {
    /// The game and its parameters.
    pub game: serde_json::Value,
    /// The layer's name.
    pub layer: String,
}

impl LayerIdentity {
    /// Layer `layer` of `game`.
    pub fn new(game: serde_json::Value, layer: &str) -> LayerIdentity {
        LayerIdentity {
            game,
            layer: layer.to_string(),
        }
    }

    /// The record as stored: length (u32 LE), the JSON, its crc32 (u32 LE).
    pub fn to_record(&self) -> Result<Vec<u8>, FormatError> {
        let json = serde_json::to_vec(self).expect("an identity serializes");
        if json.len() > MAX_IDENTITY_LEN as usize {
            return Err(FormatError::Corrupt(format!(
                "the identity of layer {} is {} bytes of JSON, more than {MAX_IDENTITY_LEN}",
                self.layer,
                json.len()
            )));
        }
        let mut out = Vec::with_capacity(json.len() + IDENTITY_FRAME_LEN as usize);
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(&json);
        out.extend_from_slice(&crate::layer::crc32(&json).to_le_bytes());
        Ok(out)
    }

    /// Parse and check a record read from a file (`name` goes into every error).
    pub fn parse_record(record: &[u8], name: &str) -> Result<LayerIdentity, FormatError> {
        let bad = |what: String| FormatError::Corrupt(format!("{name}: identity record: {what}"));
        if record.len() < IDENTITY_FRAME_LEN as usize {
            return Err(bad(format!("{} bytes, too short", record.len())));
        }
        let len = u32::from_le_bytes(record[0..4].try_into().expect("4 bytes")) as usize;
        if len + IDENTITY_FRAME_LEN as usize != record.len() {
            return Err(bad(format!(
                "says {len} bytes of JSON, the header leaves room for {}",
                record.len() - IDENTITY_FRAME_LEN as usize
            )));
        }
        let (json, crc) = record[4..].split_at(len);
        if crate::layer::crc32(json) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
            return Err(bad(
                "crc32 mismatch (the record was altered or damaged)".into()
            ));
        }
        serde_json::from_slice(json).map_err(|e| bad(format!("not a layer identity ({e})")))
    }

    /// `layer NAME of GAME`, for messages.
    pub fn describe(&self) -> String {
        format!("layer {} of {}", self.layer, self.game)
    }
}
