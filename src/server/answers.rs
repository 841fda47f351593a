//! `POST /v1/answers`: the user's answers written back into the brain.
//!
//! The response is sent only once the note is on disk and indexed, so a
//! search or research right after it finds the answers.

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};

use super::error::{ApiError, AppJson};
use super::AppState;
use crate::app::{RememberRequest, Remembered};

pub fn router() -> Router<AppState> {
    Router::new().route("/v1/answers", post(answers))
}

async fn answers(
    State(state): State<AppState>,
    AppJson(request): AppJson<RememberRequest>,
) -> Result<Json<Remembered>, ApiError> {
    Ok(Json(state.app.remember(request).await?))
}
