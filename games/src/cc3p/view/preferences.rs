//! Preference rules over the solved cc3p tables (docs/rules.md §1.4): how players who cannot win
//! alone behave ([`choose`]), and who wins when everyone follows the rule ([`outcomes`]).
//! 1. Each state has exactly one chosen child, so following the rule ends in a won terminal state
//!    or a cycle, and one retrograde pass from the terminal states finds every outcome.

use crate::cc3p::answers::{answer, Cc3pTables, Question};
use crate::cc3p::Cc3p;
use crate::reading::{Answer, Value};
use crate::Notation;
use kingmaker_kernel::{Game, Node};
use kingmaker_tablefmt::{FormatError, Lookup};

/// How a player who cannot win alone chooses its move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Rule {
    /// Win alone if it can (fastest), else hold a draw alone if it can, else hand the win to the
    /// opponent it can make win sooner (the next player on a tie).
    SelfInterest,
    /// Win alone if it can, else hold a draw alone, else keep every opponent from a forced win
    /// as long as it can (a child where nobody can win alone, its own loss slowest), else lose
    /// slowest: it never hands the win.
    Spoiler,
    /// The study's cyclic preference: win, else draw, else hand the win to the next player
    /// (A to B, B to C, C to A).
    Cyclic,
    /// The reverse: hand the win to the previous player (A to C, C to B, B to A).
    Reverse,
    /// Hand the win to the opponent nearer its goal (fewer rows to go, `Cc3p::rows_to_go`; the
    /// next player on a tie).
    Leader,
    /// Hand the win to the opponent farther from its goal (more rows to go; next on a tie).
    Trailer,
}

impl Rule {
    /// Every rule, in the order docs/results.md lists them.
    pub const ALL: [Rule; 6] = [
        Rule::SelfInterest,
        Rule::Spoiler,
        Rule::Cyclic,
        Rule::Reverse,
        Rule::Leader,
        Rule::Trailer,
    ];

    /// The rule's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Rule::SelfInterest => "self-interest",
            Rule::Spoiler => "spoiler",
            Rule::Cyclic => "cyclic",
            Rule::Reverse => "reverse",
            Rule::Leader => "leader",
            Rule::Trailer => "trailer",
        }
    }
}

/// A state's outcome under a rule: the winner (0, 1, 2 for A, B, C), [`ENDLESS`] or
/// [`ILLEGAL`].
pub type Outcome = u8;
/// Play goes round a cycle for ever.
pub const ENDLESS: Outcome = 3;
/// The state cannot arise in play.
pub const ILLEGAL: Outcome = 4;
/// Not yet known (inside the pass only).
const UNKNOWN: Outcome = 5;

/// The child that `rule` plays at the live state `s` (None if `s` has no move). It reads only
/// the answers the rule needs, one lookup each: the mover's own `solo` at `s` says whether some
/// child wins (W) or holds a draw (D) for it, so a mover who has lost reads no child's `solo`
/// before its rule's own step.
pub fn choose<T: Lookup>(
    game: &Cc3p,
    tables: &Cc3pTables<T>,
    rule: Rule,
    s: u64,
) -> Result<Option<u64>, FormatError> {
    let Node::Live { mover } = game.node(s) else {
        return Ok(None);
    };
    let p = usize::from(mover);
    let (next, prev) = ((p + 1) % 3, (p + 2) % 3);
    let children = game.children_in_seat_order(s);
    let ask = |c: u64, q: Question| answer(game, tables, c, q);
    let depth = |a: Answer| i64::from(a.depth.unwrap_or(0));
    // The first child of least key among those `key` gives one (seat order breaks ties).
    let least = |key: &dyn Fn(u64) -> Result<Option<i64>, FormatError>| {
        let mut best: Option<(i64, u64)> = None;
        for &c in &children {
            if let Some(k) = key(c)? {
                if best.is_none_or(|(b, _)| k < b) {
                    best = Some((k, c));
                }
            }
        }
        Ok::<_, FormatError>(best.map(|b| b.1))
    };
    let with = |c: u64, q: Question, v: Value, key: &dyn Fn(Answer) -> i64| {
        let a = ask(c, q)?;
        Ok((a.value == v).then(|| key(a)))
    };
    let own = ask(s, Question::Solo(p))?.value;
    if own == Value::Win {
        // Win alone, fastest.
        return least(&|c| with(c, Question::Solo(p), Value::Win, &depth));
    }
    if own == Value::Draw {
        // Hold the draw alone: the first child that keeps it.
        return least(&|c| with(c, Question::Solo(p), Value::Draw, &|_| 0));
    }
    let slowest_loss = |c: u64| Ok(Some(-depth(ask(c, Question::Solo(p))?)));
    if rule == Rule::Spoiler {
        // A child where nobody can win alone, the own loss slowest; else the slowest loss.
        let open = |c: u64| {
            if matches!(game.node(c), Node::Live { .. }) {
                for r in 0..3 {
                    if ask(c, Question::Solo(r))?.value == Value::Win {
                        return Ok(None);
                    }
                }
            }
            slowest_loss(c)
        };
        return Ok(least(&open)?.or(least(&slowest_loss)?));
    }
    let q = match rule {
        Rule::Cyclic => next,
        Rule::Reverse => prev,
        Rule::SelfInterest => {
            let soon = |q: usize| {
                let a = ask(s, Question::Enable(p, q))?;
                Ok::<_, FormatError>(if a.value == Value::Win {
                    depth(a)
                } else {
                    i64::MAX
                })
            };
            if soon(prev)? < soon(next)? {
                prev
            } else {
                next
            }
        }
        Rule::Leader | Rule::Trailer => by_rows_to_go(game, rule, s, p),
        Rule::Spoiler => unreachable!("handled above"),
    };
    // Hand the win to q (fastest), else to the other opponent, else lose slowest.
    let hand = |q: usize| least(&|c| with(c, Question::Enable(p, q), Value::Win, &depth));
    let other = if q == next { prev } else { next };
    if let Some(c) = hand(q)? {
        return Ok(Some(c));
    }
    if let Some(c) = hand(other)? {
        return Ok(Some(c));
    }
    least(&slowest_loss)
}

