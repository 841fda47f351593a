//! `GET /v1/search`: ranked notes for a query.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};

use super::error::{ApiError, AppQuery};
use super::AppState;
use crate::app::{SearchRequest, SearchResults};

pub fn router() -> Router<AppState> {
    Router::new().route("/v1/search", get(search))
}

async fn search(
    State(state): State<AppState>,
    AppQuery(request): AppQuery<SearchRequest>,
) -> Result<Json<SearchResults>, ApiError> {
    Ok(Json(state.app.search(request).await?))
}
