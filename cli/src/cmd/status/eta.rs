//! The time a run has left, from its wave history (`waves.jsonl`). Every layer of a game has the
//! same states, so the layers finished so far (their waves, tail included, and the writing of
//! their tables) give the pace of the rest; before one has finished, the number of tail waves and
//! the time to write a table are not known, and the estimate says so instead of guessing.

use kingmaker_coordinator::rundir::Progress;
use kingmaker_tablefmt::run::WaveRecord;
use std::time::Duration;

/// An estimate: the seconds left (None: not known) and a sentence that says what it covers.
#[derive(Debug, PartialEq)]
pub struct Eta {
    pub seconds: Option<f64>,
    pub words: String,
}

/// One layer's span in the history: when its first wave began, when its last one closed, and
/// the seconds its waves took.
struct Span<'a> {
    layer: &'a str,
    start: f64,
    end: f64,
    wave_secs: f64,
}

fn spans(waves: &[WaveRecord]) -> Vec<Span<'_>> {
    let mut out: Vec<Span> = Vec::new();
    for w in waves {
        let began = w.at_unix as f64 - w.seconds;
        match out.last_mut().filter(|s| s.layer == w.layer) {
            Some(s) => {
                s.start = s.start.min(began);
                s.end = s.end.max(w.at_unix as f64);
                s.wave_secs += w.seconds;
            }
            None => out.push(Span {
                layer: &w.layer,
                start: began,
                end: w.at_unix as f64,
                wave_secs: w.seconds,
            }),
        }
    }
    out
}

/// `1 h 2 min`, `3 min 20 s`, `45 s`.
pub fn duration_words(secs: f64) -> String {
    let secs = secs.max(0.0).round() as u64;
    let rounded = match secs {
        0..=119 => secs,
        120..=3599 => secs / 10 * 10,
        _ => secs / 60 * 60,
    };
    humantime::format_duration(Duration::from_secs(rounded))
        .to_string()
        .replace('h', " h")
        .replace('m', " min")
        .replace('s', " s")
}