/// The opponent the leader (`Rule::Leader`) or trailer rule hands the win to at `s`, whose mover
/// is `mover`: the one nearer its goal, or farther from it ([`Cc3p::rows_to_go`]); the next
/// player on a tie.
fn by_rows_to_go(game: &Cc3p, rule: Rule, s: u64, mover: usize) -> usize {
    let (next, prev) = ((mover + 1) % 3, (mover + 2) % 3);
    let to_go = game.rows_to_go(s);
    let prev_wins = match rule {
        Rule::Leader => to_go[prev] < to_go[next],
        Rule::Trailer => to_go[prev] > to_go[next],
        _ => unreachable!("only the leader and trailer rules compare rows to go"),
    };
    if prev_wins {
        prev
    } else {
        next
    }
}

/// Every state's outcome under a rule, and the plies to the end where it ends.
pub struct Outcomes {
    /// By state: the winner, [`ENDLESS`] or [`ILLEGAL`].
    pub outcome: Vec<Outcome>,
    /// By state: plies to the won terminal state (0 for endless and illegal states).
    pub plies: Vec<u32>,
    /// By live state: the child the rule plays (`u64::MAX` elsewhere).
    pub choice: Vec<u64>,
}

/// The outcomes of every state under `rule`: the chosen child of every live state, then one
/// retrograde pass from the terminal states through the unmoves, in which a predecessor takes its
/// child's outcome when the child is the one it chooses. The states never reached go round a
/// cycle for ever.
pub fn outcomes<T: Lookup + Sync>(
    game: &Cc3p,
    tables: &Cc3pTables<T>,
    rule: Rule,
) -> Result<Outcomes, FormatError> {
    use rayon::prelude::*;
    let n = game.size();
    let choice: Vec<u64> = (0..n)
        .into_par_iter()
        .map(|s| Ok(choose(game, tables, rule, s)?.unwrap_or(u64::MAX)))
        .collect::<Result<_, FormatError>>()?;
    let mut outcome = vec![UNKNOWN; n as usize];
    let mut plies = vec![0u32; n as usize];
    let mut queue = std::collections::VecDeque::new();
    for s in 0..n {
        match game.node(s) {
            Node::Terminal { outcome: w } => {
                outcome[s as usize] = w;
                queue.push_back(s);
            }
            Node::Illegal => outcome[s as usize] = ILLEGAL,
            Node::Live { .. } => {}
        }
    }
    let mut preds = Vec::new();
    while let Some(t) = queue.pop_front() {
        preds.clear();
        game.predecessors(t, &mut preds);
        for &p in &preds {
            let i = p as usize;
            if choice[i] == t && outcome[i] == UNKNOWN {
                outcome[i] = outcome[t as usize];
                plies[i] = plies[t as usize] + 1;
                queue.push_back(p);
            }
        }
    }
    for o in outcome.iter_mut().filter(|o| **o == UNKNOWN) {
        *o = ENDLESS;
    }
    Ok(Outcomes {
        outcome,
        plies,
        choice,
    })
}

