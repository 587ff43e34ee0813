//! The versioned HTTP API of `kingmaker serve` (`/api/v1/...`, docs/api.md): the probing
//! library's answers as JSON, moves best first with their categories, errors as
//! `{"error": MESSAGE}`. The explorer page's own routes (`/api/info`, `/api/position`) may change
//! with the page; these do not within a version.

use crate::serve::explore::ApiError;
use kingmaker_probe::{Game, Notation, ProbeError, Tables};
use serde_json::{json, Value};

/// The version in the paths and in every answer.
pub const API_VERSION: u32 = 1;

/// Longest position text accepted.
const MAX_POSITION_LEN: usize = 1000;

/// `GET /api/v1/info`: the game, its players and layers, and its start.
pub fn info(tables: &Tables) -> Value {
    let game = tables.game();
    let layers: Vec<Value> = tables
        .layers()
        .iter()
        .map(|l| {
            json!({
                "name": l.name, "coalition": l.coalition, "objective": l.objective,
                "present": l.present, "depths": l.depths,
            })
        })
        .collect();
    json!({
        "api_version": API_VERSION,
        "game": tables.spec(),
        "name": game.name(),
        "players": (0..game.players()).map(|p| game.player_name(p)).collect::<Vec<_>>(),
        "states": game.size(),
        "source": kingmaker_coordinator::tables::kind_name(tables),
        "layers": layers,
        "start": game.start_index().map(|i| game.format_position(i)),
    })
}

/// `GET /api/v1/probe?position=TEXT`: the position's probe and its moves, best first for the side
/// to move, each with its category and depth.
pub fn probe(tables: &Tables, text: &str) -> Result<Value, ApiError> {
    if text.len() > MAX_POSITION_LEN {
        return Err(ApiError::BadRequest(format!(
            "position text longer than {MAX_POSITION_LEN} characters"
        )));
    }
    let here = tables.probe(text).map_err(api_error)?;
    let moves = tables.moves_of(here.index).map_err(api_error)?;
    let mut out = serde_json::to_value(&here).expect("a probe is JSON");
    out["api_version"] = json!(API_VERSION);
    out["moves"] = serde_json::to_value(&moves).expect("moves are JSON");
    Ok(out)
}

fn api_error(e: ProbeError) -> ApiError {
    match e {
        ProbeError::BadPosition { .. } => ApiError::BadRequest(e.to_string()),
        // A layer the verdict needs is reported in the verdict; one asked for by name is not
        // missing here, so anything else is the tables' fault.
        _ => ApiError::Internal(format!(
            "reading the tables: {e}; run `kingmaker verify` on them"
        )),
    }
}

/// The message of the JSON body given to hyper's own answer to a request it could not parse
/// (`status`), as every other error of the API has one.
fn parse_error_message(status: u16) -> Option<&'static str> {
    Some(match status {
        400 => "the request is not HTTP/1.1 that this server can read",
        414 => {
            "the URL is too long (at most 65,534 bytes; a position is at most 1,000 \
             characters): use /api/v1/probe?position=POSITION"
        }
        431 => "the request's headers are too large",
        _ => return None,
    })
}

/// `answer` with a JSON error body if it is hyper's own answer to a request it could not parse:
/// a whole head, status 400, 414 or 431, `content-length: 0` and no content type (the routes
/// answer every error with a JSON body, so never so).
fn with_json_body(answer: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(answer).ok()?;
    let head = text.strip_suffix("\r\n\r\n")?;
    if head.contains("\r\n\r\n") {
        return None;
    }
    let mut lines = head.split("\r\n");
    let status_line = lines.next()?;
    let status: u16 = status_line
        .strip_prefix("HTTP/1.1 ")?
        .get(..3)?
        .parse()
        .ok()?;
    let message = parse_error_message(status)?;
    let mut headers = Vec::new();
    let mut empty = false;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        match name.trim().to_ascii_lowercase().as_str() {
            "content-type" => return None,
            "content-length" if value.trim() == "0" => empty = true,
            "content-length" => return None,
            _ => headers.push(line),
        }
    }
    if !empty {
        return None;
    }
    let body = json!({ "error": message }).to_string();
    let mut out = format!("{status_line}\r\n");
    for h in headers {
        out += &format!("{h}\r\n");
    }
    out += &format!(
        "content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    Some(out.into_bytes())
}

/// A connection of `kingmaker serve`: hyper answers a request it cannot parse (a URL longer
/// than 65,534 bytes, say) itself, with an empty body; this gives that answer the JSON error
/// body of docs/api.md. Everything else passes through unchanged.
pub struct JsonParseErrors<T> {
    inner: T,
    /// The answer being written in place of hyper's: its bytes, how many are out, and the
    /// length of hyper's answer (reported written once all of it is).
    replacing: Option<(Vec<u8>, usize, usize)>,
}

impl<T> JsonParseErrors<T> {
    pub fn new(inner: T) -> JsonParseErrors<T> {
        JsonParseErrors {
            inner,
            replacing: None,
        }
    }
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for JsonParseErrors<T> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for JsonParseErrors<T> {
    // Not vectored: hyper then writes each answer's head in one buffer, which is what
    // `with_json_body` looks at.
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        use std::task::Poll;
        let this = &mut *self;
        if this.replacing.is_none() {
            match with_json_body(buf) {
                Some(answer) => this.replacing = Some((answer, 0, buf.len())),
                None => return std::pin::Pin::new(&mut this.inner).poll_write(cx, buf),
            }
        }
        let (answer, out, replaces) = this.replacing.as_mut().expect("set above");
        while *out < answer.len() {
            match std::pin::Pin::new(&mut this.inner).poll_write(cx, &answer[*out..]) {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()))
                }
                Poll::Ready(Ok(n)) => *out += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        let written = *replaces;
        this.replacing = None;
        Poll::Ready(Ok(written))
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::with_json_body;

    #[test]
    fn hyper_parse_error_answers_get_a_json_body_and_nothing_else_changes() {
        let hyper = b"HTTP/1.1 414 URI Too Long\r\nconnection: close\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        let out = String::from_utf8(with_json_body(hyper).unwrap()).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 414 URI Too Long\r\nconnection: close\r\n"));
        assert!(head.contains("content-type: application/json"));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert!(v["error"].as_str().unwrap().contains("too long"));
        // The routes' own answers pass: a JSON error, a page, a 405 of the router.
        for other in [
            &b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 12\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\n\r\n{}",
            b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\n",
        ] {
            assert_eq!(with_json_body(other), None, "{:?}", String::from_utf8_lossy(other));
        }
    }
}
