//! `POST /v1/context` (the context pack) and `POST /v1/context/window` (a
//! chat history cut to a token budget): thin adapters over the core's
//! `context_pack` and `context_window` ([`crate::app::Noggin`]).

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};

use super::error::{ApiError, AppJson};
use super::AppState;
use crate::app::PackResponse;
use crate::context::pack::PackRequest;
use crate::context::window::{Window, WindowRequest};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/context", post(pack))
        .route("/v1/context/window", post(window))
}

async fn pack(
    State(state): State<AppState>,
    AppJson(request): AppJson<PackRequest>,
) -> Result<Json<PackResponse>, ApiError> {
    Ok(Json(state.app.context_pack(request).await?))
}

async fn window(
    State(state): State<AppState>,
    AppJson(request): AppJson<WindowRequest>,
) -> Result<Json<Window>, ApiError> {
    Ok(Json(state.app.context_window(request).await?))
}
