//! Checks of the size and count options that `kingmaker` and `kingmaker-worker` take (threads,
//! shard size, in-process workers, checkpoint intervals, memory budget, worker timeout), run
//! before anything is written so that a bad value is refused with a clear message instead of
//! failing (or panicking) in the middle of a run. Each check returns the message on error.

/// At most this many compute threads per core: more only adds switching
/// (docs/benchmarks/kernel.md, "Threads beyond the cores").
pub const THREADS_PER_CORE: usize = 4;
/// The largest `--shard-size`: far beyond any index space this code can solve (a shard larger
/// than the game is one shard holding all of it).
pub const MAX_SHARD_SIZE: u64 = 1 << 48;
/// The most in-process workers (`--local-workers`): each has threads and buffers of its own, and
/// they exist to exercise the transport path, not to add speed.
pub const MAX_LOCAL_WORKERS: usize = 64;
/// The longest checkpoint interval by time (`--checkpoint-every-secs`): a year. 0 means never.
pub const MAX_CHECKPOINT_SECS: u64 = 365 * 24 * 3600;
/// The longest `--worker-timeout`, in seconds (exclusive).
pub const MAX_WORKER_TIMEOUT: f64 = 3600.0;

/// The cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `--threads N`: at least 1 and at most [`THREADS_PER_CORE`] × the cores.
pub fn check_threads(threads: usize) -> Result<usize, String> {
    let cores = cores();
    let max = THREADS_PER_CORE * cores;
    if threads == 0 {
        return Err("--threads must be at least 1 (leave it out to use every core)".into());
    }
    if threads > max {
        return Err(format!(
            "--threads {threads} is more than {THREADS_PER_CORE} per core ({max} on the {cores} \
             core(s) here): extra threads only slow the kernel down; leave it out to use every core"
        ));
    }
    Ok(threads)
}

/// `--shard-size N`: 1 ..= [`MAX_SHARD_SIZE`] states (the kernel rounds it up to a multiple of 64).
pub fn check_shard_size(shard_size: u64) -> Result<u64, String> {
    if shard_size == 0 {
        return Err(
            "--shard-size must be at least 1 state (it is rounded up to a multiple of 64)".into(),
        );
    }
    if shard_size > MAX_SHARD_SIZE {
        return Err(format!(
            "--shard-size {shard_size} is more than {MAX_SHARD_SIZE} (2^48) states; a shard larger \
             than the game holds all of it, so a smaller value does the same"
        ));
    }
    Ok(shard_size)
}

/// `--local-workers N`: 1 ..= [`MAX_LOCAL_WORKERS`].
pub fn check_local_workers(workers: usize) -> Result<usize, String> {
    if !(1..=MAX_LOCAL_WORKERS).contains(&workers) {
        return Err(format!(
            "--local-workers must be between 1 and {MAX_LOCAL_WORKERS} (got {workers})"
        ));
    }
    Ok(workers)
}

/// `--checkpoint-every-secs S`: 0 (never by time) ..= [`MAX_CHECKPOINT_SECS`].
pub fn check_checkpoint_secs(secs: u64) -> Result<u64, String> {
    if secs > MAX_CHECKPOINT_SECS {
        return Err(format!(
            "--checkpoint-every-secs {secs} is more than a year ({MAX_CHECKPOINT_SECS} s); use 0 \
             to checkpoint never by time"
        ));
    }
    Ok(secs)
}

/// `--memory-budget SIZE`: more than 0 bytes. A budget above the machine's memory is allowed (the
/// caller warns): cells that "fit" it would then be paged by the system or killed by it.
pub fn check_memory_budget(bytes: u64) -> Result<u64, String> {
    if bytes == 0 {
        return Err(
            "--memory-budget must be more than 0 (e.g. 16G; leave it out for three quarters of \
             the memory)"
                .into(),
        );
    }
    Ok(bytes)
}

/// A warning for a memory budget larger than what this process may use (the machine's physical
/// memory, or its memory cgroup's limit), if it is.
pub fn memory_budget_warning(bytes: u64) -> Option<String> {
    let limit = crate::memory::memory_limit();
    (limit.bytes > 0 && bytes > limit.bytes).then(|| {
        format!(
            "--memory-budget {bytes} bytes is more than the {} bytes of {}: cells kept in memory \
             may be swapped or the process killed",
            limit.bytes, limit.source
        )
    })
}

/// `--worker-timeout S`: more than 0 and less than [`MAX_WORKER_TIMEOUT`] seconds.
pub fn check_worker_timeout(secs: f64) -> Result<f64, String> {
    if !(secs > 0.0 && secs < MAX_WORKER_TIMEOUT) {
        return Err(format!(
            "--worker-timeout must be more than 0 and less than {MAX_WORKER_TIMEOUT} seconds \
             (got {secs})"
        ));
    }
    Ok(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_are_refused_with_the_option_named() {
        for e in [
            check_threads(0).unwrap_err(),
            check_threads(THREADS_PER_CORE * cores() + 1).unwrap_err(),
        ] {
            assert!(e.contains("--threads"), "{e}");
        }
        assert_eq!(check_threads(1), Ok(1));
        assert_eq!(check_threads(cores()), Ok(cores()));
        assert!(check_shard_size(0).unwrap_err().contains("--shard-size"));
        assert!(check_shard_size(u64::MAX).unwrap_err().contains("2^48"));
        assert_eq!(check_shard_size(1), Ok(1));
        assert!(check_local_workers(0).is_err());
        assert!(check_local_workers(100_000).is_err());
        assert_eq!(check_local_workers(3), Ok(3));
        assert!(check_checkpoint_secs(u64::MAX).is_err());
        assert_eq!(check_checkpoint_secs(0), Ok(0));
        assert!(check_memory_budget(0).is_err());
        assert_eq!(check_memory_budget(1 << 20), Ok(1 << 20));
        let e = check_worker_timeout(0.0).unwrap_err();
        assert!(e.contains("more than 0") && e.contains("got 0"), "{e}");
        assert!(check_worker_timeout(f64::NAN).is_err());
        assert!(check_worker_timeout(3600.0).is_err());
        assert_eq!(check_worker_timeout(5.0), Ok(5.0));
    }
}
