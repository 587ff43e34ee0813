//! `kingmaker query DIR POSITION`: look a position up in a built run or a packed release.

use crate::tables::open_tables;
use anyhow::Result;
use clap::Args;
use kingmaker_games::Notation;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct QueryArgs {
    /// A run directory written by `kingmaker build`, or a release written by `kingmaker pack`.
    pub dir: PathBuf,
    /// The position, in the game's notation (see the README), or `start`.
    pub position: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: QueryArgs) -> Result<()> {
    let tables = open_tables(&args.dir)?;
    let game = tables.game().clone();
    let index = game.parse_or_start(&args.position)?;
    game.view().query(&tables, index, args.json)
}
