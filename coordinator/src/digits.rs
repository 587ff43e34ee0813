//! Numbers as people read them: digits grouped by thousands.

pub use kingmaker_tablefmt::release::manifest::thousands;

/// "4947100130" -> "4,947,100,130" (anything but a u64 in decimal unchanged).
pub fn group_digits(s: &str) -> String {
    match s.parse::<u64>() {
        Ok(n) if s.bytes().all(|b| b.is_ascii_digit()) => thousands(n),
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn grouped() {
        assert_eq!(super::thousands(4_947_100_130), "4,947,100,130");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::group_digits("12x"), "12x");
    }
}
