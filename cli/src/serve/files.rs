//! `/release/NAME`: the served release's own files, for `kingmaker fetch URL/release/`. Only the
//! names its manifest lists are served (no path reaches the file system); ranges and conditional
//! requests are tower-http's, so that a fetch cut off mid-file resumes where it stopped.

use super::error;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use kingmaker_tablefmt::release::manifest::{Manifest, MANIFEST, MANIFEST_SHA256};
use kingmaker_tablefmt::release::parts::PARTS;
use kingmaker_tablefmt::release::piece::PackedPart;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tower::ServiceExt;
use tower_http::services::ServeFile;

/// The files a release directory serves, by name.
#[derive(Debug, Default)]
pub struct ReleaseFiles {
    files: BTreeMap<String, PathBuf>,
    /// Why there is nothing to serve (a run directory, not a release), or which files a partial
    /// copy lacks.
    absent_reason: Option<String>,
}

impl ReleaseFiles {
    /// The files of `dir`'s release: its manifest, the manifest's checksum, and every file the
    /// manifest lists that this copy holds.
    pub fn new(dir: &Path, manifest: Option<&Manifest>) -> ReleaseFiles {
        let Some(m) = manifest else {
            return ReleaseFiles {
                files: BTreeMap::new(),
                absent_reason: Some(format!(
                    "{} is not a release (no {MANIFEST}): pack it (`kingmaker pack`) and serve \
                     the release to publish its files",
                    dir.display()
                )),
            };
        };
        let mut files = BTreeMap::new();
        let names = [MANIFEST, MANIFEST_SHA256, PARTS]
            .into_iter()
            .map(str::to_string)
            .chain(m.files.iter().map(|f| f.path.clone()));
        for name in names {
            let path = dir.join(&name);
            // Regular files only: a link could lead out of the release directory.
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file()) {
                files.insert(name, path);
            }
        }
        let missing: Vec<&str> = m
            .files
            .iter()
            .map(|f| f.path.as_str())
            .filter(|n| !files.contains_key(*n))
            .collect();
        let absent_reason = (!missing.is_empty()).then(|| {
            format!(
                "this copy of the release is partial: it lacks {}",
                missing.join(", ")
            )
        });
        ReleaseFiles {
            files,
            absent_reason,
        }
    }

    /// The parts a host packed into `dir` (`kingmaker pack-part`): each part's record
    /// (`<part>.json`) and its two files, for the manifest of a release in parts to point at.
    /// `None` when `dir` holds no record of a packed part.
    pub fn of_packed_parts(dir: &Path) -> anyhow::Result<Option<ReleaseFiles>> {
        let mut files = BTreeMap::new();
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(_) => return Ok(None),
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(part) = name.strip_suffix(".json").filter(|n| n.contains(".part-")) else {
                continue;
            };
            let Some(record) = PackedPart::read(dir, part)? else {
                continue;
            };
            for f in [&record.file, &record.values_file] {
                let path = dir.join(&f.path);
                let size = std::fs::symlink_metadata(&path)
                    .ok()
                    .filter(|m| m.file_type().is_file())
                    .map(|m| m.len());
                if size != Some(f.size) {
                    anyhow::bail!(
                        "{}: {} lists {} of {} bytes, which is not here as a regular file of that \
                         size: pack the part again (`kingmaker pack-part`)",
                        dir.display(),
                        name,
                        f.path,
                        f.size
                    );
                }
                files.insert(f.path.clone(), path);
            }
            files.insert(name, entry.path());
        }
        Ok((!files.is_empty()).then_some(ReleaseFiles {
            files,
            absent_reason: None,
        }))
    }

    /// How many files are served.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether any file is served (a release, not a run directory).
    pub fn serves_any(&self) -> bool {
        !self.files.is_empty()
    }
}

/// The routes `/release/` (a list of the names) and `/release/NAME`.
pub fn routes(files: Arc<ReleaseFiles>) -> Router {
    Router::new()
        .route("/release/", get(list))
        .route("/release/{name}", get(file))
        .with_state(files)
}

async fn list(State(files): State<Arc<ReleaseFiles>>) -> Response {
    if files.files.is_empty() {
        let why = files.absent_reason.clone().unwrap_or_default();
        return error(StatusCode::NOT_FOUND, why);
    }
    let names: Vec<&str> = files.files.keys().map(String::as_str).collect();
    format!("{}\n", names.join("\n")).into_response()
}

async fn file(
    State(files): State<Arc<ReleaseFiles>>,
    UrlPath(name): UrlPath<String>,
    request: Request,
) -> Response {
    let Some(path) = files.files.get(&name) else {
        let why = match &files.absent_reason {
            Some(why) => format!("{name} is not served here: {why}"),
            None => format!("{name} is not a file of this release (its names: GET /release/)"),
        };
        return error(StatusCode::NOT_FOUND, why);
    };
    // Its type guessed from the name: JSON for the manifest, bytes for the tables.
    match ServeFile::new(path).oneshot(request).await {
        Ok(response) => response.into_response(),
        Err(e) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("reading {name}: {e}"),
        ),
    }
}
