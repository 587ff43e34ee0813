//! The wave kernel (being written).
