//! 3-player Chinese Checkers: the twelve questions of a state, read from the three
//! representative layers by rotation, and its control class (docs/rules.md §1).

use super::Cc3p;
use crate::reading::{Answer, LayersAt, Value, Verdict};
use kingmaker_kernel::{Game, Node};
use kingmaker_tablefmt::{FormatError, Lookup};
use serde::Serialize;

/// The three representative layers, in the order a build solves them.
pub const LAYERS: [&str; 3] = ["solo", "enable_ab", "enable_ac"];

/// The players' names, by seat.
pub const PLAYERS: [char; 3] = ['A', 'B', 'C'];

/// The three representative layers of a cc3p build: any [`Lookup`]s, such as a run's or a
/// release's layer files.
pub struct Cc3pTables<T: Lookup> {
    /// solo(A): can A force a win alone?
    pub solo: T,
    /// enable(A→B): can A and B together make B win?
    pub enable_ab: T,
    /// enable(A→C): can A and C together make C win?
    pub enable_ac: T,
    /// Whether the tables keep depths.
    pub depths: bool,
}

/// Control classes (docs/rules.md §1).
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// The game is over (or the state is illegal).
    Terminal,
    /// Some player can force a win alone.
    SoloWin,
    /// No one can force a win, and some player can hold a draw alone.
    SpoilerDraw,
    /// No one can force a win or hold a draw alone: a player who has lost chooses the winner.
    Kingmaker,
}

impl Class {
    /// `terminal`, `solo_win`, `spoiler_draw` or `kingmaker`.
    pub fn name(self) -> &'static str {
        match self {
            Class::Terminal => "terminal",
            Class::SoloWin => "solo_win",
            Class::SpoilerDraw => "spoiler_draw",
            Class::Kingmaker => "kingmaker",
        }
    }
}

/// All twelve answers for one state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answers {
    /// `solo[P]`: can P force a win (W), be forced out (L), or hold a draw (D)?
    pub solo: [Answer; 3],
    /// `enable[P][Q]` (P ≠ Q): can P hand the win to Q? (`enable[P][P]` is unused: null in JSON.)
    pub enable: [[Answer; 3]; 3],
    /// The state's control class.
    pub class: Class,
}

impl Serialize for Answers {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let enable: Vec<Vec<Option<Answer>>> = (0..3)
            .map(|p| {
                (0..3)
                    .map(|q| (p != q).then_some(self.enable[p][q]))
                    .collect()
            })
            .collect();
        let mut out = s.serialize_struct("Answers", 3)?;
        out.serialize_field("solo", &self.solo[..])?;
        out.serialize_field("enable", &enable)?;
        out.serialize_field("class", &self.class)?;
        out.end()
    }
}

impl Answers {
    /// Is P the kingmaker for Q: P can hand Q the win, and Q cannot force it alone?
    pub fn kingmaker_for(&self, p: usize, q: usize) -> bool {
        p != q && self.enable[p][q].value == Value::Win && self.solo[q].value != Value::Win
    }
}

/// The answers of state `s`. With R the rotation A→B→C→A, the player P's questions at `s` are
/// player A's at R^(3−P)(s): R maps A's pieces onto B's, so B's pieces at `s` are A's at R²(s).
pub fn answers<T: Lookup>(game: &Cc3p, t: &Cc3pTables<T>, s: u64) -> Result<Answers, FormatError> {
    let read = |table: &T, i: u64| Answer::read(table, i, t.depths);
    let r1 = game.rotate(s);
    let r2 = game.rotate(r1);
    let as_a = [s, r2, r1]; // the state in which player P plays A's role
    let mut solo = [Answer::ILLEGAL; 3];
    let mut enable = [[Answer::ILLEGAL; 3]; 3];
    for (p, &i) in as_a.iter().enumerate() {
        solo[p] = read(&t.solo, i)?;
        // In as_a[p], P is A; the player after P is B and the one before P is C.
        enable[p][(p + 1) % 3] = read(&t.enable_ab, i)?;
        enable[p][(p + 2) % 3] = read(&t.enable_ac, i)?;
    }
    Ok(Answers {
        solo,
        enable,
        class: class_from(game.node(s), &solo),
    })
}

/// The class of `s` alone: its three `solo` answers, where [`answers`] reads all twelve.
pub fn class<T: Lookup>(game: &Cc3p, t: &Cc3pTables<T>, s: u64) -> Result<Class, FormatError> {
    let node = game.node(s);
    if !matches!(node, Node::Live { .. }) {
        return Ok(Class::Terminal);
    }
    let r1 = game.rotate(s);
    let r2 = game.rotate(r1);
    let mut solo = [Answer::ILLEGAL; 3];
    for (a, i) in solo.iter_mut().zip([s, r2, r1]) {
        *a = Answer::read(&t.solo, i, t.depths)?;
    }
    Ok(class_from(node, &solo))
}

/// The class of a state of `node` whose players' `solo` answers are `solo`.
fn class_from(node: Node, solo: &[Answer; 3]) -> Class {
    match node {
        Node::Illegal | Node::Terminal { .. } => Class::Terminal,
        Node::Live { .. } if solo.iter().any(|a| a.value == Value::Win) => Class::SoloWin,
        Node::Live { .. } if solo.iter().any(|a| a.value == Value::Draw) => Class::SpoilerDraw,
        Node::Live { .. } => Class::Kingmaker,
    }
}

/// One of the twelve questions at a state: P alone, or P handing the win to Q.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Question {
    /// solo(P): can P force a win alone?
    Solo(usize),
    /// enable(P→Q): can P and Q together make Q win?
    Enable(usize, usize),
}

/// The answer to one question at `s`, one lookup (where [`answers`] reads all twelve): P's
/// questions are A's at the state rotated so that P plays A's role.
pub fn answer<T: Lookup>(
    game: &Cc3p,
    t: &Cc3pTables<T>,
    s: u64,
    question: Question,
) -> Result<Answer, FormatError> {
    let p = match question {
        Question::Solo(p) | Question::Enable(p, _) => p,
    };
    let mut i = s;
    for _ in 0..(3 - p) % 3 {
        i = game.rotate(i);
    }
    let table = match question {
        Question::Solo(_) => &t.solo,
        Question::Enable(p, q) if q == (p + 1) % 3 => &t.enable_ab,
        Question::Enable(p, q) => {
            assert!(q == (p + 2) % 3, "enable(P→Q) asks of two players");
            &t.enable_ac
        }
    };
    Answer::read(table, i, t.depths)
}

/// The verdict at `index`: the twelve answers and the class, or the layers missing.
pub fn verdict(game: &Cc3p, index: u64, at: &LayersAt) -> Result<Verdict, FormatError> {
    if let Some(v) = Verdict::incomplete(at, &LAYERS) {
        return Ok(v);
    }
    let file = |name| at.file(name).expect("checked above").clone();
    let tables = Cc3pTables {
        solo: file(LAYERS[0]),
        enable_ab: file(LAYERS[1]),
        enable_ac: file(LAYERS[2]),
        depths: at.depths(),
    };
    Ok(Verdict::Cc3p {
        answers: answers(game, &tables, index)?,
    })
}
