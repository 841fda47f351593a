//! `POST /v1/research`: answers open questions from the brain.

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};

use super::error::{ApiError, AppJson};
use super::AppState;
use crate::research::{ResearchRequest, ResearchResponse};

pub fn router() -> Router<AppState> {
    Router::new().route("/v1/research", post(research))
}

async fn research(
    State(state): State<AppState>,
    AppJson(request): AppJson<ResearchRequest>,
) -> Result<Json<ResearchResponse>, ApiError> {
    Ok(Json(state.app.research(request).await?))
}
