//! `kingmaker`: the operator CLI and the coordinator of builds.

mod cmd;
mod deploy;
#[cfg(test)]
mod fuzz_tests;
mod serve;
mod slurm;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use kingmaker_games::view::GameCommand;

/// Kingmaker builds exact endgame databases (who can force a win, who can only choose the winner,
/// who can hold a draw) by retrograde analysis, on one machine or across gRPC workers.
#[derive(Parser)]
// The version names the commit it was built from (build.rs).
#[command(
    name = "kingmaker",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("KINGMAKER_COMMIT"), ")"),
    about,
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build every table of a game into a new run directory.
    Build(cmd::build::BuildArgs),
    /// Count placements, states and illegal states of a game (no solving).
    Count(cmd::count::CountArgs),
    /// What a job will take (CPU, wall time, each host's memory and disk, the wire, the tables),
    /// before any server is rented; refuse an inventory that cannot hold it.
    Plan(cmd::plan::PlanArgs),
    /// Breadth-first search from the start position: new states per depth.
    Bfs(cmd::bfs::BfsArgs),
    /// Look up a position in a built run: its values, depths and every move.
    Query(cmd::query::QueryArgs),
    /// Continue a stopped or crashed build from its last checkpoint.
    Resume(cmd::resume::ResumeArgs),
    /// Where a run stands: layer, wave, states decided, rate, last checkpoint.
    Status(cmd::status::StatusArgs),
    /// Write a finished run's summary.json again (e.g. with --reachable counts).
    Summarize(cmd::summarize::SummarizeArgs),
    /// Bring the layers a distributed build kept on its workers into the run directory.
    Collect(cmd::collect::CollectArgs),
    /// A principal line of optimal play from a position in one layer (a two-player game, or one
    /// of cc3p's questions), as boards.
    Line(cmd::line::LineArgs),
    /// Pack a finished run into a release: compressed, checksummed layer files and a manifest.
    Pack(cmd::pack::PackArgs),
    /// Pack the parts of kept layers a host holds, where they lie, for a release in parts
    /// (`pack --parts-at`); `kingmaker serve DIR` then serves them.
    PackPart(cmd::pack_part::PackPartArgs),
    /// Check a release: sizes, checksums, headers; --deep re-derives every state from its children.
    Verify(cmd::verify::VerifyArgs),
    /// Download a release over HTTP(S), resuming partial files and checking every sha256.
    Fetch(cmd::fetch::FetchArgs),
    /// Charts and tables of a run or a release, as one self-contained HTML page.
    Report(cmd::report::ReportArgs),
    /// Serve a release read-only over HTTP: a JSON API and a page to explore it in a browser.
    Serve(serve::ServeArgs),
    /// Spot It decks from finite projective planes: build, verify, draw (docs/decks.md).
    Deck(cmd::deck::DeckArgs),
    /// Run a build on rented servers over SSH: provision, launch, status, resume, fetch, teardown.
    Deploy(deploy::DeployArgs),
    /// Run a build as SLURM batch jobs: submit, status, cancel (checkpointed, chained, requeued).
    Slurm(slurm::SlurmArgs),
}

fn main() {
    kingmaker_process::cpu::require_compiled_features("kingmaker");
    // Output piped into `head` and the like: end quietly when the reader goes away, as Unix tools
    // do, instead of panicking on a broken pipe.
    // SAFETY: setting a signal disposition before any other thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let game_commands = kingmaker_games::game_commands();
    let matches = command_line(&game_commands).get_matches();
    kingmaker_process::logging::init_logging();
    let result = match matches.subcommand() {
        Some((name, sub)) if game_commands.iter().any(|c| c.1.name() == name) => {
            let (family, command) = game_commands.iter().find(|c| c.1.name() == name).unwrap();
            cmd::game_command::run(family, command, sub)
        }
        _ => match Cli::from_arg_matches(&matches) {
            Ok(cli) => run(cli),
            Err(e) => e.exit(),
        },
    };
    if let Err(err) = result {
        eprintln!("kingmaker: error: {err:#}");
        std::process::exit(1);
    }
}

/// `kingmaker`'s command line: its own commands and every game's ([`GameCommand`]).
fn command_line(game_commands: &[(&str, GameCommand)]) -> clap::Command {
    game_commands
        .iter()
        .fold(Cli::command(), |cli, (_, c)| cli.subcommand(c.command()))
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Build(args) => cmd::build::run(args),
        Command::Count(args) => cmd::count::run(args),
        Command::Plan(args) => cmd::plan::run(args),
        Command::Bfs(args) => cmd::bfs::run(args),
        Command::Query(args) => cmd::query::run(args),
        Command::Resume(args) => cmd::resume::run(args),
        Command::Status(args) => cmd::status::run(args),
        Command::Summarize(args) => cmd::summarize::run(args),
        Command::Collect(args) => cmd::collect::run(args),
        Command::Line(args) => cmd::line::run(args),
        Command::Pack(args) => cmd::pack::run(args),
        Command::PackPart(args) => cmd::pack_part::run(args),
        Command::Verify(args) => cmd::verify::run(args),
        Command::Fetch(args) => cmd::fetch::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Report(args) => cmd::report::run(args),
        Command::Deck(args) => cmd::deck::run(args),
        Command::Deploy(args) => deploy::run(args, |argv| {
            command_line(&kingmaker_games::game_commands())
                .try_get_matches_from(argv)
                .map(|_| ())
        }),
        Command::Slurm(args) => slurm::run(args),
    }
}