/// Games up to this many states get every rule's outcomes at hand in `query` and the explorer
/// (level 1; level 2 is counted by walks, `every_placement.rs`).
pub const AT_HAND_STATES: u64 = 1 << 24;

/// Every rule's outcomes, when the game is small enough to hold them ([`AT_HAND_STATES`]).
pub fn all_at_hand<T: Lookup + Sync>(
    game: &Cc3p,
    tables: &Cc3pTables<T>,
) -> Result<Option<Vec<(Rule, Outcomes)>>, FormatError> {
    if game.size() > AT_HAND_STATES || !tables.depths {
        return Ok(None);
    }
    Rule::ALL
        .iter()
        .map(|&r| Ok((r, outcomes(game, tables, r)?)))
        .collect::<Result<_, _>>()
        .map(Some)
}

/// A state's outcome under each rule, as `query --json` and the explorer give it:
/// `[{"rule", "outcome": "C wins" | "endless" | "illegal", "plies"}]`.
pub fn outcomes_json(rules: &[(Rule, Outcomes)], s: u64) -> serde_json::Value {
    rules
        .iter()
        .map(|(rule, o)| {
            serde_json::json!({
                "rule": rule.name(),
                "outcome": outcome_text(o.outcome[s as usize]),
                "plies": o.plies[s as usize],
            })
        })
        .collect()
}

