//! The HTTP server: the JSON API, the OpenAPI document and (later) the card.
//!
//! Each resource lives in its own module with a `router()`; [`app`] puts them
//! together with the body limit, the bearer-token check on `/v1` and request
//! tracing. [`run`] serves until the shutdown future resolves, so tests can
//! pass their own.

mod answers;
mod card;
pub mod error;
mod notes;
mod openapi;
mod research;
mod search;
mod status;
mod web;

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::Router;
use tokio::net::TcpListener;
use tower_http::trace::TraceLayer;

use crate::brain::watch::{watch_brain, Change, Watcher};
use crate::config::ServerConfig;
use crate::index::Index;
use crate::knowledge::Knowledge;
use crate::research::log::ResearchLog;
use error::ApiError;

/// Shared state of every handler: cheap handles.
#[derive(Clone)]
pub struct AppState {
    pub index: Index,
    pub watcher: Arc<Watcher>,
    pub config: Arc<ServerConfig>,
    pub started: Instant,
    /// The latest research of each session, for the card.
    pub research_log: ResearchLog,
    /// Writes the user's answers back into the brain.
    pub knowledge: Knowledge,
}

impl AppState {
    /// Opens the brain's index, starts following the brain and starts the
    /// first reconcile in the background (searches work meanwhile).
    pub fn open(config: ServerConfig) -> anyhow::Result<AppState> {
        let index = Index::open(config.brain.index_options(false))?;
        let sink_index = index.clone();
        let sink = Arc::new(move |change: Change| {
            let sent = match change {
                Change::Notes(paths) => sink_index.queue_paths(paths),
                Change::Rescan => sink_index.request_reconcile(),
            };
            if let Err(error) = sent {
                tracing::warn!(%error, "cannot pass a change to the index");
            }
        });
        let watcher = watch_brain(index.brain(), config.watch, config.poll_interval, sink);
        index.request_reconcile()?;
        let knowledge = Knowledge::new(index.brain(), config.knowledge.clone());
        Ok(AppState {
            index,
            watcher: Arc::new(watcher),
            config: Arc::new(config),
            started: Instant::now(),
            research_log: ResearchLog::default(),
            knowledge,
        })
    }
}

/// The whole HTTP application.
pub fn app(state: AppState) -> Router {
    let security_headers = web::security_headers();
    let v1 = Router::new()
        .merge(status::router())
        .merge(search::router())
        .merge(research::router())
        .merge(answers::router())
        .merge(card::router())
        .merge(notes::api_router())
        // Note pages show note content: protected like the API.
        .merge(notes::page_router())
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token));
    Router::new()
        .merge(status::health_router())
        .merge(openapi::router())
        .merge(web::router())
        .merge(v1)
        .fallback(|| async { ApiError::not_found("no such route") })
        // After every route is in place: it applies to the routes it finds.
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method-not-allowed",
                "this route does not take that method",
            )
        })
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(security_headers[0].clone())
        .layer(security_headers[1].clone())
        .layer(security_headers[2].clone())
        .layer(security_headers[3].clone())
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Name of the cookie the card sets so that links to rendered notes, which
/// cannot carry a header, are let through too.
const TOKEN_COOKIE: &str = "noggin_token";

/// Checks `Authorization: Bearer <token>` (or the card's `noggin_token`
/// cookie, which is `SameSite=Strict`) when a token is configured.
async fn require_token(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    if let Some(token) = state.config.token.as_deref() {
        let headers = request.headers();
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let cookie = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == TOKEN_COOKIE)
            .map(|(_, value)| value);
        let ok = [bearer, cookie]
            .into_iter()
            .flatten()
            .any(|given| constant_time_eq(given.as_bytes(), token.as_bytes()));
        if !ok {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "missing or wrong bearer token",
            ));
        }
    }
    Ok(next.run(request).await)
}

/// Compares without an early exit, so response time does not leak the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Serves `state` on `listener` until `shutdown` resolves.
pub async fn run(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, app(state))
        .with_graceful_shutdown(shutdown)
        .await
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::error!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}
