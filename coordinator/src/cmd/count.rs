//! `kingmaker count GAME ...`: the size of a game's index space, without solving.

use crate::games::GameChoice;
use anyhow::Result;
use clap::Args;

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
                .map(group_digits)
                .unwrap_or_else(|| v.to_string());
            println!("{k:>23}: {v}");
        }
    }
    Ok(())
}

/// "4947100130" -> "4,947,100,130" (non-numbers unchanged).
pub fn group_digits(s: &str) -> String {
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return s.to_string();
    }
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}
