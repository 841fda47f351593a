//! `GET /healthz` and `GET /v1/status`: is noggin up, and what does it hold.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};

use super::AppState;
use crate::app::Status;

pub fn router() -> Router<AppState> {
    Router::new().route("/v1/status", get(status))
}

pub fn health_router() -> Router<AppState> {
    Router::new().route(
        "/healthz",
        get(|| async { Json(serde_json::json!({"ok": true})) }),
    )
}

async fn status(State(state): State<AppState>) -> Json<Status> {
    Json(state.app.current_status().await)
}
