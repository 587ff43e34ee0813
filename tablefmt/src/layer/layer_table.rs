//! A finished layer to read: one layer file, or the files of its parts (consecutive rows, as a
//! build kept them on its workers) read as one table. Every reader of tables (query, line, serve,
//! pack, summaries, census) reads a layer through this, so it reads a layer in parts as it reads
//! a whole one; memory is one file's block cache, shared out among the parts, never the table.

use super::reader::{check_index, states_asked};
use super::{LayerFile, LayerIdentity, ValuesPlane, DEFAULT_CACHE_BLOCKS};
use crate::{FormatError, Lookup};

/// A layer's table: its files in row order, each with the first row it holds.
pub struct LayerTable {
    /// What the table holds (a part file's own record names its part).
    identity: Option<LayerIdentity>,
    /// (first row, file), in row order; the first starts at row 0.
    parts: Vec<(u64, LayerFile)>,
    states: u64,
}

impl LayerTable {
    /// A table in one file.
    pub fn whole(file: LayerFile) -> LayerTable {
        LayerTable {
            identity: file.identity().cloned(),
            states: file.states(),
            parts: vec![(0, file)],
        }
    }

    /// A table in parts: `parts` hold consecutive rows in order, from row 0 (each file already
    /// checked to be its part). All hold depths, or none.
    pub fn in_parts(
        identity: LayerIdentity,
        parts: Vec<LayerFile>,
    ) -> Result<LayerTable, FormatError> {
        if parts.is_empty() {
            return Err(FormatError::Corrupt(format!(
                "{}: a table in parts needs at least one part",
                identity.describe()
            )));
        }
        if parts
            .iter()
            .any(|p| p.has_depths() != parts[0].has_depths())
        {
            return Err(FormatError::Corrupt(format!(
                "{}: some parts hold depths and some do not",
                identity.describe()
            )));
        }
        // The block cache of one file, shared out among the parts.
        for p in &parts {
            p.set_cache_blocks(DEFAULT_CACHE_BLOCKS.div_ceil(parts.len()));
        }
        let mut first = 0;
        let parts = parts
            .into_iter()
            .map(|p| {
                let at = first;
                first += p.states();
                (at, p)
            })
            .collect();
        Ok(LayerTable {
            identity: Some(identity),
            parts,
            states: first,
        })
    }

    /// Open a table in one file.
    pub fn open(path: &std::path::Path) -> Result<LayerTable, FormatError> {
        Ok(LayerTable::whole(LayerFile::open(path)?))
    }

    /// Open a table in one file, refused unless it says it holds `expected`.
    pub fn open_as(
        path: &std::path::Path,
        expected: &LayerIdentity,
    ) -> Result<LayerTable, FormatError> {
        Ok(LayerTable::whole(LayerFile::open_as(path, expected)?))
    }

    /// What the table holds; `None` for a version-1 file, which does not say.
    pub fn identity(&self) -> Option<&LayerIdentity> {
        self.identity.as_ref()
    }

    /// Number of states (rows).
    pub fn states(&self) -> u64 {
        self.states
    }

    /// The files, with the first row each holds.
    pub fn parts(&self) -> impl Iterator<Item = (u64, &LayerFile)> {
        self.parts.iter().map(|(first, f)| (*first, f))
    }

    /// Whether the table holds depths, or values alone.
    pub fn has_depths(&self) -> bool {
        self.parts[0].1.has_depths()
    }

    /// Keep up to about `blocks` decompressed blocks, shared out among the parts (one at least
    /// for each).
    pub fn set_cache_blocks(&self, blocks: usize) {
        for (_, f) in &self.parts {
            f.set_cache_blocks(blocks.div_ceil(self.parts.len()));
        }
    }

    /// The table as its messages name it (its first file).
    pub(super) fn name(&self) -> &str {
        self.parts[0].1.name()
    }

    /// The part holding row `index`, and the row's place in it.
    fn part(&self, index: u64) -> Result<(&LayerFile, u64), FormatError> {
        check_index(self.name(), index, self.states)?;
        let k = self.parts.partition_point(|(first, _)| *first <= index) - 1;
        let (first, file) = &self.parts[k];
        Ok((file, index - first))
    }

