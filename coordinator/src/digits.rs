//! Numbers as people read them: counts with digits grouped by thousands, sizes in binary units.

/// 4947100130 -> "4,947,100,130" (the one grouping of the house, kept beside the formats' own
/// messages that print it).
pub use kingmaker_tablefmt::release::manifest::thousands;

/// "4947100130" -> "4,947,100,130" (anything but a u64 in decimal unchanged).
pub fn group_digits(s: &str) -> String {
    match s.parse::<u64>() {
        Ok(n) if s.bytes().all(|b| b.is_ascii_digit()) => thousands(n),
        _ => s.to_string(),
    }
}

/// A size in bytes with one decimal in the largest binary unit it reaches, up to TiB:
/// "512 B", "1.5 KiB", "3.0 GiB" (the formats' own messages print sizes so too).
pub use kingmaker_tablefmt::fsio::human_bytes;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped() {
        assert_eq!(thousands(4_947_100_130), "4,947,100,130");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(u64::MAX), "18,446,744,073,709,551,615");
        assert_eq!(group_digits("12x"), "12x");
    }

    #[test]
    fn sizes() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
        assert_eq!(human_bytes(17 << 30), "17.0 GiB");
        assert_eq!(human_bytes(5 << 40), "5.0 TiB");
        assert_eq!(human_bytes(1 << 50), "1024.0 TiB");
    }
}
