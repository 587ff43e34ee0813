//! The twelve questions of 3-player Chinese Checkers, read from the three representative layers
//! by rotation, and the control class of a state (docs/rules.md §1).

use anyhow::Result;
use kingmaker_games::cc3p::Cc3p;
use kingmaker_kernel::Value;
use kingmaker_kernel::{Game, Node};
use kingmaker_tablefmt::layer::LayerFile;
use kingmaker_tablefmt::{FormatError, Lookup};
use serde::Serialize;

pub const PLAYERS: [char; 3] = ['A', 'B', 'C'];

/// The three representative layers of a cc3p build: a run's mapped tables (the default) or any
/// other [`Lookup`], such as the layer files of a packed release.
pub struct Cc3pTables<T: Lookup = LayerFile> {
    pub solo: T,
    pub enable_ab: T,
    pub enable_ac: T,
}

/// A value with the wave that decided it. `value` is `W`, `L`, `D`, or `-` for an illegal state
/// (JSON: `"illegal"`, depth 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    pub value: char,
    pub depth: u16,
}

impl Answer {
    pub fn is_illegal(&self) -> bool {
        self.value == '-'
    }

    /// `W3`, `L0`, `D0`, or `illegal`.
    pub fn text(&self) -> String {
        if self.is_illegal() {
            "illegal".into()
        } else {
            format!("{}{}", self.value, self.depth)
        }
    }
}

impl Serialize for Answer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = s.serialize_struct("Answer", 2)?;
        if self.is_illegal() {
            out.serialize_field("value", "illegal")?;
        } else {
            out.serialize_field("value", &self.value.to_string())?;
        }
        out.serialize_field("depth", &self.depth)?;
        out.end()
    }
}

fn answer((value, depth): (u8, u16)) -> Answer {
    Answer {
        value: Value::letter_of(value),
        depth,
    }
}

/// Control classes (docs/rules.md §1).
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Terminal,
    SoloWin,
    SpoilerDraw,
    Kingmaker,
}

impl Class {
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
#[derive(Clone, Debug)]
pub struct Answers {
    /// `solo[P]`: can P force a win (W), be forced out (L), or hold a draw (D)?
    pub solo: [Answer; 3],
    /// `enable[P][Q]` (P ≠ Q): can P hand the win to Q? (`enable[P][P]` is unused: null in JSON.)
    pub enable: [[Answer; 3]; 3],
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
        out.serialize_field("solo", &self.solo)?;
        out.serialize_field("enable", &enable)?;
        out.serialize_field("class", &self.class)?;
        out.end()
    }
}

impl Answers {
    /// Is P the kingmaker for Q: P can hand Q the win, and Q cannot force it alone?
    pub fn kingmaker_for(&self, p: usize, q: usize) -> bool {
        p != q && self.enable[p][q].value == 'W' && self.solo[q].value != 'W'
    }
}

/// Read the answers of state `s` from any tables. With R the rotation A→B→C→A, the player P's
/// questions at `s` are player A's at R^(3−P)(s): R maps A's pieces onto B's, so B's pieces at `s`
/// are A's at R²(s).
pub fn try_answers<T: Lookup>(
    game: &Cc3p,
    t: &Cc3pTables<T>,
    s: u64,
) -> Result<Answers, FormatError> {
    let r1 = game.rotate(s);
    let r2 = game.rotate(r1);
    let as_a = [s, r2, r1]; // state in which player P plays A's role
    let mut solo = [Answer {
        value: '-',
        depth: 0,
    }; 3];
    for (p, &i) in as_a.iter().enumerate() {
        solo[p] = answer(t.solo.lookup(i)?);
    }
    let dash = Answer {
        value: '-',
        depth: 0,
    };
    let mut enable = [[dash; 3]; 3];
    for p in 0..3 {
        // In as_a[p], P is A; the player after P is B and the one before P is C.
        enable[p][(p + 1) % 3] = answer(t.enable_ab.lookup(as_a[p])?);
        enable[p][(p + 2) % 3] = answer(t.enable_ac.lookup(as_a[p])?);
    }
    let class = match game.node(s) {
        Node::Illegal | Node::Terminal { .. } => Class::Terminal,
        Node::Live { .. } if solo.iter().any(|a| a.value == 'W') => Class::SoloWin,
        Node::Live { .. } if solo.iter().any(|a| a.value == 'D') => Class::SpoilerDraw,
        Node::Live { .. } => Class::Kingmaker,
    };
    Ok(Answers {
        solo,
        enable,
        class,
    })
}
