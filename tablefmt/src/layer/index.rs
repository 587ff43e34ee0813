//! The block index of a layer file: one entry per block (offset, length, crc32), after the
//! header and the identity record, itself covered by the header's index crc32.

use super::LayerHeader;
use crate::fsio::crc32;
use crate::FormatError;

/// Size of one block index entry: offset u64, length u32, crc32 u32.
pub const INDEX_ENTRY_LEN: u64 = 16;
/// One entry of the block index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockEntry {
    /// Absolute file offset of the compressed block.
    pub offset: u64,
    /// Length of the compressed block.
    pub len: u32,
    /// crc32 of the compressed block's bytes.
    pub crc: u32,
}

pub(super) fn index_bytes(entries: &[BlockEntry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.len() * INDEX_ENTRY_LEN as usize + 4);
    for e in entries {
        out.extend_from_slice(&e.offset.to_le_bytes());
        out.extend_from_slice(&e.len.to_le_bytes());
        out.extend_from_slice(&e.crc.to_le_bytes());
    }
    let crc = crc32(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The length a layer file is read with: its size here, or the size recorded for a file read
/// elsewhere (a kept part on its worker), which the file itself may contradict.
#[derive(Clone, Copy, Debug)]
pub(super) enum FileLen {
    Actual(u64),
    Recorded(u64),
}

impl FileLen {
    pub(super) fn bytes(self) -> u64 {
        match self {
            FileLen::Actual(n) | FileLen::Recorded(n) => n,
        }
    }
}

/// Parse and check a block index against its header and the file length.
pub(super) fn parse_index(
    bytes: &[u8],
    header: &LayerHeader,
    len: FileLen,
    name: &str,
) -> Result<Vec<BlockEntry>, FormatError> {
    let file_len = len.bytes();
    let bad = |what: String| FormatError::Corrupt(format!("{name}: {what}"));
    let (entries, crc) = bytes.split_at(bytes.len() - 4);
    if crc32(entries) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
        return Err(bad(
            "block index crc32 mismatch (the index was altered or damaged)".into(),
        ));
    }
    let mut out = Vec::with_capacity(header.blocks as usize);
    let mut at = header.data_offset();
    for (b, e) in entries.chunks_exact(INDEX_ENTRY_LEN as usize).enumerate() {
        let entry = BlockEntry {
            offset: u64::from_le_bytes(e[0..8].try_into().expect("8 bytes")),
            len: u32::from_le_bytes(e[8..12].try_into().expect("4 bytes")),
            crc: u32::from_le_bytes(e[12..16].try_into().expect("4 bytes")),
        };
        if entry.offset != at || entry.len == 0 {
            return Err(bad(format!(
                "block {b} is not where the index says (offset {}, expected {at})",
                entry.offset
            )));
        }
        at += entry.len as u64;
        out.push(entry);
    }
    match len {
        FileLen::Actual(_) if at > file_len => {
            return Err(bad(format!(
                "truncated: the blocks end at byte {at} but the file has {file_len} bytes"
            )))
        }
        FileLen::Actual(_) if at < file_len => {
            return Err(bad(format!(
                "{} unexpected bytes after the last block",
                file_len - at
            )))
        }
        // The file's own size is not known here: say what disagrees with what.
        FileLen::Recorded(_) if at != file_len => {
            return Err(bad(format!(
                "its index says its blocks end at byte {at}, but its recorded size is {file_len} \
                 bytes (the file or its record was altered)"
            )))
        }
        _ => {}
    }
    Ok(out)
}