/// The move each rule plays at `s`, as the explorer's computer plays it:
/// `[{"rule", "move": "A c6-c5" | null}]` (null where the state has no move).
pub fn choices_json<T: Lookup>(
    game: &Cc3p,
    tables: &Cc3pTables<T>,
    s: u64,
) -> Result<serde_json::Value, FormatError> {
    let moves = Notation::moves(game, s);
    Rule::ALL
        .iter()
        .map(|&rule| {
            let child = choose(game, tables, rule, s)?;
            let text = child.and_then(|c| moves.iter().find(|m| m.1 == c).map(|m| m.0.clone()));
            Ok(serde_json::json!({"rule": rule.name(), "move": text}))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(serde_json::Value::from)
}

/// Following `rule` from the state `s` one move at a time: its outcome, the states the chosen
/// moves lead to in turn, and, when the walk went round a cycle, the index in those states where
/// the cycle starts (the repeated state is the last one). What a game too large for [`outcomes`]
/// uses for one state, and the check of the retrograde pass in the tests.
pub fn follow<T: Lookup>(
    game: &Cc3p,
    tables: &Cc3pTables<T>,
    rule: Rule,
    s: u64,
) -> Result<(Outcome, Vec<u64>, Option<usize>), FormatError> {
    follow_until(game, tables, rule, s, |_| None)
}

/// [`follow`], stopping early at a state whose outcome `known` gives (every state on a walk has
/// the walk's outcome, so walks from many states can share what earlier ones found).
pub fn follow_until<T: Lookup>(
    game: &Cc3p,
    tables: &Cc3pTables<T>,
    rule: Rule,
    s: u64,
    known: impl Fn(u64) -> Option<Outcome>,
) -> Result<(Outcome, Vec<u64>, Option<usize>), FormatError> {
    let mut seen = std::collections::HashMap::from([(s, 0usize)]);
    let mut states = Vec::new();
    let mut here = s;
    loop {
        if let Some(o) = known(here) {
            return Ok((o, states, None));
        }
        match game.node(here) {
            Node::Illegal => return Ok((ILLEGAL, states, None)),
            Node::Terminal { outcome } => return Ok((outcome, states, None)),
            Node::Live { .. } => {}
        }
        let c = choose(game, tables, rule, here)?.expect("a live state has a move");
        states.push(c);
        if let Some(&k) = seen.get(&c) {
            return Ok((ENDLESS, states, Some(k)));
        }
        seen.insert(c, states.len());
        here = c;
    }
}

/// The moves from `s` through `states` (each a child of the one before), in notation.
pub fn move_texts(game: &Cc3p, s: u64, states: &[u64]) -> Vec<(String, u64)> {
    let mut here = s;
    states
        .iter()
        .map(|&c| {
            let text = Notation::moves(game, here)
                .into_iter()
                .find(|m| m.1 == c)
                .map(|m| m.0)
                .expect("each state is a child of the one before");
            here = c;
            (text, c)
        })
        .collect()
}

/// A state's outcome under each rule, found by following the rule from it ([`follow`]): what a
/// game too large for [`all_at_hand`] shows for one position, in the shape of [`outcomes_json`].
pub fn followed_json<T: Lookup>(
    game: &Cc3p,
    tables: &Cc3pTables<T>,
    s: u64,
) -> Result<serde_json::Value, FormatError> {
    let mut out = Vec::new();
    for rule in Rule::ALL {
        let (o, states, cycle) = follow(game, tables, rule, s)?;
        let plies = if cycle.is_some() { 0 } else { states.len() };
        out.push(serde_json::json!({
            "rule": rule.name(),
            "outcome": outcome_text(o),
            "plies": plies,
        }));
    }
    Ok(serde_json::Value::Array(out))
}

fn outcome_text(o: Outcome) -> String {
    match o {
        ENDLESS => "endless".to_string(),
        ILLEGAL => "illegal".to_string(),
        w => format!("{} wins", crate::cc3p::answers::PLAYERS[usize::from(w)]),
    }
}

/// The moves the rule plays from `s` until a won state, or until a position repeats (the cycle
/// starting at the returned index).
pub fn line(game: &Cc3p, o: &Outcomes, s: u64) -> (Vec<(String, u64)>, Option<usize>) {
    let mut seen = std::collections::HashMap::from([(s, 0usize)]);
    let mut plies = Vec::new();
    let mut here = s;
    loop {
        let c = o.choice[here as usize];
        if c == u64::MAX {
            return (plies, None);
        }
        let text = Notation::moves(game, here)
            .into_iter()
            .find(|m| m.1 == c)
            .map(|m| m.0)
            .expect("the chosen child is a move");
        plies.push((text, c));
        if let Some(&k) = seen.get(&c) {
            return (plies, Some(k));
        }
        seen.insert(c, plies.len());
        here = c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc3p::answers::{answers, Answers, Class};

    use super::super::level_one::level_1;

    /// The reference [`choose`] is tested against: every child's twelve answers read, then the
    /// steps in turn.
    fn choose_from_all_answers<T: Lookup>(
        game: &Cc3p,
        tables: &Cc3pTables<T>,
        rule: Rule,
        s: u64,
    ) -> Result<Option<u64>, FormatError> {
        let Node::Live { mover } = game.node(s) else {
            return Ok(None);
        };
        let p = usize::from(mover);
        let (next, prev) = ((p + 1) % 3, (p + 2) % 3);
        let children: Vec<(u64, Answers)> = game
            .children_in_seat_order(s)
            .into_iter()
            .map(|c| Ok((c, answers(game, tables, c)?)))
            .collect::<Result<_, FormatError>>()?;
        let depth = |a: crate::reading::Answer| a.depth.unwrap_or(0);
        // The first child of least key among those `keep` selects (seat order breaks ties).
        let least = |keep: &dyn Fn(&Answers) -> bool, key: &dyn Fn(&Answers) -> i64| {
            children
                .iter()
                .filter(|c| keep(&c.1))
                .min_by_key(|c| key(&c.1))
                .map(|c| c.0)
        };
        if let Some(c) = least(&|a| a.solo[p].value == Value::Win, &|a| {
            i64::from(depth(a.solo[p]))
        }) {
            return Ok(Some(c));
        }
        if let Some(c) = least(&|a| a.solo[p].value == Value::Draw, &|_| 0) {
            return Ok(Some(c));
        }
        let slowest =
            |keep: &dyn Fn(&Answers) -> bool| least(keep, &|a| -i64::from(depth(a.solo[p])));
        if rule == Rule::Spoiler {
            return Ok(slowest(&|a| a.class != Class::SoloWin).or_else(|| slowest(&|_| true)));
        }
        let q = match rule {
            Rule::Cyclic => next,
            Rule::Reverse => prev,
            Rule::SelfInterest => {
                let here = answers(game, tables, s)?;
                let soon = |q: usize| match here.enable[p][q] {
                    a if a.value == Value::Win => depth(a),
                    _ => u16::MAX,
                };
                if soon(prev) < soon(next) {
                    prev
                } else {
                    next
                }
            }
            Rule::Leader | Rule::Trailer => by_rows_to_go(game, rule, s, p),
            Rule::Spoiler => unreachable!("handled above"),
        };
        let hand = |q: usize| {
            least(&|a| a.enable[p][q].value == Value::Win, &|a| {
                i64::from(depth(a.enable[p][q]))
            })
        };
        Ok(hand(q)
            .or_else(|| hand(if q == next { prev } else { next }))
            .or_else(|| slowest(&|_| true)))
    }

    #[test]
    fn choosing_from_single_answers_agrees_with_reading_all_twelve() {
        let (game, t) = level_1();
        for rule in Rule::ALL {
            for s in 0..game.size() {
                assert_eq!(
                    choose(&game, &t, rule, s).unwrap(),
                    choose_from_all_answers(&game, &t, rule, s).unwrap(),
                    "{} at {s}",
                    rule.name()
                );
            }
        }
    }

    #[test]
    fn the_retrograde_pass_agrees_with_following_the_rule_from_every_state() {
        let (game, t) = level_1();
        for rule in Rule::ALL {
            let o = outcomes(&game, &t, rule).unwrap();
            for s in 0..game.size() {
                let (want, states, cycle) = follow(&game, &t, rule, s).unwrap();
                assert_eq!(o.outcome[s as usize], want, "{} at {s}", rule.name());
                let plies = if cycle.is_some() {
                    0
                } else {
                    states.len() as u32
                };
                assert_eq!(o.plies[s as usize], plies, "{} at {s}", rule.name());
            }
        }
    }

    #[test]
    fn following_each_rule_from_a_position_shows_what_the_pass_found() {
        let (game, t) = level_1();
        let all = all_at_hand(&game, &t).unwrap().expect("level 1 is at hand");
        for s in 0..game.size() {
            assert_eq!(
                followed_json(&game, &t, s).unwrap(),
                outcomes_json(&all, s),
                "at {s}"
            );
        }
    }

    /// The tie-break's order (issue 44): at a state where A moves, the game's move order; at
    /// any state rotated by one seat, the rotated children in the same order. So the same
    /// situation seen from B's or C's seat breaks its ties towards the corresponding move.
    #[test]
    fn the_seat_order_is_the_move_order_with_the_mover_in_a_seat() {
        let (game, _) = level_1();
        let mut seen = [0; 3];
        for s in 0..game.size() {
            let Node::Live { mover } = game.node(s) else {
                continue;
            };
            let p = usize::from(mover);
            seen[p] += 1;
            let order = game.children_in_seat_order(s);
            if p == 0 {
                let moves: Vec<u64> = Notation::moves(&*game, s)
                    .into_iter()
                    .map(|m| m.1)
                    .collect();
                assert_eq!(order, moves, "at {s}");
            }
            let turned: Vec<u64> = order.iter().map(|&c| game.rotate(c)).collect();
            let r = game.rotate(s);
            assert_eq!(game.children_in_seat_order(r), turned, "at {s}");
        }
        assert!(
            seen.iter().all(|&n| n > 0),
            "live states by mover: {seen:?}"
        );
    }

    #[test]
    fn every_rule_treats_the_three_seats_alike() {
        let (game, t) = level_1();
        let turned = |o: Outcome| if o < 3 { (o + 1) % 3 } else { o };
        for rule in Rule::ALL {
            let o = outcomes(&game, &t, rule).unwrap();
            for s in (0..game.size()).filter(|&s| !matches!(game.node(s), Node::Illegal)) {
                let (r, i) = (game.rotate(s) as usize, s as usize);
                let choice = (o.choice[i] != u64::MAX).then(|| game.rotate(o.choice[i]));
                assert_eq!(
                    (o.choice[r] != u64::MAX).then_some(o.choice[r]),
                    choice,
                    "{} at {s}",
                    rule.name()
                );
                assert_eq!(o.outcome[r], turned(o.outcome[i]), "{} at {s}", rule.name());
                assert_eq!(o.plies[r], o.plies[i], "{} at {s}", rule.name());
            }
        }
    }

    #[test]
    fn a_player_who_can_win_alone_wins_under_every_rule() {
        let (game, t) = level_1();
        for rule in Rule::ALL {
            let o = outcomes(&game, &t, rule).unwrap();
            for s in 0..game.size() {
                let a = answers(&game, &t, s).unwrap();
                if let Some(p) = (0..3).find(|&p| a.solo[p].value == Value::Win) {
                    if matches!(game.node(s), Node::Live { .. }) {
                        assert_eq!(o.outcome[s as usize], p as u8, "{} at {s}", rule.name());
                        assert!(o.plies[s as usize] <= u32::from(a.solo[p].depth.unwrap()));
                    }
                }
            }
        }
    }
}
