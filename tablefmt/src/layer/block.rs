//! One block of a layer file: its payload as encoded before compression (docs/format.md,
//! "Blocks"), and random access to a decompressed block's values and depths.

use super::depth::DepthCode;
use super::grouping::{group, Grouping};
use super::{ENCODING_GROUPED, ENCODING_VALUES};
use crate::value::MAX_CODE;

/// Largest uncompressed payload of a block of `n` states.
pub(crate) fn max_payload(n: usize, encoding: u32) -> usize {
    match encoding {
        ENCODING_VALUES | ENCODING_GROUPED => n.div_ceil(4),
        _ => 1 + 3 * n,
    }
}

/// Width byte: one byte per state, `value | code << 2`.
const WIDTH_BYTE: u8 = 1;
/// Width byte: three planes of `n` bytes: values, depth codes' low bytes, their high bytes.
const WIDTH_PLANES: u8 = 3;

/// Pack values (0..=3) four to a byte, the first state in the low bits.
pub fn pack_values(values: &[u8], out: &mut Vec<u8>) {
    out.extend(values.chunks(4).map(|q| {
        q.iter()
            .enumerate()
            .fold(0u8, |b, (j, &v)| b | (v & 3) << (2 * j))
    }));
}

/// The first `n` values of bytes made by [`pack_values`], one byte per state.
pub fn unpack_values(packed: &[u8], n: usize) -> Vec<u8> {
    (0..n)
        .map(|j| (packed[j / 4] >> (2 * (j % 4))) & 3)
        .collect()
}

/// Encode one block's payload (before compression). `first` is the index of its first state.
pub(crate) fn encode_payload(
    encoding: u32,
    first: u64,
    values: &[u8],
    depth: &[u16],
    code: &DepthCode,
) -> Vec<u8> {
    let n = values.len();
    if encoding == ENCODING_VALUES || encoding == ENCODING_GROUPED {
        let period = if encoding == ENCODING_GROUPED {
            code.modulus
        } else {
            1
        };
        let mut out = Vec::with_capacity(max_payload(n, encoding));
        pack_values(&group(values, period), &mut out);
        return out;
    }
    let codes: std::borrow::Cow<[u16]> = if code.is_plain() {
        depth.into()
    } else {
        (0..n)
            .map(|j| code.encode(first + j as u64, values[j], depth[j]))
            .collect()
    };
    let mut out = Vec::with_capacity(max_payload(n, encoding));
    if codes.iter().all(|&c| c < 64) {
        out.push(WIDTH_BYTE);
        out.extend(
            values
                .iter()
                .zip(codes.iter())
                .map(|(&v, &c)| (v & 3) | (c as u8) << 2),
        );
    } else {
        out.push(WIDTH_PLANES);
        out.extend_from_slice(values);
        out.extend(codes.iter().map(|&c| c as u8));
        out.extend(codes.iter().map(|&c| (c >> 8) as u8));
    }
    out
}

/// One decompressed block: random access to its states' values (and depths, unless the file
/// holds values alone).
pub struct Block {
    /// Index of the block's first state.
    pub first: u64,
    n: usize,
    /// [`WIDTH_BYTE`], [`WIDTH_PLANES`], or [`WIDTH_VALUES`] for a values-only block.
    width: u8,
    code: DepthCode,
    /// Where a values-only block's states sit in its payload (period 1 for encoding 2).
    grouping: Grouping,
    payload: Vec<u8>,
}

/// The `width` of a block of [`ENCODING_VALUES`] (not stored: its payload has no width byte).
const WIDTH_VALUES: u8 = 0;

impl Block {
    pub(crate) fn decode(
        encoding: u32,
        first: u64,
        n: usize,
        code: DepthCode,
        payload: Vec<u8>,
    ) -> Result<Block, String> {
        if encoding == ENCODING_VALUES || encoding == ENCODING_GROUPED {
            if payload.len() != n.div_ceil(4) {
                return Err(format!(
                    "payload of {} bytes, {} expected",
                    payload.len(),
                    n.div_ceil(4)
                ));
            }
            let period = if encoding == ENCODING_GROUPED {
                code.modulus
            } else {
                1
            };
            return Ok(Block {
                first,
                n,
                width: WIDTH_VALUES,
                code,
                grouping: Grouping::new(n, period),
                payload,
            });
        }
        let width = *payload.first().ok_or("empty payload")?;
        let want = match width {
            WIDTH_BYTE => 1 + n,
            WIDTH_PLANES => 1 + 3 * n,
            w => {
                return Err(format!(
                    "width byte {w} (must be {WIDTH_BYTE} or {WIDTH_PLANES})"
                ))
            }
        };
        if payload.len() != want {
            return Err(format!(
                "payload of {} bytes, {want} expected",
                payload.len()
            ));
        }
        if width == WIDTH_PLANES && payload[1..1 + n].iter().any(|&v| v > MAX_CODE) {
            return Err("a value byte above 3".into());
        }
        Ok(Block {
            first,
            n,
            width,
            code,
            grouping: Grouping::new(n, 1),
            payload,
        })
    }

    /// Number of states in the block.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the block holds no states.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Whether the block holds depths (not a values-only block).
    pub fn has_depths(&self) -> bool {
        self.width != WIDTH_VALUES
    }

    /// Value code of the block's `j`-th state ([`crate::Value`]: 0 illegal, 1 W, 2 L, 3 D).
    #[inline]
    pub fn value(&self, j: usize) -> u8 {
        if self.width == WIDTH_VALUES {
            let p = self.grouping.position(j);
            return (self.payload[p / 4] >> (2 * (p % 4))) & 3;
        }
        self.payload[1 + j] & 3
    }

    /// The block's values packed four to a byte (see [`pack_values`]), appended to `out`.
    pub fn packed_values(&self, out: &mut Vec<u8>) {
        if self.width == WIDTH_VALUES && self.grouping == Grouping::new(self.n, 1) {
            out.extend_from_slice(&self.payload);
        } else if self.width == WIDTH_VALUES {
            let values: Vec<u8> = (0..self.n).map(|j| self.value(j)).collect();
            pack_values(&values, out);
        } else {
            pack_values(&self.payload[1..1 + self.n], out);
        }
    }

    /// Depth of the block's `j`-th state (0 in a values-only block).
    #[inline]
    pub fn depth(&self, j: usize) -> u16 {
        if self.width == WIDTH_VALUES {
            return 0;
        }
        let (v, c) = if self.width == WIDTH_BYTE {
            let b = self.payload[1 + j];
            (b & 3, (b >> 2) as u16)
        } else {
            let n = self.n;
            (
                self.payload[1 + j],
                self.payload[1 + n + j] as u16 | (self.payload[1 + 2 * n + j] as u16) << 8,
            )
        };
        self.code.decode(self.first + j as u64, v, c)
    }

    /// (value, depth) of the block's `j`-th state.
    #[inline]
    pub fn get(&self, j: usize) -> (u8, u16) {
        (self.value(j), self.depth(j))
    }
}