/// What is left of a run whose layers are `layers` (in build order), `finished` of them done,
/// with `progress` its last progress (None: not started) and `waves` its wave history.
pub fn estimate(
    layers: &[&str],
    finished: &[&str],
    progress: Option<&Progress>,
    waves: &[WaveRecord],
) -> Eta {
    let unknown = |why: String| Eta {
        seconds: None,
        words: why,
    };
    let after = "then the summary; `pack` is not estimated";
    if progress.is_some_and(|p| p.phase == "summarizing") {
        return unknown(format!(
            "not known: every layer is solved and the summary's counts and classes are being \
             computed (minutes on a large game); {after}"
        ));
    }
    let spans = spans(waves);
    // Each finished layer's cost: its waves, and the writing of its table up to the next
    // layer's first wave (when the history has it; downtime between a stop and its resume
    // counts too, which errs on the long side).
    let mut costs = Vec::new();
    let mut writes = Vec::new();
    for (k, s) in spans.iter().enumerate() {
        if !finished.contains(&s.layer) {
            continue;
        }
        let write = spans.get(k + 1).map(|n| (n.start - s.end).max(0.0));
        writes.extend(write);
        costs.push(s.wave_secs + write.unwrap_or(0.0));
    }
    let current = progress.filter(|p| !finished.contains(&p.layer.as_str()));
    let left_after = layers
        .len()
        .saturating_sub(finished.len() + usize::from(current.is_some()));
    if costs.is_empty() {
        let how_far = current
            .filter(|p| p.phase == "running")
            .map(|p| {
                format!(
                    " (layer {}: {:.1}% decided after {} waves)",
                    p.layer,
                    100.0 * p.decided_total as f64 / p.states.max(1) as f64,
                    p.wave
                )
            })
            .unwrap_or_default();
        return unknown(format!(
            "not known until a first layer has finished{how_far}: the number of its tail waves \
             (each decides few states) and the time to write its table are not known in advance"
        ));
    }
    let per_layer = costs.iter().sum::<f64>() / costs.len() as f64;
    let pace = format!(
        "at the pace of the {} finished layer{}",
        costs.len(),
        if costs.len() == 1 { "" } else { "s" }
    );
    let this_layer = match current {
        None => 0.0,
        Some(p) if p.phase == "writing" => {
            if writes.is_empty() {
                0.0
            } else {
                writes.iter().sum::<f64>() / writes.len() as f64
            }
        }
        Some(p) => {
            let done: f64 = spans
                .iter()
                .filter(|s| s.layer == p.layer)
                .map(|s| s.wave_secs)
                .sum();
            let left = per_layer - done;
            if left <= 0.0 {
                return unknown(format!(
                    "not known: layer {} has taken {} so far, longer than the finished layers \
                     (about {} each); {} more layer{} after it",
                    p.layer,
                    duration_words(done),
                    duration_words(per_layer),
                    left_after,
                    if left_after == 1 { "" } else { "s" }
                ));
            }
            left
        }
    };
    let seconds = this_layer + left_after as f64 * per_layer;
    Eta {
        seconds: Some(seconds),
        words: format!(
            "about {} left to the last layer's table ({pace}, about {} each, tail waves and \
             writing included); {after}",
            duration_words(seconds),
            duration_words(per_layer)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wave(layer: &str, wave: u32, seconds: f64, at_unix: u64) -> WaveRecord {
        WaveRecord {
            layer: layer.into(),
            wave,
            decided: 1,
            decided_total: 1,
            expanded: 0,
            applied: 0,
            seconds,
            wire_bytes: None,
            at_unix,
        }
    }

    fn progress(layer: &str, phase: &str, decided: u64) -> Progress {
        Progress {
            layer: layer.into(),
            wave: 3,
            decided_in_wave: 1,
            decided_total: decided,
            states: 1000,
            layers_finished: vec![],
            seconds: 1.0,
            rate: 1.0,
            updated_unix: 0,
            pid: 1,
            last_checkpoint: None,
            workers: vec![],
            phase: phase.into(),
            writing: None,
        }
    }

    #[test]
    fn without_a_finished_layer_the_estimate_says_it_does_not_know() {
        // 99.6 % decided: the states left/rate estimate said "0 s" here.
        let waves = [wave("solo", 0, 10.0, 110), wave("solo", 1, 10.0, 120)];
        let p = progress("solo", "running", 996);
        let eta = estimate(&["solo"], &[], Some(&p), &waves);
        assert_eq!(eta.seconds, None);
        assert!(
            eta.words.starts_with("not known until a first layer"),
            "{eta:?}"
        );
        assert!(eta.words.contains("99.6% decided after 3 waves"), "{eta:?}");
    }

    #[test]
    fn finished_layers_give_the_pace_of_the_rest_with_tails_and_tables() {
        // solo: waves of 30 s in all from 100 to 130, its table written until 150 (enable_ab's
        // first wave began at 150); enable_ab has run 10 s of waves.
        let waves = [
            wave("solo", 0, 10.0, 110),
            wave("solo", 1, 20.0, 130),
            wave("enable_ab", 0, 10.0, 160),
        ];
        let p = progress("enable_ab", "running", 500);
        let layers = ["solo", "enable_ab", "enable_ac"];
        let eta = estimate(&layers, &["solo"], Some(&p), &waves);
        // 50 s a layer: 40 s of this one, 50 s of the next.
        assert_eq!(eta.seconds, Some(90.0), "{eta:?}");
        assert!(eta.words.starts_with("about 1 min 30 s left"), "{eta:?}");
        // Writing enable_ab's table: solo's took 20 s.
        let w = progress("enable_ab", "writing", 1000);
        assert_eq!(
            estimate(&layers, &["solo"], Some(&w), &waves).seconds,
            Some(70.0)
        );
        // A layer slower than the finished ones: not known, not 0 s.
        let slow = [wave("enable_ab", 0, 60.0, 220)];
        let all: Vec<_> = waves[..2].iter().cloned().chain(slow).collect();
        let eta = estimate(&layers, &["solo"], Some(&p), &all);
        assert_eq!(eta.seconds, None, "{eta:?}");
        assert!(
            eta.words.contains("longer than the finished layers"),
            "{eta:?}"
        );
        let s = progress("enable_ac", "summarizing", 1000);
        assert_eq!(estimate(&layers, &layers, Some(&s), &waves).seconds, None);
    }

    #[test]
    fn durations_read_as_words() {
        assert_eq!(duration_words(0.2), "0 s");
        assert_eq!(duration_words(45.4), "45 s");
        assert_eq!(duration_words(150.0), "2 min 30 s");
        assert_eq!(duration_words(3725.0), "1 h 2 min");
    }
}
