//! The layers a set of tables describes, and those read at one position.

use super::answer::Answer;
use kingmaker_kernel::Layer;
use kingmaker_tablefmt::layer::LayerTable;
use std::sync::Arc;

/// One layer the tables describe: its question, and whether its file is here to be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerInfo {
    /// The layer's name (`solo`, `enable_ab`, `second`, `score_ge_1`, ...).
    pub name: String,
    /// Bit `p` set: player `p` plays for the coalition.
    pub coalition: u8,
    /// Bit `o` set: outcome `o` counts as a win for the coalition.
    pub objective: u64,
    /// Whether a file of the layer is present (a partial release may lack some).
    pub present: bool,
    /// Whether the file present keeps depths (false for a release fetched values-only).
    pub depths: bool,
}

impl LayerInfo {
    /// The layer's question, as the kernel solves it and `run.json` records it.
    pub fn layer(&self) -> Layer {
        Layer::new(&self.name, self.coalition, self.objective)
    }
}

/// Every layer the tables describe, and the present ones read at one position: what a verdict
/// is made of.
pub struct LayersAt<'a> {
    /// Every layer the tables describe, present or not, in the order they were solved.
    pub described: &'a [LayerInfo],
    /// The present layers: name, file and the answer at the position.
    pub read: Vec<(String, Arc<LayerTable>, Answer)>,
}

impl LayersAt<'_> {
    /// The answer of the layer `name` at the position, if it was read.
    pub fn answer(&self, name: &str) -> Option<Answer> {
        self.read.iter().find(|l| l.0 == name).map(|l| l.2)
    }

    /// The file of the layer `name`, if it is present.
    pub fn file(&self, name: &str) -> Option<&Arc<LayerTable>> {
        self.read.iter().find(|l| l.0 == name).map(|l| &l.1)
    }

    /// Whether every present layer keeps depths.
    pub fn depths(&self) -> bool {
        self.described.iter().all(|l| !l.present || l.depths)
    }

    /// Whether the tables describe the layer `name` (present or not).
    pub fn describes(&self, name: &str) -> bool {
        self.described.iter().any(|l| l.name == name)
    }
}
