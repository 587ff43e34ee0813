//! The fixed 96-byte header of a layer file: sizes, encoding, depth code, where the index starts;
//! covered by its own crc32. docs/format.md, "Header".

use super::depth::{DepthCode, DEPTH_CODE_LEN};
use super::identity::{IDENTITY_FRAME_LEN, MAX_IDENTITY_LEN};
use super::{
    crc32, ENCODING_GROUPED, ENCODING_PACKED, ENCODING_VALUES, INDEX_ENTRY_LEN, MAX_BLOCK_STATES,
    MAX_STATES,
};
use crate::FormatError;

/// First eight bytes of a layer file.
pub const LAYER_MAGIC: [u8; 8] = *b"KMLAYER\0";
/// Version of the layer file layout that writers write. Version 2 added the identity record
/// between the header and the block index; version 1 files (no record) are still read, and a
/// reader that must know which layer a file holds checks them another way (see
/// [`super::LayerFile::identity`]). Encodings 2 and 3 came within version 1: a reader that does
/// not know one names the encoding.
pub const LAYER_VERSION: u32 = 2;
/// The version before the identity record.
pub const LAYER_VERSION_UNLABELLED: u32 = 1;
/// Size of the fixed header.
pub const HEADER_LEN: u64 = 96;
/// Offset of the header's crc32 (it covers bytes `0..CRC_AT`).
pub(crate) const CRC_AT: usize = 92;

/// The fixed 96-byte header of a layer file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerHeader {
    /// Layout version: [`LAYER_VERSION`], or [`LAYER_VERSION_UNLABELLED`] without identity record.
    pub version: u32,
    /// Number of states in the layer.
    pub states: u64,
    /// States per block (the last block may hold fewer).
    pub block_states: u32,
    /// One of [`super::ENCODING_PACKED`], [`super::ENCODING_VALUES`], [`super::ENCODING_GROUPED`].
    pub encoding: u32,
    /// Number of blocks, `states / block_states` rounded up.
    pub blocks: u64,
    /// File offset of the block index (right after the identity record).
    pub index_offset: u64,
    /// Length of the block index: its entries and their crc32.
    pub index_len: u64,
    /// The largest depth in the layer (0 in a values-only file).
    pub max_depth: u16,
    /// How depths are stored (see [`super::depth`]).
    pub depth_code: DepthCode,
    /// Bytes of the identity record between the header and the index (0 in a version-1 file).
    /// Not a field of its own in the file: the index starts right after the record.
    pub identity_len: u64,
}

impl LayerHeader {
    /// The header of a layer of `states` states cut into blocks of `block_states`, followed by
    /// an identity record of `identity_len` bytes (version 2; 0 gives a version-1 header).
    pub fn new(
        states: u64,
        block_states: u32,
        encoding: u32,
        max_depth: u16,
        depth_code: DepthCode,
        identity_len: u64,
    ) -> LayerHeader {
        let blocks = states.div_ceil(block_states as u64);
        LayerHeader {
            version: if identity_len == 0 {
                LAYER_VERSION_UNLABELLED
            } else {
                LAYER_VERSION
            },
            states,
            block_states,
            encoding,
            blocks,
            index_offset: HEADER_LEN + identity_len,
            index_len: blocks * INDEX_ENTRY_LEN + 4,
            max_depth,
            depth_code,
            identity_len,
        }
    }

    /// Where the first block starts.
    pub fn data_offset(&self) -> u64 {
        self.index_offset + self.index_len
    }

    /// The states `[first, end)` of block `b`.
    pub fn block_range(&self, b: u64) -> (u64, u64) {
        let first = b * self.block_states as u64;
        (first, (first + self.block_states as u64).min(self.states))
    }

    /// The header as stored, with its crc32.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN as usize] {
        let mut h = [0u8; HEADER_LEN as usize];
        h[0..8].copy_from_slice(&LAYER_MAGIC);
        h[8..12].copy_from_slice(&self.version.to_le_bytes());
        h[12..16].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
        h[16..24].copy_from_slice(&self.states.to_le_bytes());
        h[24..28].copy_from_slice(&self.block_states.to_le_bytes());
        h[28..32].copy_from_slice(&self.encoding.to_le_bytes());
        h[32..40].copy_from_slice(&self.blocks.to_le_bytes());
        h[40..48].copy_from_slice(&self.index_offset.to_le_bytes());
        h[48..56].copy_from_slice(&self.index_len.to_le_bytes());
        h[56..58].copy_from_slice(&self.max_depth.to_le_bytes());
        h[58..58 + DEPTH_CODE_LEN].copy_from_slice(&self.depth_code.to_bytes());
        // Bytes 58..92 hold the depth code; the crc32 at 92 covers everything before it.
        let crc = crc32(&h[0..CRC_AT]);
        h[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
        h
    }

