//! Forcing layers: which players form the coalition and which outcomes count for it. A layer is
//! recorded in `run.json` and release manifests, so its definition lives with those formats.

pub use kingmaker_tablefmt::run::Layer;
