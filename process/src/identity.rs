//! Who a process is, in words another process can compare and an operator can follow: the host's
//! name, and a random id a process makes once (two addresses of one worker answer with one id).

/// The machine's host name ("unknown" where none can be read).
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into the buffer we own.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).trim().to_string();
    if ok && !name.is_empty() {
        name
    } else {
        "unknown".to_string()
    }
}

/// 128 random bits from the operating system, as 32 hex digits (with the pid and the time in
/// their place should the system have no randomness to give).
pub fn random_id() -> String {
    let mut bytes = [0u8; 16];
    // SAFETY: getrandom writes at most bytes.len() bytes into the buffer we own.
    let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if n != bytes.len() as isize {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos() as u64;
        bytes[..8].copy_from_slice(&nanos.to_le_bytes());
        bytes[8..12].copy_from_slice(&std::process::id().to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_differ_and_the_host_has_a_name() {
        let (a, b) = (random_id(), random_id());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert!(!host_name().is_empty());
    }
}
