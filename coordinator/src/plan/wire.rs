//! The bytes a distributed job sends between its hosts, by what carries them: the waves' updates,
//! the checkpoints' replicas, the routed expansion of a kept layer, the gathered tables
//! (docs/benchmarks/distributed.md, "Where the wire goes").

use serde::Serialize;

/// Bytes on the wire per update sent to another worker, as the coordinator logs them (cc2p 5×5 / 6
/// on two loopback workers: 0.60–0.62; the rehearsal on three: 0.615).
pub const WIRE_BYTES_PER_UPDATE: f64 = 0.62;
/// Bytes on the wire per decided state sent in place of its updates, with the few updates beside
/// them (cc2p on two loopback workers, 2026-12-08: 0.518 at 7×7 / 3, 0.645 at 5×5 / 4).
pub const WIRE_BYTES_PER_STATE: f64 = 0.65;
/// What the links carry over the updates' bytes (gRPC, TCP and IP headers, acknowledgements): the
/// rehearsal's waves without a replica beside them.
pub const FRAMING: f64 = 1.02;
/// Bytes a checkpoint sends to its replica, over the cells it saves: the chunks that changed since
/// the last one, compressed (the rehearsal: 13.55 GB in 37 checkpoints of 1.93 GB of cells, one
/// every two waves).
pub const REPLICA_SHARE: f64 = 0.19;
/// Waves a layer takes, for the checkpoints' count (cc2p 7×7 / 3: 49, 7×7 / 4: 61, 5×5 / 6: 71).
pub const WAVES_PER_LAYER: f64 = 72.0;
/// Bytes per full state routed to another worker by the expansion of a kept layer (the rehearsal:
/// 2.59 GB for the two thirds of 9.61 × 10⁹ states that crossed).
pub const ROUTED_BYTES_PER_STATE: f64 = 0.40;
/// Bytes per solved state gathered by the coordinator when the layers are not kept on the workers:
/// a value and a two-byte depth, before zstd (a bound).
pub const GATHERED_BYTES_PER_STATE: f64 = 3.0;

/// How often a build checkpoints (as `build`'s options; 0: never that way).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Cadence {
    /// Every this many waves.
    pub waves: u32,
    /// Every this many seconds of wall, at the end of a wave.
    pub secs: u64,
}

impl Default for Cadence {
    /// `build`'s defaults.
    fn default() -> Self {
        Cadence {
            waves: 0,
            secs: 600,
        }
    }
}

impl Cadence {
    /// Checkpoints of a layer that takes `wall_secs`: one at the end of a wave at most.
    pub fn checkpoints(&self, wall_secs: f64) -> f64 {
        let by_waves = if self.waves > 0 {
            WAVES_PER_LAYER / self.waves as f64
        } else {
            0.0
        };
        let by_secs = if self.secs > 0 {
            (wall_secs / self.secs as f64).floor()
        } else {
            0.0
        };
        (by_waves + by_secs).min(WAVES_PER_LAYER)
    }
}

/// What the wire carries in a job without faults (a host lost also sends its checkpoint back to it
/// and the waves since it again).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Wire {
    /// The waves' updates between workers, with their framing.
    pub updates: u64,
    /// The checkpoints' replicas on the ring successor.
    pub replicas: u64,
    /// The expansion of kept layers: rows routed to the workers that own their full states.
    pub expansion: u64,
    /// The layers gathered by the coordinator (not kept on the workers).
    pub gathered: u64,
    /// Checkpoints per layer counted in `replicas`.
    pub checkpoints_per_layer: f64,
}

impl Wire {
    /// All of it.
    pub fn total(&self) -> u64 {
        self.updates + self.replicas + self.expansion + self.gathered
    }
}

