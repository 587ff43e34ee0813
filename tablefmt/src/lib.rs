//! Kingmaker's on-disk formats. No async, no game rules: bytes in, bytes out.
