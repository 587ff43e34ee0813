//! Progress of long work (`pack`, `collect`, `fetch`) on stderr: a bar on a terminal, else a line
//! every few seconds with the rate and the time left. Stdout stays the command's result.

use crate::cmd::status::duration_words;
use indicatif::{ProgressBar, ProgressStyle};
use kingmaker_coordinator::digits::human_bytes;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// What a ticker counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Unit {
    States,
    Bytes,
}

/// The environment variable that sets the seconds between two progress lines when stderr is
/// not a terminal (default 5; 0: a line for every step of the work).
pub const EVERY_ENV: &str = "KINGMAKER_PROGRESS_SECS";

fn every() -> Duration {
    let secs = std::env::var(EVERY_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok());
    Duration::from_secs_f64(secs.filter(|s| s.is_finite() && *s >= 0.0).unwrap_or(5.0))
}

pub struct Ticker {
    what: &'static str,
    unit: Unit,
    total: u64,
    done: u64,
    /// Done before this process began (files already here, downloads resumed): no rate.
    before: u64,
    started: Instant,
    printed: Instant,
    every: Duration,
    step: String,
    bar: Option<ProgressBar>,
}

impl Ticker {
    /// `what` (the command) will count `total` units.
    pub fn new(what: &'static str, unit: Unit, total: u64) -> Ticker {
        let bar = std::io::stderr().is_terminal().then(|| {
            let count = match unit {
                Unit::States => "{pos}/{len} states",
                Unit::Bytes => "{binary_bytes}/{binary_total_bytes}",
            };
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{{prefix}} [{{bar:30}}] {count} {{msg}} (about {{eta}} left)"
                ))
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar.set_prefix(what);
            bar
        });
        let now = Instant::now();
        Ticker {
            what,
            unit,
            total,
            done: 0,
            before: 0,
            started: now,
            printed: now,
            every: every(),
            step: String::new(),
            bar,
        }
    }

    /// What is being done now (shown beside the count).
    pub fn step(&mut self, step: impl Into<String>) {
        self.step = step.into();
        if let Some(bar) = &self.bar {
            bar.set_message(self.step.clone());
        }
    }

    /// `n` units that were done already (no part of the rate).
    pub fn skip(&mut self, n: u64) {
        self.before += n;
        self.add(n);
    }

    /// `n` more units done; a line if the last one is a few seconds old.
    pub fn add(&mut self, n: u64) {
        self.done += n;
        if let Some(bar) = &self.bar {
            bar.set_position(self.done);
            return;
        }
        if self.printed.elapsed() >= self.every {
            self.printed = Instant::now();
            eprintln!("{}", self.line());
        }
    }

    /// The progress line: done, rate, time left.
    pub fn line(&self) -> String {
        let amount = |n: u64| match self.unit {
            Unit::States => format!("{n}"),
            Unit::Bytes => human_bytes(n),
        };
        let unit = match self.unit {
            Unit::States => " states",
            Unit::Bytes => "",
        };
        let secs = self.started.elapsed().as_secs_f64();
        let rate = self.done.saturating_sub(self.before) as f64 / secs.max(1e-9);
        // Work done again (a download started afresh) counts twice: never past the total.
        let done = self.done.min(self.total);
        let left = self.total - done;
        let (speed, eta) = if rate > 0.0 && secs >= 1.0 {
            let speed = match self.unit {
                Unit::States => format!("{:.1} M states/s", rate / 1e6),
                Unit::Bytes => format!("{}/s", human_bytes(rate as u64)),
            };
            (
                speed,
                format!("about {} left", duration_words(left as f64 / rate)),
            )
        } else {
            ("no rate yet".into(), "time left not known yet".into())
        };
        let step = if self.step.is_empty() {
            String::new()
        } else {
            format!("; {}", self.step)
        };
        format!(
            "{}: {:.1}% ({} of {}{unit}{step}), {speed}, {eta}",
            self.what,
            100.0 * done as f64 / self.total.max(1) as f64,
            amount(done),
            amount(self.total),
        )
    }

    /// The work is over: clear the bar.
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_how_far_how_fast_and_how_long() {
        let mut t = Ticker::new("fetch", Unit::Bytes, 4 << 20);
        t.bar = None;
        t.skip(1 << 20);
        assert!(
            t.line()
                .starts_with("fetch: 25.0% (1.0 MiB of 4.0 MiB), no rate yet"),
            "{}",
            t.line()
        );
        t.started -= Duration::from_secs(2);
        t.add(1 << 20);
        t.step("layer solo");
        // 1 MiB in 2 s (the MiB already here is no part of the rate): 2 MiB left, 4 s.
        assert_eq!(
            t.line(),
            "fetch: 50.0% (2.0 MiB of 4.0 MiB; layer solo), 512.0 KiB/s, about 4 s left"
        );
    }
}
