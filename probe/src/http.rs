//! A release's file read where it lies, over HTTP: each read is a GET with `Range: bytes=A-B`
//! that must be answered `206` with exactly those bytes of a file of the manifest's size
//! (docs/format.md, "A layer in parts, files at URLs"); a server that ignores ranges is refused.
//! The blocks read are checked by their crc32 as a local file's are.

use kingmaker_tablefmt::layer::ReadAt;
use std::io::{Error, ErrorKind};
use std::time::Duration;

/// How long connecting to a file's host may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the host may stay silent while answering a read (a read is a block or a file's
/// index, so a host that takes longer is not answering).
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The HTTP client of one set of tables: its connections are kept and reused by every file.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        // 4xx and 5xx are answers to report with the server's words, not bare codes.
        .http_status_as_error(false)
        .timeout_connect(Some(CONNECT_TIMEOUT))
        .timeout_recv_response(Some(READ_TIMEOUT))
        .timeout_per_read(Some(READ_TIMEOUT))
        .user_agent(format!("kingmaker/{}", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

/// One file at a URL, of a known size, read a range at a time.
pub struct HttpFile {
    agent: ureq::Agent,
    url: String,
    size: u64,
}

impl HttpFile {
    /// The file at `url`, which must be `size` bytes long (the manifest's `size`).
    pub fn new(agent: ureq::Agent, url: &str, size: u64) -> HttpFile {
        HttpFile {
            agent,
            url: url.to_string(),
            size,
        }
    }

    /// `buf.len()` bytes from `offset`: the cause in words when they cannot be had (the caller
    /// names the file and its URL).
    fn get_range(&self, buf: &mut [u8], offset: u64) -> Result<(), String> {
        let last = offset + buf.len() as u64 - 1;
        let mut resp = self
            .agent
            .get(&self.url)
            .header("Range", format!("bytes={offset}-{last}"))
            .call()
            .map_err(describe)?;
        let status = resp.status().as_u16();
        match status {
            206 => {}
            200 => {
                return Err(format!(
                    "the server ignores range requests (it answered 200 with the whole file \
                     to a request for bytes {offset}-{last}); serve the file from a server that \
                     honours Range (`kingmaker serve` does), or fetch the release \
                     (`kingmaker fetch`)"
                ))
            }
            _ => {
                let why = resp
                    .body_mut()
                    .with_config()
                    .limit(512)
                    .read_to_string()
                    .unwrap_or_default();
                let why = why.trim();
                let hint = match status {
                    404 => " (is the manifest's url right, and the part's host serving it?)",
                    416 => " (the file there is shorter than the manifest says)",
                    _ => "",
                };
                return Err(format!(
                    "the server answered HTTP {status}{}{hint}",
                    if why.is_empty() {
                        String::new()
                    } else {
                        format!(" ({why})")
                    }
                ));
            }
        }
        let range = resp
            .headers()
            .get("content-range")
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        match parse_content_range(&range) {
            Some((a, b, n)) if (a, b) == (offset, last) && n == self.size => {}
            Some((_, _, n)) if n != self.size => {
                return Err(format!(
                    "the file there is {n} bytes, the manifest says {}: it is another file, or \
                     a damaged or truncated copy; refusing it",
                    self.size
                ))
            }
            _ => {
                return Err(format!(
                    "bytes {offset}-{last} were asked, and the server answered 206 with \
                     Content-Range {range:?}: refusing bytes that are not those asked for"
                ))
            }
        }
        let bytes = resp
            .body_mut()
            .with_config()
            .limit(buf.len() as u64)
            .read_to_vec()
            .map_err(|e| format!("the answer broke off: {}", describe(e)))?;
        if bytes.len() != buf.len() {
            return Err(format!(
                "bytes {offset}-{last} were asked, {} were sent",
                bytes.len()
            ));
        }
        buf.copy_from_slice(&bytes);
        Ok(())
    }
}

impl ReadAt for HttpFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        if offset
            .checked_add(buf.len() as u64)
            .is_none_or(|end| end > self.size)
        {
            return Err(Error::new(
                ErrorKind::UnexpectedEof,
                format!(
                    "{} bytes at {offset} asked of a file of {} bytes",
                    buf.len(),
                    self.size
                ),
            ));
        }
        self.get_range(buf, offset).map_err(Error::other)
    }
}

/// A small file at `url` (a manifest), whole: at most `cap` bytes.
pub fn get_small(agent: &ureq::Agent, url: &str, cap: u64) -> Result<Vec<u8>, String> {
    let mut resp = agent.get(url).call().map_err(describe)?;
    let status = resp.status().as_u16();
    if status != 200 {
        let hint = if status == 404 {
            " (is it the URL of a Kingmaker release directory, ending in /?)"
        } else {
            ""
        };
        return Err(format!("the server answered HTTP {status}{hint}"));
    }
    resp.body_mut()
        .with_config()
        .limit(cap)
        .read_to_vec()
        .map_err(|e| match e {
            ureq::Error::BodyExceedsLimit(_) => format!("larger than {cap} bytes"),
            e => format!("the answer broke off: {}", describe(e)),
        })
}

/// `url` as messages show it: credentials in it (`user:password@`) replaced by `***`.
pub fn shown(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    match authority.rfind('@') {
        Some(at) => format!("{scheme}://***{}", &rest[at..]),
        None => url.to_string(),
    }
}

/// `bytes A-B/N` (RFC 9110) to `(A, B, N)`.
fn parse_content_range(text: &str) -> Option<(u64, u64, u64)> {
    let (range, total) = text.trim().strip_prefix("bytes ")?.split_once('/')?;
    let (a, b) = range.split_once('-')?;
    let (a, b, n) = (a.parse().ok()?, b.parse().ok()?, total.parse().ok()?);
    (a <= b && b < n).then_some((a, b, n))
}

/// What went wrong with a request, in words, with what to check.
fn describe(e: ureq::Error) -> String {
    match e {
        ureq::Error::Io(e) if e.kind() == ErrorKind::ConnectionRefused => {
            "connection refused (is that host up?)".into()
        }
        ureq::Error::Io(e) => format!("{e} (is that host up and reachable?)"),
        ureq::Error::HostNotFound => "host not found (is the url's host name right?)".into(),
        ureq::Error::ConnectionFailed => "no connection (is that host up?)".into(),
        ureq::Error::Timeout(ureq::Timeout::Connect) => format!(
            "no connection within {} s (is that host up and reachable?)",
            CONNECT_TIMEOUT.as_secs()
        ),
        ureq::Error::Timeout(what) => format!(
            "no answer within {} s ({what}; is that host up and serving?)",
            READ_TIMEOUT.as_secs()
        ),
        e => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_not_shown() {
        assert_eq!(shown("http://h:1/a/b"), "http://h:1/a/b");
        assert_eq!(shown("https://u:pw@h/a@b"), "https://***@h/a@b");
        assert_eq!(shown("http://a@b@h:2/"), "http://***@h:2/");
    }

    #[test]
    fn content_ranges_parse_strictly() {
        assert_eq!(parse_content_range("bytes 0-95/1000"), Some((0, 95, 1000)));
        assert_eq!(parse_content_range(" bytes 5-5/6 "), Some((5, 5, 6)));
        for bad in [
            "",
            "bytes */1000",
            "bytes 0-95/*",
            "bytes 96-95/1000",
            "bytes 0-1000/1000",
            "items 0-1/2",
            "bytes 0-x/2",
        ] {
            assert_eq!(parse_content_range(bad), None, "{bad:?}");
        }
    }
}