    /// Parse and check a header; `name` (the file) goes into every error message.
    pub fn parse(h: &[u8], name: &str) -> Result<LayerHeader, FormatError> {
        let bad = |what: String| FormatError::Corrupt(format!("{name}: {what}"));
        if h.len() < HEADER_LEN as usize {
            return Err(bad(format!(
                "{} bytes, shorter than the {HEADER_LEN}-byte header (truncated file)",
                h.len()
            )));
        }
        if h[0..8] != LAYER_MAGIC {
            return Err(bad(
                "not a Kingmaker layer file (bad magic in the header)".into()
            ));
        }
        let u32_at = |o: usize| u32::from_le_bytes(h[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().expect("8 bytes"));
        let stored_crc = u32_at(CRC_AT);
        if crc32(&h[0..CRC_AT]) != stored_crc {
            return Err(bad(
                "header crc32 mismatch (the header was altered or damaged)".into(),
            ));
        }
        let version = u32_at(8);
        if version != LAYER_VERSION && version != LAYER_VERSION_UNLABELLED {
            return Err(bad(format!(
                "format version {version}; this kingmaker reads versions \
                 {LAYER_VERSION_UNLABELLED} and {LAYER_VERSION} (upgrade kingmaker)"
            )));
        }
        // Version 2: the identity record fills the bytes between the header and the index.
        let index_offset = u64_at(40);
        let identity_len = if version == LAYER_VERSION_UNLABELLED {
            0
        } else {
            let len = index_offset.wrapping_sub(HEADER_LEN);
            if !(IDENTITY_FRAME_LEN + 2..=IDENTITY_FRAME_LEN + MAX_IDENTITY_LEN as u64)
                .contains(&len)
            {
                return Err(bad(format!(
                    "the block index at offset {index_offset} leaves {} bytes for the identity \
                     record (it must hold {} to {} bytes)",
                    len as i64,
                    IDENTITY_FRAME_LEN + 2,
                    IDENTITY_FRAME_LEN + MAX_IDENTITY_LEN as u64
                )));
            }
            len
        };
        let header = LayerHeader {
            version,
            states: u64_at(16),
            block_states: u32_at(24),
            encoding: u32_at(28),
            blocks: u64_at(32),
            index_offset,
            index_len: u64_at(48),
            max_depth: u16::from_le_bytes([h[56], h[57]]),
            depth_code: DepthCode::parse(&h[58..58 + DEPTH_CODE_LEN], name)?,
            identity_len,
        };
        if u32_at(12) as u64 != HEADER_LEN {
            return Err(bad("unexpected header length".into()));
        }
        if ![ENCODING_PACKED, ENCODING_VALUES, ENCODING_GROUPED].contains(&header.encoding) {
            return Err(bad(format!("unknown value encoding {}", header.encoding)));
        }
        if header.encoding == ENCODING_GROUPED
            && (header.depth_code.modulus < 2
                || header.depth_code != DepthCode::period(header.depth_code.modulus))
        {
            return Err(bad(format!(
                "grouped values need a period of 2 to 8 and no depth residues (modulus {})",
                header.depth_code.modulus
            )));
        }
        if header.block_states == 0
            || !header.block_states.is_multiple_of(4)
            || header.block_states > MAX_BLOCK_STATES
        {
            return Err(bad(format!(
                "block size {} states (must be a multiple of 4, at most {MAX_BLOCK_STATES})",
                header.block_states
            )));
        }
        if header.states > MAX_STATES {
            return Err(bad(format!(
                "implausible state count {} (more than 2^56)",
                header.states
            )));
        }
        let want = LayerHeader::new(
            header.states,
            header.block_states,
            header.encoding,
            header.max_depth,
            header.depth_code,
            header.identity_len,
        );
        if header != want {
            return Err(bad(format!(
                "inconsistent header: {} states in blocks of {} need {} blocks and a {}-byte index at \
                 offset {}, the header says {} blocks, {} bytes at {}",
                header.states,
                header.block_states,
                want.blocks,
                want.index_len,
                want.index_offset,
                header.blocks,
                header.index_len,
                header.index_offset
            )));
        }
        Ok(header)
    }
}
