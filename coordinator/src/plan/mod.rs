//! `kingmaker plan`: what a job will take before any server is rented — CPU, wall time, each
//! host's memory and disk, the wire, the tables — priced from rates measured on this machine
//! ([`calibration`]) and the disk bound of [`crate::preflight`]; a host that cannot hold its
//! share is named with what it lacks.

pub mod calibration;
pub mod wire;

use crate::preflight::{needs, table_bytes, Job};
use kingmaker_kernel::cell_code::cell_bytes;
use kingmaker_kernel::memory::PROCESS_RESERVE;
use serde::Serialize;

/// Where a figure comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Measured on this machine by this command.
    Measured,
    /// Measured on this machine earlier (the calibration file).
    Calibrated,
    /// Counted from the game and the job (states, cells, bounds of the formats).
    Modelled,
    /// A rate measured once on the development machine and taken as it is (docs/benchmarks).
    Assumed,
}

impl Source {
    /// As the table prints it.
    pub fn word(self) -> &'static str {
        match self {
            Source::Measured => "measured here",
            Source::Calibrated => "calibrated here",
            Source::Modelled => "modelled",
            Source::Assumed => "assumed",
        }
    }
}

/// The kernel's CPU with its cells in files over in memory (docs/benchmarks/out-of-core.md).
pub const OUT_OF_CORE_CPU: f64 = 1.8;
/// CPU-nanoseconds an update sent to another worker costs beyond one applied in place (cc2p
/// 5×5 / 6 on two loopback workers, 2026-12-07: 1.45× the embedded CPU for 2.7 × 10¹⁰ updates
/// sent).
pub const WIRE_NS_PER_UPDATE: f64 = 60.0;
/// CPU-nanoseconds a decided state sent in place of its updates costs the workers beyond the
/// embedded build, all of it counted (naming every state's span, the two processes): cc2p on two
/// loopback workers, 2026-12-08, 340 at 7×7 / 3 and 390 at 5×5 / 4 per state that crossed.
pub const WIRE_NS_PER_STATE: f64 = 400.0;
/// The largest wave's share of a layer's updates (cc2p 7×7 / 4: 900 M of 15.8 G decided).
pub const PEAK_WAVE_SHARE: f64 = 0.06;
/// CPU-nanoseconds per full state of the out-of-core expansion, files included (cc2p 7×7 / 4's
/// build: about 80; the costing bench: 120 at 4 pieces, 165 at 6).
pub const EXPANSION_OUT_OF_CORE_NS: f64 = 100.0;
/// CPU-nanoseconds per full state of the expansion in memory (cc2p 6×6 / 3: 77.9 M states in 1.9 s
/// of wall on two threads).
pub const EXPANSION_NS: f64 = 50.0;
/// CPU-nanoseconds per state of gathering a layer and writing its table (zstd level 1).
pub const TABLE_NS: f64 = 12.0;
/// Memory beside the cells while waves run, at most (its buffers: cc2p 7×7 / 3 takes 15 MiB
/// beside 108 MiB of cells; 7×7 / 4 nothing measurable beside 11.8 GiB).
pub const WAVE_BUFFERS: u64 = 64 << 20;

/// The waves' buffers beside `cells` bytes of cells: an eighth of them, at most [`WAVE_BUFFERS`].
fn wave_buffers(cells: u64) -> u64 {
    (cells / 8).min(WAVE_BUFFERS)
}
/// Bytes a state of a release takes (values and depths, zstd level 15), at most the run's.
pub const RELEASE_SHARE_OF_TABLE: f64 = 1.0;

/// A host of the job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HostSpec {
    /// Its name.
    pub name: String,
    /// `coordinator`, `worker`, or `embedded` (one machine doing both).
    pub role: String,
    /// Compute threads.
    pub cores: u64,
    /// Memory in bytes.
    pub memory: u64,
    /// Free disk in bytes where it keeps its data (None: not known).
    pub disk: Option<u64>,
    /// Its memory budget, if set (default: three quarters of its memory).
    pub budget: Option<u64>,
}

