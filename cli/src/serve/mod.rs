//! `kingmaker serve DIR --listen ADDR`: a read-only HTTP server over a release (or a finished run).
//! 1. Its routes are listed in docs/api.md ("Routes"); nothing else is served, so no path reaches
//!    the file system.
//! 2. [`serve_connections`] accepts connections rather than `axum::serve`, which has neither
//!    `--header-timeout` nor `--max-connections` (docs/api.md, "Connections").

pub mod api;
pub mod explore;
pub mod files;

use anyhow::{Context, Result};
use axum::extract::{Query, State};
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use clap::Args;
use explore::{ApiError, Explorer};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use serde::Deserialize;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// A release directory (or a finished run directory), or a release's URL
    /// (`http://HOST:PORT/PATH/`, read there by range requests).
    pub dir: PathBuf,
    /// Address to listen on; port 0 picks a free port (the address is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Seconds a client has to send a request's headers (and may stay idle between requests)
    /// before its connection is closed.
    #[arg(long, default_value_t = 10.0)]
    pub header_timeout: f64,
    /// Connections open at once (default: 256, or fewer if the file limit is low); more wait.
    #[arg(long)]
    pub max_connections: Option<usize>,
}

/// The default connection limit: 256, or what the soft file limit leaves after a margin for the
/// tables and the runtime.
fn default_max_connections() -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct we pass.
    let files = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        limit.rlim_cur
    } else {
        1024
    };
    (files.saturating_sub(32) as usize).clamp(4, 256)
}

const INDEX_HTML: &str = include_str!("web/index.html");
const APP_JS: &str = include_str!("web/app.js");
const APP_CSS: &str = include_str!("web/app.css");

pub fn run(args: ServeArgs) -> Result<()> {
    if !(args.header_timeout > 0.0 && args.header_timeout <= 3600.0) {
        anyhow::bail!(
            "--header-timeout must be more than 0 and at most 3600 seconds (got {})",
            args.header_timeout
        );
    }
    let max_connections = match args.max_connections {
        Some(0) => anyhow::bail!("--max-connections must be at least 1"),
        Some(n) => n,
        None => default_max_connections(),
    };
    let limits = Limits {
        header_timeout: Duration::from_secs_f64(args.header_timeout),
        max_connections,
    };
    if let Some(parts) = files::ReleaseFiles::of_packed_parts(&args.dir)? {
        // A host of a release in parts: its files alone, no tables to explore.
        let dir = args.dir.display().to_string();
        return listen_and_serve(&args.listen, limits, |addr| {
            println!(
                "serving {} files of packed parts from {dir} at http://{addr}/",
                parts.len()
            );
            // On stderr: the first line of stdout, ending in the URL, is what scripts read.
            eprintln!("each at http://{addr}/release/NAME, for `kingmaker pack --parts-at`");
            files::routes(Arc::new(parts))
        });
    }
    let explorer = Arc::new(Explorer::open(&args.dir)?);
    let files = files::ReleaseFiles::new(&args.dir, explorer.tables().manifest());
    listen_and_serve(&args.listen, limits, |addr| {
        println!(
            "serving {} from {} at http://{addr}/",
            explorer.game_name(),
            args.dir.display()
        );
        if files.serves_any() {
            eprintln!("its files, for `kingmaker fetch http://{addr}/release/ DIR`: http://{addr}/release/");
        }
        router(explorer).merge(files::routes(Arc::new(files)))
    })
}

/// Listen on `listen`, announce the address and build the routes with `routes(address)`, and
/// serve them until Ctrl-C.
fn listen_and_serve(
    listen: &str,
    limits: Limits,
    routes: impl FnOnce(std::net::SocketAddr) -> Router,
) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the HTTP runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("listening on {listen}"))?;
        let routes = routes(listener.local_addr()?);
        std::io::stdout().flush().ok();
        serve_connections(listener, routes, limits).await
    })
}

/// How long a client may take and how many may be connected.
#[derive(Copy, Clone, Debug)]
pub struct Limits {
    pub header_timeout: Duration,
    pub max_connections: usize,
}

/// Accept connections (at most `max_connections` at once) and serve HTTP/1.1 on each with
/// `router`, closing those that take longer than `header_timeout` to send a request's headers,
/// until Ctrl-C. A loop of our own rather than `axum::serve`, which has neither limit: half-sent
/// requests and idle connections cannot hold the server for long or run it out of file
/// descriptors.
pub async fn serve_connections(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: Limits,
) -> Result<()> {
    let permits = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let shutdown = tokio::signal::ctrl_c();
    tokio::pin!(shutdown);
    loop {
        // A permit first: beyond the limit, connections wait in the listen queue and hold no
        // file descriptor of ours.
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => p.context("connection limit")?,
            _ = &mut shutdown => return Ok(()),
        };
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors, say: wait rather than spin.
                    tracing::warn!("accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = &mut shutdown => return Ok(()),
        };
        let _ = stream.set_nodelay(true);
        let conn = http.serve_connection(
            TokioIo::new(crate::serve::api::JsonParseErrors::new(stream)),
            TowerToHyperService::new(router.clone()),
        );
        tokio::spawn(async move {
            // A timed-out or broken connection is the client's business.
            let _ = conn.await;
            drop(permit);
        });
    }
}

