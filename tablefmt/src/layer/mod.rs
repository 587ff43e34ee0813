//! Layer files (`.kmt`): one finished layer, cut into blocks that are zstd-compressed one by one,
//! so that a lookup reads and decompresses a single block. Run directories keep their finished
//! layers in this form (`layers/NAME.kmt`) and releases ship it, so every reader — query, serve,
//! line, census, summary, pack, verify — reads one format. docs/format.md describes every byte.
//!
//! Three encodings share the header, the block index and the checksums:
//! - [`ENCODING_PACKED`]: values and depths (one byte per state `value | depth code << 2`, or three
//!   planes when a block holds a depth code of 64 or more);
//! - [`ENCODING_VALUES`]: values alone, 2 bits per state (four states per byte, the first state in
//!   the low bits), for users who want W/L/D without depths (as Syzygy ships WDL apart from DTZ);
//! - [`ENCODING_GROUPED`]: values alone as in encoding 2, each block's states grouped by their
//!   position modulo the header's modulus first ([`grouping`]).
//!
//! The header and the index carry their own crc32, every block's crc32 sits in the index, and the
//! blocks are contiguous up to the end of the file, so every byte is covered by a checksum.
//!
//! - [`depth`]: depth codes (depths stored as `depth / M` where the data allows).
//! - [`block`]: a block's payload and random access to a decompressed block.
//! - [`grouping`]: the grouped order of encoding 3, and the choice of its period.
//! - [`index`]: the block index (offset, length and crc32 of every block).
//! - [`LayerWriter`] (`writer.rs`): streams a layer in index order (blocks compressed in parallel).
//! - [`LayerFile`] (`reader.rs`): random access with a block cache of recently used blocks.
//! - [`LayerTable`] (`layer_table.rs`): a layer to read, in one file or in parts (the readers' view).
//! - [`ValuesPlane`] (`values.rs`): every value of a layer in memory, 2 bits per state.

pub mod block;
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