/// The rates a plan is priced from, each with its source.
#[derive(Clone, Debug, Serialize)]
pub struct Rates {
    /// CPU-nanoseconds of moves per solved state and layer.
    pub moves_ns: f64,
    /// Share of live states.
    pub live: f64,
    /// Predecessors per live state.
    pub predecessors: f64,
    /// Share of the updates that go to another worker, with this job's workers (measured on the
    /// sample: a predecessor's owner against its state's).
    pub crossing: f64,
    /// Share of the decided states sent in place of their updates (the game names the span of
    /// their predecessors); the same share of them crosses.
    pub spans: f64,
    /// Where the moves come from.
    pub moves_source: Source,
    /// The kernel's CPU over its moves.
    pub overhead: f64,
    /// Where the overhead comes from.
    pub overhead_source: Source,
    /// Sequential disk writes, bytes per second.
    pub disk_rate: f64,
    /// Where the disk rate comes from.
    pub disk_source: Source,
}

impl Rates {
    /// No rates: for the hosts' checks alone (cells, memory, disk), which do not depend on them.
    pub fn unknown() -> Rates {
        Rates {
            moves_ns: 0.0,
            live: 0.0,
            predecessors: 0.0,
            crossing: 0.0,
            spans: 0.0,
            moves_source: Source::Modelled,
            overhead: 1.0,
            overhead_source: Source::Modelled,
            disk_rate: 1.0,
            disk_source: Source::Modelled,
        }
    }
}

/// What is planned.
#[derive(Clone, Debug, Serialize)]
pub struct JobShape {
    /// The game's name.
    pub game: String,
    /// States of the finished tables.
    pub states: u64,
    /// States the kernel solves.
    pub solved_states: u64,
    /// Layers (at most).
    pub layers: usize,
    /// States per shard.
    pub shard_size: u64,
    /// Finished layers stay on the workers.
    pub keep_layers_on_workers: bool,
    /// How often it checkpoints.
    pub checkpoints: wire::Cadence,
}

/// One host's share.
#[derive(Clone, Debug, Serialize)]
pub struct HostPlan {
    /// Its name and role.
    pub name: String,
    /// `coordinator`, `worker` or `embedded`.
    pub role: String,
    /// Bytes of cells it holds while a layer is solved.
    pub cells_bytes: u64,
    /// Whether they fit its budget (else out of core).
    pub in_memory: bool,
    /// Its memory budget.
    pub budget_bytes: u64,
    /// Peak memory (resident), modelled.
    pub peak_memory_bytes: u64,
    /// Peak disk, a bound.
    pub peak_disk_bytes: u64,
    /// What it lacks to hold its share (empty: it fits).
    pub lacks: Vec<String>,
}

/// A job's bill.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// What is planned.
    pub job: JobShape,
    /// Alias of `job.states`.
    pub states: u64,
    /// Alias of `job.solved_states`.
    pub solved_states: u64,
    /// CPU-hours in all.
    pub cpu_hours: f64,
    /// Its parts: (what, CPU-hours, source).
    pub cpu_parts: Vec<(String, f64, Source)>,
    /// Wall hours on the hosts' cores.
    pub wall_hours: f64,
    /// Bytes sent between hosts in all (0 on one machine): `wire.total()`.
    pub wire_bytes: u64,
    /// What carries them.
    pub wire: wire::Wire,
    /// Bytes sent in the largest wave.
    pub wire_bytes_peak_wave: u64,
    /// The finished tables, a bound.
    pub table_bytes: u64,
    /// The release, a bound.
    pub release_bytes: u64,
    /// Each host.
    pub hosts: Vec<HostPlan>,
    /// The rates used.
    pub rates: Rates,
}

impl Plan {
    /// Whether every host holds its share.
    pub fn fits(&self) -> bool {
        self.hosts.iter().all(|h| h.lacks.is_empty())
    }
}

/// Bytes of the states a gathered six-bit table lists apart, at most before it widens.
fn escapes_bound(solved: u64) -> u64 {
    use kingmaker_games::reduction::ESCAPES_PER;
    16 * (solved / ESCAPES_PER as u64)
}

/// The default budget of a host of `memory` bytes.
fn budget_of(h: &HostSpec) -> u64 {
    h.budget
        .unwrap_or_else(|| kingmaker_kernel::memory::default_budget_of(h.memory))
}

