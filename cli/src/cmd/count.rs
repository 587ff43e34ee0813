//! `kingmaker count GAME ...`: the size of a game's index space, without solving.

use anyhow::Result;
use clap::Args;
use kingmaker_games::GameChoice;

#[derive(Args, Debug)]
pub struct CountArgs {
    #[command(subcommand)]
    pub game: GameChoice,
    /// Print JSON.
    #[arg(long, global = true)]
    pub json: bool,
}

pub fn run(args: CountArgs) -> Result<()> {
    let value = args.game.spec().count()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        for (k, v) in value.as_object().expect("object") {
            let v = v
                .as_str()
                .map(kingmaker_coordinator::digits::group_digits)
                .unwrap_or_else(|| v.to_string());
            println!("{k:>23}: {v}");
        }
    }
    Ok(())
}
