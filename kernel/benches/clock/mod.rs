//! The CPU clocks the bench binaries time with: rates per core stay honest on a machine shared
//! with other work.

/// Seconds of CPU time on `clock` (`libc::CLOCK_THREAD_CPUTIME_ID` for the calling thread,
/// `libc::CLOCK_PROCESS_CPUTIME_ID` for the whole process).
pub fn cpu_secs(clock: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a plain system call writing into a local struct.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