    /// (value, depth) of one state; an error for a table of values alone.
    pub fn get(&self, index: u64) -> Result<(u8, u16), FormatError> {
        let (file, i) = self.part(index)?;
        file.get(i)
    }

    /// The value code of one state ([`crate::Value`]: 0 illegal, 1 W, 2 L, 3 D).
    pub fn value(&self, index: u64) -> Result<u8, FormatError> {
        let (file, i) = self.part(index)?;
        file.value(i)
    }

    /// Values (and, unless `depth` is empty, depths) of the states `first .. first +
    /// values.len()`: [`LayerFile::read_states`] of every part they span.
    pub fn read_states(
        &self,
        first: u64,
        values: &mut [u8],
        depth: &mut [u16],
    ) -> Result<(), FormatError> {
        let end = states_asked(self.name(), first, values, depth, self.states)?;
        let mut at = first;
        while at < end {
            let (file, i) = self.part(at)?;
            let n = (file.states() - i).min(end - at) as usize;
            let k = (at - first) as usize;
            let d = if depth.is_empty() {
                &mut [][..]
            } else {
                &mut depth[k..k + n]
            };
            file.read_states(i, &mut values[k..k + n], d)?;
            at += n as u64;
        }
        Ok(())
    }

    /// Every state's value and depth in index order, handed to `f` a group at a time (a part's
    /// last group may be short).
    pub fn for_each_group<E: From<FormatError>>(
        &self,
        mut f: impl FnMut(&[u8], &[u16]) -> Result<(), E>,
    ) -> Result<(), E> {
        for (_, file) in &self.parts {
            file.for_each_group(&mut f)?;
        }
        Ok(())
    }

    /// The first state (in index order) whose (value, depth) satisfies `want`.
    pub fn find_first(
        &self,
        want: impl Fn(u8, u16) -> bool + Sync,
    ) -> Result<Option<u64>, FormatError> {
        for (first, file) in &self.parts {
            if let Some(i) = file.find_first(&want)? {
                return Ok(Some(first + i));
            }
        }
        Ok(None)
    }

    /// Every value of the layer in memory, 2 bits per state.
    pub fn values_plane(&self) -> Result<ValuesPlane, FormatError> {
        if let [(_, file)] = &self.parts[..] {
            return file.values_plane();
        }
        // Parts need not start on a multiple of four states: their values are placed one by one.
        let mut values = Vec::new();
        let mut bytes = vec![0u8; self.states.div_ceil(4) as usize];
        for (first, file) in &self.parts {
            let mut at = *first;
            file.for_each_group(|v, _| -> Result<(), FormatError> {
                values.clear();
                values.extend_from_slice(v);
                for (k, &value) in values.iter().enumerate() {
                    let i = at + k as u64;
                    bytes[(i / 4) as usize] |= (value & 3) << (2 * (i % 4));
                }
                at += v.len() as u64;
                Ok(())
            })?;
        }
        Ok(ValuesPlane::from_packed(self.states, bytes))
    }
}

