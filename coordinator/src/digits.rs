//! Numbers as people read them: digits grouped by thousands.

/// "4947100130" -> "4,947,100,130" (non-numbers unchanged).
pub fn group_digits(s: &str) -> String {
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return s.to_string();
    }
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// 4947100130 -> "4,947,100,130".
pub fn thousands(n: u64) -> String {
    group_digits(&n.to_string())
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