/// The bill of `job` on `hosts` (one `embedded` host, or a coordinator and workers).
pub fn plan(job: &JobShape, hosts: &[HostSpec], rates: &Rates) -> Plan {
    let workers: Vec<&HostSpec> = hosts.iter().filter(|h| h.role == "worker").collect();
    let distributed = !workers.is_empty();
    let n = workers.len().max(1) as u64;
    let layers = job.layers as f64;
    let reduced = job.states > job.solved_states;
    let mut host_plans = Vec::new();
    let mut any_out_of_core = false;
    let human = crate::digits::human_bytes;
    for h in hosts {
        let budget = budget_of(h);
        let (solved, full, tables_here, cells_holder) = match h.role.as_str() {
            "worker" => (
                job.solved_states.div_ceil(n),
                job.states.div_ceil(n),
                job.keep_layers_on_workers,
                true,
            ),
            "coordinator" => (
                job.solved_states,
                job.states,
                !job.keep_layers_on_workers,
                false,
            ),
            _ => (job.solved_states, job.states, true, true),
        };
        let cells = if cells_holder { cell_bytes(solved) } else { 0 };
        let in_memory = cells.saturating_add(wave_buffers(cells)) <= budget;
        any_out_of_core |= cells_holder && !in_memory;
        let waves_memory = if !cells_holder {
            0
        } else if in_memory {
            cells + wave_buffers(cells)
        } else {
            budget
        };
        // Writing the table: a reduced game's gathered table (as the cells are released shard by
        // shard) or, past half the budget, the routed expansion
        // within the budget; a summary that reads every layer's values holds them at 2 bits a
        // state.
        let gather_memory = if !tables_here {
            0
        } else if reduced && crate::expansion::is_out_of_core(solved, budget) {
            budget
        } else if reduced {
            // Six bits a state, the few deeper than 60 listed apart (a game whose states mostly
            // are widens it to 2 bytes: not known before the layer is solved).
            (solved * 3 / 4 + escapes_bound(solved)).max(if h.role == "embedded" {
                cells
            } else {
                0
            })
        } else {
            wave_buffers(cells)
        };
        // A summary that reads every layer's values (cc3p's classes) holds them at 2 bits a
        // state where the tables are.
        let summary_memory = if h.role == "worker" || !tables_here {
            0
        } else {
            (job.layers as u64).saturating_mul(job.states / 4)
        };
        let peak_memory = waves_memory.max(gather_memory).max(summary_memory) + PROCESS_RESERVE;
        let disk_needs = needs(&Job {
            solved: if cells_holder { solved } else { 0 },
            full: if tables_here { full } else { 0 },
            layers: if tables_here { job.layers } else { 0 },
            shard_size: job.shard_size,
            budget,
            remote: !cells_holder,
        });
        // A worker also keeps the replica of its neighbour's checkpoint.
        let replica = if h.role == "worker" && n > 1 {
            2 * cells
        } else {
            0
        };
        let peak_disk = disk_needs.disk + replica;
        let mut lacks = Vec::new();
        if let Some(free) = h.disk.filter(|&free| free < peak_disk) {
            lacks.push(format!(
                "disk: needs up to {}, has {} free",
                human(peak_disk),
                human(free)
            ));
        }
        if h.memory > 0 && peak_memory > h.memory {
            lacks.push(format!(
                "memory: needs about {}, has {}",
                human(peak_memory),
                human(h.memory)
            ));
        } else if h.memory > 0 && budget >= h.memory {
            lacks.push(format!(
                "memory: its budget {} is not below its {} of memory",
                human(budget),
                human(h.memory)
            ));
        }
        // (A host whose memory is not known is not judged by it.)
        if (h.memory > 0 || h.budget.is_some())
            && budget < kingmaker_kernel::memory::MIN_DEFAULT_BUDGET
        {
            lacks.push(format!(
                "memory: a budget of {} is too little for any build",
                human(budget)
            ));
        }
        if h.cores == 0 {
            lacks.push("cores: none".into());
        }
        host_plans.push(HostPlan {
            name: h.name.clone(),
            role: h.role.clone(),
            cells_bytes: cells,
            in_memory,
            budget_bytes: budget,
            peak_memory_bytes: peak_memory,
            peak_disk_bytes: peak_disk,
            lacks,
        });
    }
    let solved = job.solved_states as f64;
    let mut waves_factor = rates.overhead;
    if any_out_of_core {
        waves_factor *= OUT_OF_CORE_CPU;
    }
    let hours = |ns: f64| ns / 1e9 / 3600.0;
    let decided = layers * solved * rates.live;
    // A state whose predecessors lie in one span crosses as itself, the others as their updates.
    let (states, updates) = (
        decided * rates.spans,
        decided * (1.0 - rates.spans) * rates.predecessors,
    );
    let (crossing_states, crossing_updates) = if distributed {
        (states * rates.crossing, updates * rates.crossing)
    } else {
        (0.0, 0.0)
    };
    let mut cpu_parts = vec![(
        "waves".to_string(),
        hours(layers * solved * rates.moves_ns * waves_factor),
        rates.moves_source,
    )];
    if distributed {
        cpu_parts.push((
            "the wire".into(),
            hours(crossing_updates * WIRE_NS_PER_UPDATE + crossing_states * WIRE_NS_PER_STATE),
            Source::Assumed,
        ));
    }
    if reduced {
        let routed = hosts.iter().any(|h| {
            h.role != "worker" && crate::expansion::is_out_of_core(job.solved_states, budget_of(h))
        });
        let ns = if routed {
            EXPANSION_OUT_OF_CORE_NS
        } else {
            EXPANSION_NS
        };
        cpu_parts.push((
            "expansion".into(),
            hours(layers * job.states as f64 * ns),
            Source::Assumed,
        ));
    }
    cpu_parts.push((
        "tables".into(),
        hours(layers * job.states as f64 * TABLE_NS),
        Source::Assumed,
    ));
    let cpu_hours: f64 = cpu_parts.iter().map(|p| p.1).sum();
    let cores: u64 = if distributed {
        workers.iter().map(|w| w.cores).sum()
    } else {
        hosts.iter().map(|h| h.cores).sum()
    };
    let table = table_bytes(job.states).saturating_mul(job.layers as u64);
    let io_hours = table as f64 / rates.disk_rate.max(1.0) / 3600.0;
    let wall_hours = cpu_hours / cores.max(1) as f64 + io_hours;
    let wire = wire::wire(&wire::WireJob {
        workers: workers.len() as u64,
        layers,
        crossing_updates,
        crossing_states,
        cells_bytes: workers
            .iter()
            .map(|_| cell_bytes(job.solved_states.div_ceil(n)))
            .sum::<u64>() as f64,
        layer_wall_secs: wall_hours * 3600.0 / layers.max(1.0),
        cadence: job.checkpoints,
        states: job.states as f64,
        solved: job.solved_states as f64,
        reduced,
        kept: job.keep_layers_on_workers,
    });
    let updates_peak_wave = wire.updates as f64 / layers.max(1.0) * PEAK_WAVE_SHARE;
    let replica_peak = if wire.checkpoints_per_layer > 0.0 {
        wire.replicas as f64 / layers.max(1.0) / wire.checkpoints_per_layer
    } else {
        0.0
    };
    Plan {
        states: job.states,
        solved_states: job.solved_states,
        job: job.clone(),
        cpu_hours,
        cpu_parts,
        wall_hours,
        wire_bytes: wire.total(),
        // A checkpoint's replica goes on into the wave after it.
        wire_bytes_peak_wave: (updates_peak_wave + replica_peak) as u64,
        wire,
        table_bytes: table,
        release_bytes: (table as f64 * RELEASE_SHARE_OF_TABLE) as u64,
        hosts: host_plans,
        rates: rates.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rates() -> Rates {
        Rates {
            moves_ns: 1000.0,
            live: 0.5,
            predecessors: 20.0,
            crossing: 0.5,
            spans: 0.0,
            moves_source: Source::Measured,
            overhead: 1.3,
            overhead_source: Source::Measured,
            disk_rate: 1e9,
            disk_source: Source::Measured,
        }
    }

    fn host(name: &str, role: &str, memory: u64, disk: u64) -> HostSpec {
        HostSpec {
            name: name.into(),
            role: role.into(),
            cores: 32,
            memory,
            disk: Some(disk),
            budget: None,
        }
    }

    fn job(solved: u64, states: u64) -> JobShape {
        JobShape {
            game: "g".into(),
            states,
            solved_states: solved,
            layers: 1,
            shard_size: 1 << 24,
            keep_layers_on_workers: false,
            checkpoints: wire::Cadence::default(),
        }
    }

    #[test]
    fn one_machine_in_memory_and_out_of_core() {
        let gb = 1u64 << 30;
        let small = plan(
            &job(1 << 30, 1 << 32),
            &[host("here", "embedded", 24 * gb, 80 * gb)],
            &rates(),
        );
        assert!(small.fits(), "{:?}", small.hosts);
        assert!(small.hosts[0].in_memory);
        assert_eq!(small.wire_bytes, 0);
        // 2^30 states at 1000 ns × 1.3: 0.39 CPU-hours of waves.
        assert!(
            (small.cpu_parts[0].1 - 0.3878).abs() < 0.01,
            "{:?}",
            small.cpu_parts
        );
        let big = plan(
            &job(1 << 36, 1 << 38),
            &[host("here", "embedded", 24 * gb, 80 * gb)],
            &rates(),
        );
        assert!(!big.hosts[0].in_memory);
        assert!(!big.fits());
        assert!(
            big.hosts[0].lacks[0].starts_with("disk"),
            "{:?}",
            big.hosts[0].lacks
        );
        assert!(
            big.cpu_parts[0].1 > 64.0 * small.cpu_parts[0].1,
            "out of core costs more"
        );
    }

    #[test]
    fn workers_share_the_cells_and_the_wire_carries_updates() {
        let gb = 1u64 << 30;
        let hosts = [
            host("c", "coordinator", 128 * gb, 2048 * gb),
            host("w1", "worker", 128 * gb, 500 * gb),
            host("w2", "worker", 128 * gb, 500 * gb),
        ];
        let p = plan(&job(200 << 30, 800 << 30), &hosts, &rates());
        let w = &p.hosts[1];
        assert_eq!(w.cells_bytes, cell_bytes(100 << 30));
        assert!(w.in_memory);
        assert_eq!(p.hosts[0].cells_bytes, 0);
        // Half the updates cross (the rates say so): 200 Gi × 0.5 live × 20 predecessors / 2 ×
        // 0.62 bytes, and their framing.
        let expect = (200u64 << 30) as f64 * 0.5 * 20.0 / 2.0 * 0.62 * wire::FRAMING;
        assert!((p.wire.updates as f64 / expect - 1.0).abs() < 1e-6);
        // A game that names its predecessors' spans sends half its decided states instead, at
        // 0.65 bytes and 400 CPU-ns each.
        let spans = Rates {
            spans: 1.0,
            ..rates()
        };
        let q = plan(&job(200 << 30, 800 << 30), &hosts, &spans);
        let expect = (200u64 << 30) as f64 * 0.5 / 2.0 * 0.65 * wire::FRAMING;
        assert!((q.wire.updates as f64 / expect - 1.0).abs() < 1e-6);
        let wire_cpu = |p: &Plan| p.cpu_parts.iter().find(|c| c.0 == "the wire").unwrap().1;
        let expect = (200u64 << 30) as f64 * 0.5 * 0.5 * WIRE_NS_PER_STATE / 3.6e12;
        assert!((wire_cpu(&q) / expect - 1.0).abs() < 1e-6);
        assert!(wire_cpu(&q) < wire_cpu(&p) / 2.0);
        // Beside them the checkpoints' replicas and, the layer not kept, its gathering: 3 bytes a
        // solved state.
        assert!(p.wire.replicas > 0);
        assert_eq!(p.wire.gathered, (200u64 << 30) * 3);
        assert_eq!(p.wire_bytes, p.wire.total());
        let tiny = [
            host("c", "coordinator", 128 * gb, 2048 * gb),
            host("w1", "worker", 128 * gb, 1 << 30),
        ];
        let p = plan(&job(200 << 30, 800 << 30), &tiny, &rates());
        assert!(!p.fits());
        assert_eq!(p.hosts[1].name, "w1");
        assert!(
            p.hosts[1].lacks[0].contains("disk"),
            "{:?}",
            p.hosts[1].lacks
        );
    }
}
