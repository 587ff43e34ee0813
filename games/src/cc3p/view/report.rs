//! cc3p's section of `kingmaker report`: the control classes over all states, over the states
//! reachable from the start, and ply by ply.

use crate::view::report::{Part, Section};
use kingmaker_tablefmt::release::manifest::thousands;
use serde_json::Value;

const CLASSES: [(&str, &str); 4] = [
    ("kingmaker", "kingmaker"),
    ("solo_win", "solo win"),
    ("spoiler_draw", "spoiler draw"),
    ("terminal", "terminal"),
];

/// The section, from `summary.json`'s `classes` and `reachable` (empty if it has neither).
pub fn sections(summary: &Value) -> Vec<Section> {
    let count = |c: &Value, k: &str| c[k].as_u64().unwrap_or(0);
    let total = |c: &Value| -> u64 { CLASSES.iter().map(|(k, _)| count(c, k)).sum() };
    let shares = |c: &Value| Part::Table {
        head: Vec::new(),
        rows: CLASSES
            .iter()
            .map(|(k, name)| {
                let n = count(c, k);
                vec![
                    name.to_string(),
                    thousands(n),
                    format!("{:.1} %", 100.0 * n as f64 / total(c).max(1) as f64),
                ]
            })
            .collect(),
        row_heads: true,
        folded: false,
    };
    let mut parts = Vec::new();
    if summary["classes"].is_object() {
        parts.push(Part::Heading("Over all legal states".into()));
        parts.push(shares(&summary["classes"]));
    }
    let reach = &summary["reachable"];
    if reach["classes"].is_object() {
        parts.push(Part::Heading(
            "Over the states reachable from the start".into(),
        ));
        parts.push(shares(&reach["classes"]));
    }
    if let Some(per_ply) = reach["classes_per_depth"].as_array() {
        let lines = CLASSES
            .iter()
            .map(|(k, name)| {
                let points = per_ply
                    .iter()
                    .enumerate()
                    .map(|(ply, c)| {
                        (
                            ply as f64,
                            100.0 * count(c, k) as f64 / total(c).max(1) as f64,
                        )
                    })
                    .collect();
                (name.to_string(), points)
            })
            .collect();
        parts.push(Part::Lines {
            title: "Control classes of the states first reached at each ply".into(),
            x: "ply from the start".into(),
            y: "share of the new states (%)".into(),
            lines,
        });
        parts.push(Part::Table {
            head: std::iter::once("ply".to_string())
                .chain(CLASSES.iter().map(|(_, n)| n.to_string()))
                .collect(),
            rows: per_ply
                .iter()
                .enumerate()
                .map(|(ply, c)| {
                    std::iter::once(ply.to_string())
                        .chain(CLASSES.iter().map(|(k, _)| thousands(count(c, k))))
                        .collect()
                })
                .collect(),
            row_heads: false,
            folded: true,
        });
    }
    if parts.is_empty() {
        return Vec::new();
    }
    vec![Section {
        title: "Who controls the game (docs/rules.md §1)".into(),
        parts,
    }]
}
