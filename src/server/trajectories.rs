//! `POST /v1/trajectories/analyze` (an agent's trajectory in, where it lost
//! context out) and `GET /trajectories/{id}` (the analysis as a page with
//! the run's timeline).
//!
//! The body is the trajectory file itself, up to 10 MiB on this route
//! whatever the server's general body limit; the thresholds are query
//! parameters. Analysing is CPU work and runs off the async runtime. The
//! latest pages are kept in memory (see [`crate::trajectory::store`]).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::Value;

use super::error::{ApiError, AppQuery};
use super::AppState;
use crate::index::search::escape_html;
use crate::trajectory::render::{html_page, StyleLink};
use crate::trajectory::store::{is_id, new_id};
use crate::trajectory::{self, Thresholds, MAX_TRAJECTORY_BYTES};

/// `POST /v1/trajectories/analyze`, behind the API's token check.
pub fn api_router() -> Router<AppState> {
    Router::new().route(
        "/v1/trajectories/analyze",
        // Inner to the server's own limit, so it wins on this route.
        post(analyze).layer(DefaultBodyLimit::max(MAX_TRAJECTORY_BYTES)),
    )
}

/// `GET /trajectories/{id}`: the id is the pass (see the store).
pub fn page_router() -> Router<AppState> {
    Router::new().route("/trajectories/{id}", get(page))
}

async fn analyze(
    State(state): State<AppState>,
    AppQuery(thresholds): AppQuery<Thresholds>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let body = body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::from(crate::app::Error::from(trajectory::Error::TooLarge {
                limit: MAX_TRAJECTORY_BYTES,
            }))
        } else {
            ApiError::new(rejection.status(), "invalid-body", rejection.body_text())
        }
    })?;
    let analysis = state
        .app
        .analyze_trajectory(body.to_vec(), thresholds)
        .await?;
    let mut response = serde_json::to_value(&analysis).map_err(ApiError::internal)?;
    let page = tokio::task::spawn_blocking(move || html_page(&analysis, StyleLink::Served))
        .await
        .map_err(ApiError::internal)?;
    let id = new_id();
    response["id"] = Value::String(id.clone());
    response["link"] = Value::String(format!("/trajectories/{id}"));
    state.trajectories.insert(id, page);
    Ok(Json(response))
}

async fn page(
    State(state): State<AppState>,
    id: Result<Path<String>, axum::extract::rejection::PathRejection>,
) -> Response {
    // An id that is not UTF-8 once decoded is no analysis either.
    let id = id.map(|Path(id)| id).unwrap_or_default();
    let found = is_id(&id).then(|| state.trajectories.get(&id)).flatten();
    let headers = [
        (header::CONTENT_TYPE, "text/html; charset=utf-8"),
        // The page holds transcript text: no copies in shared caches.
        (header::CACHE_CONTROL, "no-store"),
    ];
    match found {
        Some(page) => (StatusCode::OK, headers, page.to_string()).into_response(),
        None => {
            let body = format!(
                "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
                 <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
                 <title>No such analysis · noggin</title><link rel=\"stylesheet\" href=\"/trajectory.css\">\
                 </head><body><main><section><h1>No such analysis</h1><p>noggin keeps the latest {} \
                 analyses in memory, none across a restart; <code>{}</code> is not one of them. \
                 Post the trajectory to <code>/v1/trajectories/analyze</code> again.</p></section></main></body></html>\n",
                trajectory::store::CAPACITY,
                escape_html(&id),
            );
            (StatusCode::NOT_FOUND, headers, body).into_response()
        }
    }
}
