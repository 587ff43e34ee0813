//! The processor features a build was compiled for (`.cargo/config.toml`), checked when a process
//! starts: an operator whose host lacks one reads which, instead of "Illegal instruction".

/// The x86-64 features this binary's code may use that the processor running it lacks.
pub fn missing_features() -> Vec<&'static str> {
    #[allow(unused_mut)]
    let mut missing = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! check {
            ($($feature:tt),*) => {$(
                if cfg!(target_feature = $feature) && !std::arch::is_x86_feature_detected!($feature) {
                    missing.push($feature);
                }
            )*};
        }
        // x86-64-v2, then what x86-64-v3 adds.
        check!("sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "cmpxchg16b");
        check!("avx", "avx2", "bmi1", "bmi2", "fma", "lzcnt", "movbe", "f16c");
    }
    missing
}

/// End the process with a message if the processor lacks a feature the build uses. Called first
/// thing in `main`, before any of the build's own code that may use them has run.
pub fn require_compiled_features(program: &str) {
    let missing = missing_features();
    if !missing.is_empty() {
        eprintln!(
            "error: this build of {program} uses processor features this machine lacks ({}); \
             build it for this machine instead: RUSTFLAGS=\"-C target-cpu=native\" cargo build \
             --release (README, \"Building for other processors\")",
            missing.join(", ")
        );
        std::process::exit(2);
    }
}

#[cfg(test)]
mod tests {
    /// The features `.cargo/config.toml` compiles for are present where the tests run (CI's
    /// machine is the kind operators rent).
    #[test]
    fn the_build_runs_on_this_processor() {
        assert_eq!(super::missing_features(), Vec::<&str>::new());
    }
}
