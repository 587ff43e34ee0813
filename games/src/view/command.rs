//! A command of a game's own (`kingmaker census`, `kingmaker preferences`): its command line, and
//! what it does with the tables of the directory it is given.

use super::Solved;
use anyhow::Result;
use clap::{ArgMatches, Args, Command, FromArgMatches};

/// A subcommand a family adds to `kingmaker` ([`crate::GameFamily::commands`]). Its arguments
/// hold the directory of the tables as a positional `dir`; `kingmaker` opens them, checks that
/// they are of the family, and hands them to the command.
pub struct GameCommand {
    command: Command,
    run: Box<Run>,
}

/// Parse the arguments and run.
type Run = dyn Fn(&ArgMatches, &dyn Solved) -> Result<()> + Send + Sync;

impl GameCommand {
    /// The command `name` (`about` its one-line help), its arguments those of `A` (which must
    /// hold a positional `dir: PathBuf`), running `run`.
    pub fn new<A: Args + FromArgMatches + 'static>(
        name: &'static str,
        about: &'static str,
        run: fn(A, &dyn Solved) -> Result<()>,
    ) -> GameCommand {
        GameCommand {
            // After the arguments: their struct's doc comment would otherwise be the about.
            command: A::augment_args(Command::new(name))
                .about(about)
                .long_about(None),
            run: Box::new(move |matches, tables| run(A::from_arg_matches(matches)?, tables)),
        }
    }

    /// The command's name.
    pub fn name(&self) -> &str {
        self.command.get_name()
    }

    /// Its command line, to add to `kingmaker`'s.
    pub fn command(&self) -> Command {
        self.command.clone()
    }

    /// Run it with its parsed arguments on the tables of its `dir`.
    pub fn run(&self, matches: &ArgMatches, tables: &dyn Solved) -> Result<()> {
        (self.run)(matches, tables)
    }
}
