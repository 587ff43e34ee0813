//! 3-player Chinese Checkers (placeholder, being written).
