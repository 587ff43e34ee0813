//! Helpers for the end-to-end tests: locate and run the real binaries.