/// The wire of a job on `workers` workers (1 or 0: none).
pub struct WireJob {
    /// Workers.
    pub workers: u64,
    /// Layers.
    pub layers: f64,
    /// Updates that cross between workers, in all layers.
    pub crossing_updates: f64,
    /// Decided states that cross in place of their updates, in all layers.
    pub crossing_states: f64,
    /// Bytes of all workers' cells of one layer.
    pub cells_bytes: f64,
    /// Wall seconds of one layer.
    pub layer_wall_secs: f64,
    /// The checkpoints' cadence.
    pub cadence: Cadence,
    /// States of a finished layer.
    pub states: f64,
    /// States solved per layer.
    pub solved: f64,
    /// A symmetry-reduced game, whose kept layers are expanded by routing.
    pub reduced: bool,
    /// Layers stay on the workers.
    pub kept: bool,
}

/// The bytes `job` sends.
pub fn wire(job: &WireJob) -> Wire {
    if job.workers <= 1 {
        return Wire::default();
    }
    let others = (job.workers - 1) as f64 / job.workers as f64;
    let checkpoints = job.cadence.checkpoints(job.layer_wall_secs);
    let replicas = job.layers * checkpoints * REPLICA_SHARE * job.cells_bytes;
    let (expansion, gathered) = if job.kept {
        let routed = if job.reduced {
            job.layers * job.states * others * ROUTED_BYTES_PER_STATE
        } else {
            0.0
        };
        (routed, 0.0)
    } else {
        (0.0, job.layers * job.solved * GATHERED_BYTES_PER_STATE)
    };
    Wire {
        updates: ((job.crossing_updates * WIRE_BYTES_PER_UPDATE
            + job.crossing_states * WIRE_BYTES_PER_STATE)
            * FRAMING) as u64,
        replicas: replicas as u64,
        expansion: expansion as u64,
        gathered: gathered as u64,
        checkpoints_per_layer: checkpoints,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 5×5 / 6 rehearsal, as measured: 53.24 × 10⁹ updates applied, 64.5 % of them sent, 37
    /// checkpoints, the quarter's 2.41 × 10⁹ states kept on three workers.
    #[test]
    fn the_rehearsal_is_priced_as_it_ran() {
        let w = wire(&WireJob {
            workers: 3,
            layers: 1.0,
            crossing_updates: 53.24e9 * 0.645,
            crossing_states: 0.0,
            cells_bytes: 1.93e9,
            layer_wall_secs: 3300.0,
            cadence: Cadence {
                waves: 2,
                secs: 1800,
            },
            states: 9.61e9,
            solved: 2.41e9,
            reduced: true,
            kept: true,
        });
        assert_eq!(w.checkpoints_per_layer, 37.0);
        assert_eq!(w.gathered, 0);
        // Measured: 21.1 GB of updates, 13.55 GB of replicas, 2.59 GB routed once.
        let gb = |b: u64| b as f64 / 1e9;
        assert!((21.0..22.5).contains(&gb(w.updates)), "{w:?}");
        assert!((12.5..14.5).contains(&gb(w.replicas)), "{w:?}");
        assert!((2.4..2.8).contains(&gb(w.expansion)), "{w:?}");
    }

    #[test]
    fn one_worker_sends_nothing_and_a_gathered_layer_goes_to_the_coordinator() {
        let mut job = WireJob {
            workers: 1,
            layers: 2.0,
            crossing_updates: 1e9,
            crossing_states: 0.0,
            cells_bytes: 1e9,
            layer_wall_secs: 6000.0,
            cadence: Cadence::default(),
            states: 4e9,
            solved: 1e9,
            reduced: true,
            kept: false,
        };
        assert_eq!(wire(&job).total(), 0);
        job.workers = 2;
        let w = wire(&job);
        assert_eq!(w.checkpoints_per_layer, 10.0);
        assert_eq!(w.expansion, 0);
        assert_eq!(w.gathered, 6_000_000_000);
        // At most one checkpoint a wave.
        job.cadence = Cadence { waves: 1, secs: 1 };
        assert_eq!(wire(&job).checkpoints_per_layer, WAVES_PER_LAYER);
    }
}
