//! `kingmaker bfs GAME --depth D`: new states per depth from the start (terminal states are
//! reached but not expanded).

use super::game::GameChoice;
use anyhow::Result;
use clap::Args;
use kingmaker_worker::games::cc3p::{self, Cc3p};

#[derive(Args, Debug)]
pub struct BfsArgs {
    #[command(subcommand)]
    pub game: GameChoice,
    /// How many plies to search.
    #[arg(long, global = true, default_value_t = 9)]
    pub depth: u32,
    /// Print JSON.
    #[arg(long, global = true)]
    pub json: bool,
}

pub fn run(args: BfsArgs) -> Result<()> {
    let per_depth = match &args.game {
        GameChoice::Cc3p(a) => cc3p::bfs_new_per_depth(&Cc3p::new(a.level)?, args.depth),
        GameChoice::Cc2p(_) => anyhow::bail!("bfs is implemented for cc3p"),
        GameChoice::Toppen(_) => {
            anyhow::bail!("toppen has no single start position (every terrain and colouring is one); use `census`")
        }
    };
    let total: u64 = 1 + per_depth.iter().sum::<u64>();
    if args.json {
        println!(
            "{}",
            serde_json::json!({"new_per_depth": per_depth, "total_with_start": total})
        );
    } else {
        for (d, n) in per_depth.iter().enumerate() {
            println!(
                "depth {:>2}: {:>12} new states",
                d + 1,
                super::count::group_digits(&n.to_string())
            );
        }
        println!(
            "total (start included): {}",
            super::count::group_digits(&total.to_string())
        );
    }
    Ok(())
}
