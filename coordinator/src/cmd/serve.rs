//! `kingmaker serve DIR --listen ADDR`: a read-only HTTP server over a release (or a finished run).
//!
//! Routes (nothing else is served; no path reaches the file system):
//! - `GET /` — the explorer page; `/app.js`, `/app.css` — its script and style (embedded).
//! - `GET /api/info` — the game, its players, layers, start position and board.
//! - `GET /api/position?p=TEXT` — a position's labels and every move with the labels after it
//!   (`p` omitted: the start). A position that does not parse is a 400 with `{"error": "..."}`.

use crate::explore::{ApiError, Explorer};
use anyhow::{Context, Result};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use clap::Args;
use serde::Deserialize;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// A release directory (or a finished run directory).
    pub dir: PathBuf,
    /// Address to listen on; port 0 picks a free port (the address is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
}

const INDEX_HTML: &str = include_str!("../web/index.html");
const APP_JS: &str = include_str!("../web/app.js");
const APP_CSS: &str = include_str!("../web/app.css");

pub fn run(args: ServeArgs) -> Result<()> {
    let explorer = Arc::new(Explorer::open(&args.dir)?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the HTTP runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&args.listen)
            .await
            .with_context(|| format!("listening on {}", args.listen))?;
        let addr = listener.local_addr()?;
        println!(
            "serving {} from {} at http://{addr}/",
            explorer.game_name(),
            args.dir.display()
        );
        std::io::stdout().flush().ok();
        axum::serve(listener, router(explorer))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .context("serving HTTP")
    })
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
        .fallback(|| async {
            error(
                StatusCode::NOT_FOUND,
                "no such page; the API is /api/info and /api/position?p=...",
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

async fn info(State(explorer): State<Arc<Explorer>>) -> Response {
    Json(explorer.info().clone()).into_response()
}

#[derive(Deserialize)]
struct PositionQuery {
    p: Option<String>,
}

async fn position(
    State(explorer): State<Arc<Explorer>>,
    query: Result<Query<PositionQuery>, QueryRejection>,
) -> Response {
    let q = match query {
        Ok(Query(q)) => q,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("{e}: use /api/position?p=POSITION"),
            )
        }
    };
    let text = q.p.unwrap_or_else(|| "start".to_string());
    // Table reads may decompress blocks: keep them off the async workers.
    let result = tokio::task::spawn_blocking(move || explorer.position(&text)).await;
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
