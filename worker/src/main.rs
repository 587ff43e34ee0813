//! `kingmaker-worker`'s command line; the process it starts is `kingmaker_worker::run`.
//! 1. `--listen` on a private network only: the token keeps strangers out, but the traffic is not
//!    encrypted (docs/cli.md, "Distributed builds").

use clap::Parser;
use kingmaker_kernel::memory::parse_size;
use kingmaker_rpc::auth::TOKEN_ENV;
use kingmaker_worker::ProcessOptions;
use std::path::PathBuf;
use std::time::Duration;

/// A Kingmaker worker: owns shards of a build's layers (as files in its data directory) and runs
/// the wave kernel on them for a coordinator (`kingmaker build ... --workers`).
#[derive(Parser)]
// The about line names everything the process runs (the games, the wave kernel and the gRPC
// worker service), and it is what `--help` has always shown.
#[command(
    name = "kingmaker-worker",
    version,
    about = "Kingmaker compute: games, the wave kernel, and the gRPC worker service"
)]
struct Args {
    /// Address to listen on (HOST:PORT; port 0 picks a free one, printed on stdout).
    /// Use a private network: calls are authenticated by the token but not encrypted.
    #[arg(long)]
    listen: String,
    /// Directory for shard arrays (a subdirectory per run).
    #[arg(long)]
    data_dir: PathBuf,
    /// The run's shared secret; every call must carry it. Prefer the environment variable, which
    /// does not show up in the process list.
    #[arg(long, env = TOKEN_ENV, hide_env_values = true)]
    token: String,
    /// Compute threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Serve Prometheus metrics at http://ADDR/metrics.
    #[arg(long)]
    metrics: Option<String>,
    /// Memory this worker may use (e.g. 100G; default: three quarters of physical memory, or of
    /// its memory cgroup's limit where that is lower). Its
    /// cells stay in memory when they fit, else they are files in the data directory, worked
    /// through out of core (a shard per thread at a time: mind `--shard-size`).
    #[arg(long, value_parser = parse_size)]
    memory_budget: Option<u64>,
    /// Sleep this many milliseconds before every wave: slows a small job down so that faults
    /// can be rehearsed on it (a kill, a cut link, a resume) before it ends. Not for real work.
    #[arg(long, default_value_t = 0)]
    wave_delay_ms: u64,
    /// Test only: claim this protocol version (tests the coordinator's version check).
    #[arg(long, hide = true)]
    protocol_version: Option<u32>,
}

fn main() {
    kingmaker_process::cpu::require_compiled_features("kingmaker-worker");
    kingmaker_process::logging::init_logging();
    let args = Args::parse();
    let opts = ProcessOptions {
        listen: args.listen,
        data_dir: args.data_dir,
        token: args.token,
        threads: args.threads,
        metrics: args.metrics,
        memory_budget: args.memory_budget,
        wave_delay: Duration::from_millis(args.wave_delay_ms),
        protocol_version: args.protocol_version,
    };
    if let Err(err) = kingmaker_worker::run(opts) {
        eprintln!("kingmaker-worker: error: {err:#}");
        std::process::exit(1);
    }
}
