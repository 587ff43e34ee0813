//! Layer files (`.kmt`): one finished layer in zstd blocks, so a lookup decompresses one block.
//! 1. Run directories and releases both keep layers in this form, so every reader reads one format.
//! 2. Three encodings share the header, the block index and the crc32s that cover every byte;
//!    docs/format.md, "Layer files", describes every byte.

pub mod block;
mod byte_plane;
pub mod depth;
pub mod grouping;
pub mod header;
pub mod identity;
pub mod index;
mod layer_table;
mod reader;
#[cfg(test)]
pub(crate) mod tests;
mod values;
mod writer;

pub use block::{pack_values, unpack_values, Block};
pub use byte_plane::{BytePlane, BYTE_PLANE_MAX_DEPTH};
pub use header::{LayerHeader, HEADER_LEN, LAYER_MAGIC, LAYER_VERSION};
pub use identity::LayerIdentity;
pub use index::{BlockEntry, INDEX_ENTRY_LEN};
pub use layer_table::LayerTable;
pub use reader::{LayerFile, ReadAt, DEFAULT_CACHE_BLOCKS};
pub use values::ValuesPlane;
pub use writer::{LayerWriter, WrittenLayer};

/// Encoding 1, values and depths: a width byte, then one byte per state (value | depth code << 2)
/// when every depth code of the block is below 64, else a value plane and two depth-code planes
/// (see docs/format.md).
pub const ENCODING_PACKED: u32 = 1;
/// Encoding 2, values alone: 2 bits per state, four states per byte, the first in the low bits.
pub const ENCODING_VALUES: u32 = 2;
/// Encoding 3, values alone as in encoding 2, after grouping each block's states by their position
/// modulo the header's modulus M (2 to 8; the depth-code residues are unused, all `0xff`): the
/// index's period, as cc3p's `index mod 3` names the mover.
pub const ENCODING_GROUPED: u32 = 3;
/// Default states per block: 64 Ki states, 16 KiB of packed values.
pub const DEFAULT_BLOCK_STATES: u32 = 1 << 16;
/// Largest block a reader accepts (bounds the memory one lookup may need).
pub const MAX_BLOCK_STATES: u32 = 1 << 24;
/// Largest state count a reader accepts (keeps offsets far from overflow).
pub const MAX_STATES: u64 = 1 << 56;
/// File extension of layer files.
pub const LAYER_EXT: &str = "kmt";

pub use crate::fsio::{crc32, file_sha256};
