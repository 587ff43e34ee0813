//! Level 1 solved in memory, for the unit tests of the classes and the preference rules.

use crate::cc3p::answers::Cc3pTables;
use crate::cc3p::{Cc3p, Cc3pParams};
use crate::GameSpec;
use kingmaker_kernel::solve_in_memory;
use kingmaker_tablefmt::{FormatError, Lookup};
use std::sync::Arc;

/// One layer's values and depths in memory.
pub struct InMemory(pub Vec<u8>, pub Vec<u16>);

impl Lookup for InMemory {
    fn states(&self) -> u64 {
        self.0.len() as u64
    }
    fn lookup(&self, i: u64) -> Result<(u8, u16), FormatError> {
        Ok((self.0[i as usize], self.1[i as usize]))
    }
}

/// The game of level 1 and its three layers.
pub fn level_1() -> (Arc<Cc3p>, Cc3pTables<InMemory>) {
    let game = Arc::new(Cc3p::new(1).unwrap());
    let solved: Vec<InMemory> = GameSpec::Cc3p(Cc3pParams { level: 1 })
        .layers()
        .iter()
        .map(|l| {
            let s = solve_in_memory(&game, l, 2);
            InMemory(s.values, s.depth)
        })
        .collect();
    let [solo, enable_ab, enable_ac]: [InMemory; 3] = solved.try_into().ok().unwrap();
    let tables = Cc3pTables {
        solo,
        enable_ab,
        enable_ac,
        depths: true,
    };
    (game, tables)
}
