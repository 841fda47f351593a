//! `POST /v1/research`: answers open questions from the brain.

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};

use super::error::{ApiError, AppJson};
use super::AppState;
use crate::research::{research_questions, ResearchRequest, ResearchResponse};

pub fn router() -> Router<AppState> {
    Router::new().route("/v1/research", post(research))
}

async fn research(
    State(state): State<AppState>,
    AppJson(request): AppJson<ResearchRequest>,
) -> Result<Json<ResearchResponse>, ApiError> {
    request
        .validate()
        .map_err(|invalid| ApiError::bad_request(invalid.code(), invalid.to_string()))?;
    let response = research_questions(&state.index, &state.config.research, &request).await;
    state
        .research_log
        .record(request.session, request.prompt, response.clone());
    Ok(Json(response))
}
