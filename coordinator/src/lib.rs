//! The coordinator of builds: a run directory and its lock, the solve loop over a run's layers
//! (embedded or on workers), the workers of a distributed run, the expansion of a reduced
//! game's table, summaries, the tables that readers open, and what a job will take (preflight's
//! bounds, plan's bill).

pub mod cluster;
pub mod digits;
pub mod expansion;
pub mod kept;
pub mod lock;
pub mod plan;
pub mod preflight;
pub mod progress;
pub mod rundir;
pub mod runner;
pub mod solve;
pub mod summary;
pub mod table_progress;
pub mod tables;
