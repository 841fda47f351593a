//! `GET /healthz` and `GET /v1/status`: is noggin up, and what does it hold.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;

use super::AppState;
use crate::brain::watch::WatchState;
use crate::index::ReconcileReport;

pub fn router() -> Router<AppState> {
    Router::new().route("/v1/status", get(status))
}

pub fn health_router() -> Router<AppState> {
    Router::new().route(
        "/healthz",
        get(|| async { Json(serde_json::json!({"ok": true})) }),
    )
}

#[derive(Serialize)]
struct Status {
    version: &'static str,
    brain: String,
    data_dir: String,
    notes: usize,
    sections: usize,
    indexing: bool,
    last_reconcile: Option<ReconcileReport>,
    last_commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rebuilt_because: Option<String>,
    watcher: WatchState,
    index_bytes: u64,
    uptime_secs: u64,
}

async fn status(State(state): State<AppState>) -> Json<Status> {
    let index = state.index.status();
    Json(Status {
        version: env!("CARGO_PKG_VERSION"),
        brain: state.index.brain().display().to_string(),
        data_dir: state.index.data_dir().display().to_string(),
        notes: index.notes,
        sections: index.sections,
        indexing: index.indexing,
        last_reconcile: index.last_reconcile,
        last_commit: index.last_commit,
        rebuilt_because: index.rebuilt_because,
        watcher: state.watcher.state(),
        index_bytes: state.index.size_bytes(),
        uptime_secs: state.started.elapsed().as_secs(),
    })
}
