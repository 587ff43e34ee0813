//! TOPPEN as the coordinator shows it: the two-player view, and `kingmaker census`, the results
//! over the starting colourings of every terrain.

pub mod census;