impl Lookup for LayerTable {
    fn states(&self) -> u64 {
        self.states
    }
    fn lookup(&self, index: u64) -> Result<(u8, u16), FormatError> {
        self.get(index)
    }
    fn value(&self, index: u64) -> Result<u8, FormatError> {
        LayerTable::value(self, index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layer::depth::DepthCode;
    use crate::layer::{BytePlane, LayerWriter, ENCODING_PACKED};

    fn write(dir: &std::path::Path, name: &str, values: &[u8], depth: &[u16]) -> LayerFile {
        let path = dir.join(format!("{name}.kmt"));
        let id = LayerIdentity::new(serde_json::json!({"game": "test"}), name);
        let mut w = LayerWriter::create(
            &path,
            &id,
            values.len() as u64,
            64,
            ENCODING_PACKED,
            DepthCode::plain(),
            1,
        )
        .unwrap();
        w.append(values, depth).unwrap();
        w.finish().unwrap();
        LayerFile::open(&path).unwrap()
    }

    /// The table of `values` and `depth` in parts cut at `cuts` (from 0 to the end), a file each.
    fn in_parts(dir: &std::path::Path, cuts: &[usize], values: &[u8], depth: &[u16]) -> LayerTable {
        let parts = cuts
            .windows(2)
            .enumerate()
            .map(|(k, w)| {
                write(
                    dir,
                    &format!("p{k}"),
                    &values[w[0]..w[1]],
                    &depth[w[0]..w[1]],
                )
            })
            .collect();
        let id = LayerIdentity::new(serde_json::json!({"game": "test"}), "solo");
        LayerTable::in_parts(id, parts).unwrap()
    }

    /// A table cut into parts of awkward lengths (not multiples of a block or of four) reads as
    /// the same table in one file, state by state and by every reader.
    #[test]
    fn a_table_in_parts_reads_as_the_whole() {
        let dir = tempfile::tempdir().unwrap();
        let n = 1000usize;
        let mut values: Vec<u8> = (0..n).map(|i| ((i * 7 + i / 13) % 4) as u8).collect();
        let mut depth: Vec<u16> = (0..n)
            .map(|i| if values[i] == 0 { 0 } else { (i % 50) as u16 })
            .collect();
        // One state, in the fifth part, with a depth no other has: what find_first must find.
        (values[700], depth[700]) = (1, 999);
        let whole = LayerTable::whole(write(dir.path(), "whole", &values, &depth));
        let parted = in_parts(dir.path(), &[0, 1, 130, 131, 517, n], &values, &depth);
        assert_eq!(parted.states(), n as u64);
        for i in 0..n as u64 {
            assert_eq!(parted.get(i).unwrap(), whole.get(i).unwrap(), "state {i}");
        }
        for (first, len) in [(0, n), (100, 40), (129, 3), (500, 500), (999, 1)] {
            let (mut v, mut d) = (vec![0u8; len], vec![0u16; len]);
            parted.read_states(first as u64, &mut v, &mut d).unwrap();
            assert_eq!(v, values[first..first + len]);
            assert_eq!(d, depth[first..first + len]);
        }
        let mut seen = Vec::new();
        parted
            .for_each_group(|v, _| -> Result<(), FormatError> {
                seen.extend_from_slice(v);
                Ok(())
            })
            .unwrap();
        assert_eq!(seen, values);
        let plane = parted.values_plane().unwrap();
        assert!((0..n as u64).all(|i| plane.get(i) == values[i as usize]));
        let want = |v: u8, d: u16| v == 2 && d == 49;
        assert_eq!(
            parted.find_first(want).unwrap(),
            whole.find_first(want).unwrap()
        );
        assert_eq!(parted.find_first(|_, d| d == 999).unwrap(), Some(700));
        assert!(parted.get(n as u64).is_err());
        // A depth of 999 does not fit a byte.
        assert!(BytePlane::of(&parted).is_err());
        assert!(parted.read_states(990, &mut [0u8; 11], &mut []).is_err());
        // Depths asked for, but not one for each value: refused, as a file refuses it.
        assert!(parted
            .read_states(0, &mut [0u8; 4], &mut [0u16; 3])
            .is_err());
    }

    /// A table in parts held one byte per state reads as the table, state by state.
    #[test]
    fn a_byte_plane_reads_as_the_table() {
        let dir = tempfile::tempdir().unwrap();
        let n = 3000usize;
        let values: Vec<u8> = (0..n).map(|i| ((i * 5 + i / 11) % 4) as u8).collect();
        let depth: Vec<u16> = (0..n)
            .map(|i| match values[i] {
                1 | 2 => (i % 127) as u16,
                _ => 0,
            })
            .collect();
        let table = in_parts(dir.path(), &[0, 7, 1100, n], &values, &depth);
        let plane = BytePlane::of(&table).unwrap();
        assert_eq!(plane.states(), n as u64);
        for i in 0..n as u64 {
            assert_eq!(plane.lookup(i).unwrap(), table.get(i).unwrap(), "state {i}");
        }
        assert!(plane.lookup(n as u64).is_err());
    }
}
