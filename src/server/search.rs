//! `GET /v1/search`: ranked notes for a query.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use super::error::{ApiError, AppQuery};
use super::AppState;
use crate::index::{Hit, SearchFilter};

/// Largest `limit` a caller may ask for.
pub const MAX_LIMIT: usize = 100;
/// Longest query accepted, in characters.
const MAX_QUERY_CHARS: usize = 1000;

pub fn router() -> Router<AppState> {
    Router::new().route("/v1/search", get(search))
}

#[derive(Deserialize)]
struct SearchParams {
    #[serde(default)]
    q: String,
    limit: Option<usize>,
    folder: Option<String>,
    tag: Option<String>,
}

#[derive(Serialize)]
struct SearchResponse {
    hits: Vec<Hit>,
}

async fn search(
    State(state): State<AppState>,
    AppQuery(params): AppQuery<SearchParams>,
) -> Result<Json<SearchResponse>, ApiError> {
    let q = params.q.trim();
    if q.is_empty() {
        return Err(ApiError::bad_request("empty-query", "q must not be empty"));
    }
    if q.chars().count() > MAX_QUERY_CHARS {
        return Err(ApiError::bad_request(
            "query-too-long",
            format!("q must be at most {MAX_QUERY_CHARS} characters"),
        ));
    }
    let limit = params.limit.unwrap_or(10);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::bad_request(
            "invalid-limit",
            format!("limit must be between 1 and {MAX_LIMIT}"),
        ));
    }
    let filter = SearchFilter {
        folder: params.folder.filter(|f| !f.trim().is_empty()),
        tag: params.tag.filter(|t| !t.trim().is_empty()),
        kind: None,
    };
    let index = state.index.clone();
    let q = q.to_string();
    let hits = tokio::task::spawn_blocking(move || index.search(&q, &filter, limit))
        .await
        .map_err(ApiError::internal)??;
    Ok(Json(SearchResponse { hits }))
}