pub fn router(explorer: Arc<Explorer>) -> Router {
    Router::new()
        .route(
            "/",
            get(|| async { page(INDEX_HTML, "text/html; charset=utf-8") }),
        )
        .route(
            "/app.js",
            get(|| async { page(APP_JS, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/app.css",
            get(|| async { page(APP_CSS, "text/css; charset=utf-8") }),
        )
        .route("/api/info", get(info))
        .route("/api/position", get(position))
        .route("/api/v1/info", get(info_v1))
        .route("/api/v1/probe", get(probe_v1))
        // After the routes: it is given to those there are. Axum adds their `Allow` header.
        .method_not_allowed_fallback(|method: axum::http::Method| async move {
            error(
                StatusCode::METHOD_NOT_ALLOWED,
                format!("{method} is not served: the server is read-only; use GET (docs/api.md)"),
            )
        })
        .fallback(|| async {
            error(
                StatusCode::NOT_FOUND,
                "no such page; the API is /api/v1/info and /api/v1/probe?position=... (docs/api.md)",
            )
        })
        .with_state(explorer)
}

fn page(body: &'static str, content_type: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({"error": message.into()}))).into_response()
}

async fn info(State(explorer): State<Arc<Explorer>>, uri: Uri) -> Response {
    if let Err(m) = check_info_query(&uri) {
        return error(StatusCode::BAD_REQUEST, m);
    }
    Json(explorer.info().clone()).into_response()
}

/// `/api/info` and `/api/v1/info` take no parameters: any is refused (an empty query string is
/// none), naming the path asked.
pub fn check_info_query(uri: &Uri) -> Result<(), String> {
    match uri.query().filter(|q| !q.is_empty()) {
        None => Ok(()),
        Some(q) => {
            let name = q.split(['&', '=']).next().unwrap_or(q);
            let name: String = name.chars().take(40).collect();
            Err(format!(
                "unknown parameter `{name}`: {} takes no parameters",
                uri.path()
            ))
        }
    }
}

/// Unknown parameters are refused: `?q=...` would otherwise be taken for a missing `p`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PositionQuery {
    p: Option<String>,
}

/// The position text of `/api/position`'s query string, percent-decoded; the error says what is
/// wrong with the query (a missing `p` among others: `p=start` asks for the start).
pub fn parse_position_query(uri: &Uri) -> Result<String, String> {
    let Query(q) = Query::<PositionQuery>::try_from_uri(uri)
        .map_err(|e| format!("{e}: use /api/position?p=POSITION"))?;
    q.p.ok_or_else(|| {
        "missing parameter `p`: use /api/position?p=POSITION (p=start for the start position)"
            .to_string()
    })
}

async fn position(State(explorer): State<Arc<Explorer>>, uri: Uri) -> Response {
    let text = match parse_position_query(&uri) {
        Ok(text) => text,
        Err(m) => return error(StatusCode::BAD_REQUEST, m),
    };
    answer(tokio::task::spawn_blocking(move || explorer.position(&text)).await)
}

async fn info_v1(State(explorer): State<Arc<Explorer>>, uri: Uri) -> Response {
    if let Err(m) = check_info_query(&uri) {
        return error(StatusCode::BAD_REQUEST, m);
    }
    Json(crate::serve::api::info(explorer.tables())).into_response()
}

/// `/api/v1/probe` takes `position` (the position text, or `start`) and nothing else.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProbeQuery {
    position: Option<String>,
}

async fn probe_v1(State(explorer): State<Arc<Explorer>>, uri: Uri) -> Response {
    let text = match Query::<ProbeQuery>::try_from_uri(&uri) {
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("{e}: use /api/v1/probe?position=POSITION"),
            )
        }
        Ok(Query(ProbeQuery { position: None })) => return error(
            StatusCode::BAD_REQUEST,
            "missing parameter `position`: use /api/v1/probe?position=POSITION (position=start \
                 for the start)",
        ),
        Ok(Query(ProbeQuery {
            position: Some(text),
        })) => text,
    };
    answer(
        tokio::task::spawn_blocking(move || crate::serve::api::probe(explorer.tables(), &text))
            .await,
    )
}

/// The JSON of a lookup done off the async workers (table reads may decompress blocks), or its
/// error as `{"error": ...}` with the status it calls for.
fn answer(result: Result<Result<serde_json::Value, ApiError>, tokio::task::JoinError>) -> Response {
    match result {
        Ok(Ok(v)) => Json(v).into_response(),
        Ok(Err(ApiError::BadRequest(m))) => error(StatusCode::BAD_REQUEST, m),
        Ok(Err(ApiError::Internal(m))) => error(StatusCode::INTERNAL_SERVER_ERROR, m),
        Err(e) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the lookup failed: {e}"),
        ),
    }
}
