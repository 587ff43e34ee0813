//! What the cell prototypes of issue 65 share: wave 0's sweep, frontiers in temporary files, CPU
//! and peak RSS.

use anyhow::{Context, Result};
use kingmaker_kernel::{Game, Node};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// A frontier being written: u32 indices appended to an unnamed temporary file.
pub struct Spool {
    out: BufWriter<File>,
    pub len: u64,
}

impl Spool {
    pub fn new(dir: &Path) -> Result<Spool> {
        let file = tempfile::tempfile_in(dir)
            .with_context(|| format!("creating a frontier file in {}", dir.display()))?;
        Ok(Spool {
            out: BufWriter::with_capacity(1 << 16, file),
            len: 0,
        })
    }

    pub fn push(&mut self, i: u64) -> Result<()> {
        self.out.write_all(&(i as u32).to_le_bytes())?;
        self.len += 1;
        Ok(())
    }

    /// The frontier written, to be read back from its start.
    pub fn into_frontier(self) -> Result<Frontier> {
        let mut file = self.out.into_inner().map_err(|e| e.into_error())?;
        file.seek(SeekFrom::Start(0))?;
        Ok(Frontier {
            input: BufReader::with_capacity(1 << 16, file),
            left: self.len,
            len: self.len,
        })
    }
}

/// A frontier read back in the order it was written; its file goes when it is dropped.
pub struct Frontier {
    input: BufReader<File>,
    left: u64,
    pub len: u64,
}

impl Frontier {
    pub fn next(&mut self) -> Result<Option<u64>> {
        if self.left == 0 {
            return Ok(None);
        }
        let mut b = [0; 4];
        self.input.read_exact(&mut b)?;
        self.left -= 1;
        Ok(Some(u32::from_le_bytes(b) as u64))
    }
}

pub fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes the struct it is given.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(u.ru_utime) + s(u.ru_stime)
}

/// Peak resident memory (VmHWM) in MiB.
pub fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Every state of `game` with its class, in runs of 65,536, as the kernel's initial pass
/// classifies them.
pub fn each_node(game: &impl Game, mut f: impl FnMut(u64, Node) -> Result<()>) -> Result<()> {
    let mut nodes = vec![Node::Illegal; 1 << 16];
    let size = game.size();
    let mut first = 0;
    while first < size {
        let run = &mut nodes[..((size - first) as usize).min(1 << 16)];
        game.nodes(first, run);
        for (k, &node) in run.iter().enumerate() {
            f(first + k as u64, node)?;
        }
        first += run.len() as u64;
    }
    Ok(())
}
