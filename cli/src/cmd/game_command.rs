//! A game's own command (`kingmaker census`, `kingmaker preferences`): open the tables of its
//! `dir`, check they are of the command's family, and hand them over.

use anyhow::{bail, Result};
use clap::ArgMatches;
use kingmaker_coordinator::tables::open_tables;
use kingmaker_games::view::GameCommand;
use std::path::PathBuf;

/// Run `command` of `family` with its parsed arguments.
pub fn run(family: &str, command: &GameCommand, matches: &ArgMatches) -> Result<()> {
    let dir = matches
        .get_one::<PathBuf>("dir")
        .expect("a game command's arguments hold its tables' dir");
    let tables = open_tables(dir)?;
    let holds = tables.spec().family();
    if holds != family {
        bail!(
            "`{}` is a command of {family} tables; {} holds {holds} (build one with `kingmaker build {family}`)",
            command.name(),
            dir.display(),
        );
    }
    command.run(matches, &tables)
}
