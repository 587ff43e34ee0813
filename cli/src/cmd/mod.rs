//! One module per subcommand: its arguments and what it does.

pub mod bfs;
pub mod build;
pub mod collect;
pub mod count;
pub mod deck;
pub mod fetch;
pub mod game_command;
pub mod line;
pub mod pack;
pub mod pack_part;
pub mod plan;
pub mod query;
pub mod report;
pub mod resume;
pub mod status;
pub mod summarize;
/// Progress lines with an ETA for the long commands (pack, collect, fetch).
pub mod ticker;
pub mod verify;
