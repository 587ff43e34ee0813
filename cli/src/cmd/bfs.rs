//! `kingmaker bfs GAME --depth D`: new states per depth from the start (terminal states are
//! reached but not expanded), up to depth D or the last depth with a new state.

use anyhow::Result;
use clap::Args;
use kingmaker_games::GameChoice;
use kingmaker_games::Notation;
use kingmaker_kernel::Game;

#[derive(Args, Debug)]
pub struct BfsArgs {
    #[command(subcommand)]
    pub game: GameChoice,
    /// How many plies to search (the search ends earlier when a depth brings no new state).
    #[arg(long, global = true, default_value_t = 9)]
    pub depth: u32,
    /// Print JSON.
    #[arg(long, global = true)]
    pub json: bool,
}

pub fn run(args: BfsArgs) -> Result<()> {
    let game = args.game.spec().build()?;
    let Some(start) = game.start_index() else {
        anyhow::bail!(
            "{} has no single start position (every starting layout is one); use `census`",
            game.name()
        );
    };
    let per_depth = kingmaker_kernel::bfs::new_per_depth(&game, start, args.depth);
    let total: u64 = 1 + per_depth.iter().sum::<u64>();
    // Fewer depths than asked: the search found every reachable state and stopped.
    let last = per_depth.len() as u32;
    let exhausted = last < args.depth;
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "new_per_depth": per_depth, "total_with_start": total,
                "depth_requested": args.depth, "last_depth": last, "exhausted": exhausted,
            })
        );
    } else {
        for (d, n) in per_depth.iter().enumerate() {
            println!(
                "depth {:>2}: {:>12} new states",
                d + 1,
                kingmaker_coordinator::digits::group_digits(&n.to_string())
            );
        }
        println!(
            "total (start included): {}",
            kingmaker_coordinator::digits::group_digits(&total.to_string())
        );
        if exhausted {
            println!(
                "the search ended at depth {last}: no new state at depth {} (every state reachable \
                 from the start is counted; --depth {} was not needed)",
                last + 1,
                args.depth
            );
        }
    }
    Ok(())
}
