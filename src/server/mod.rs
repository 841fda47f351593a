//! The HTTP server: the JSON API, the OpenAPI document and the web card.
//!
//! Each resource lives in its own module with a `router()`; [`app`] puts them
//! together with the body limit, the bearer-token check on `/v1`, the
//! `Host`/`Origin` check on everything ([`guard`]) and request tracing.
//! [`run`] serves until the shutdown future resolves, so tests can pass their
//! own, with the timeouts and connection cap of [`serve`].

mod answers;
pub mod card;
mod context;
pub mod error;
pub mod guard;
mod notes;
mod openapi;
mod openapi_context;
pub(crate) mod render;
mod research;
mod search;
pub mod serve;
mod sessions;
mod status;
mod trajectories;
mod web;

use std::future::Future;
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tower_http::trace::TraceLayer;

use crate::app::Noggin;
use crate::config::ServerConfig;
use crate::context::sessions::SessionStore;
use error::ApiError;

/// Shared state of every handler: cheap handles.
#[derive(Clone)]
pub struct AppState {
    /// The use cases; handlers only translate HTTP to and from them.
    pub app: Noggin,
    pub config: Arc<ServerConfig>,
    /// The latest trajectory analyses, for their pages.
    pub trajectories: crate::trajectory::store::TrajectoryStore,
    /// Turns true when the server starts shutting down, so that endless
    /// responses (the card's event stream) end and let it stop.
    pub closing: Arc<watch::Sender<bool>>,
    /// Sessions' working context, durable in the data folder.
    pub sessions: SessionStore,
    /// The sessions the card lists, read once per change to the store.
    pub card_sessions: card::CardSessions,
}

impl AppState {
    /// Opens the brain's index, starts following the brain and starts the
    /// first reconcile in the background (searches work meanwhile).
    pub fn open(config: ServerConfig) -> anyhow::Result<AppState> {
        let app = Noggin::open_live(&config.core(), config.watch, config.poll_interval)?;
        let sessions = app
            .sessions()
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("a live noggin has a session store"))?;
        Ok(AppState {
            app,
            config: Arc::new(config),
            trajectories: Default::default(),
            closing: Arc::new(watch::Sender::new(false)),
            sessions,
            card_sessions: Default::default(),
        })
    }
}

/// The whole HTTP application.
pub fn app(state: AppState) -> Router {
    let v1 = Router::new()
        .merge(status::router())
        .merge(search::router())
        .merge(research::router())
        .merge(answers::router())
        .merge(card::router())
        .merge(notes::api_router())
        .merge(sessions::router())
        .merge(context::router())
        .merge(trajectories::api_router())
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token));
    // MCP over streamable HTTP: behind the same token and, like every route,
    // the door's Host and Origin checks (DNS rebinding).
    let mcp = Router::new()
        .nest_service("/mcp", crate::mcp::http_service(state.app.clone()))
        .layer(middleware::from_fn(mcp_params_checked))
        .layer(middleware::from_fn(mcp_errors_as_json))
        .layer(middleware::from_fn_with_state(state.clone(), require_token));
    Router::new()
        .merge(mcp)
        .merge(status::health_router())
        .merge(openapi::router())
        .merge(web::router())
        .merge(notes::page_router())
        .merge(trajectories::page_router())
        .merge(v1)
        .fallback(notes::no_such_page)
        // After every route is in place: it applies to the routes it finds.
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method-not-allowed",
                "this route does not take that method",
            )
        })
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        // Outside every route and fallback, so routes added above (e.g.
        // `/mcp`) are behind it too.
        .layer(middleware::from_fn_with_state(
            state.clone(),
            guard::check_door,
        ))
        // Outside the door, so its refusals (403, 413) carry them too.
        .layer(middleware::from_fn(web::security_headers))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Checks `Authorization: Bearer <token>` when a token is configured.
async fn require_token(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    if let Some(token) = state.config.token.as_deref() {
        let given = bearer_token(request.headers());
        if !given.is_some_and(|g| constant_time_eq(g.as_bytes(), token.as_bytes())) {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "missing or wrong bearer token",
            ));
        }
    }
    Ok(next.run(request).await)
}

/// Largest refusal text of the MCP transport that is read into a JSON
/// error; its refusals are one line.
const MCP_REFUSAL_BYTES: usize = 16 * 1024;

/// Gives the MCP transport's refusals (a body that is no JSON, a wrong
/// `Content-Type` or `Accept`, a method other than POST) the API's JSON
/// error shape, as the door's refusals of `/mcp` have: it answers them as
/// plain text, and a body that is no JSON as `415`, which it is not.
async fn mcp_errors_as_json(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let plain = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_none_or(|t| t.as_bytes().starts_with(b"text/plain"));
    if !response.status().is_client_error() || !plain {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, MCP_REFUSAL_BYTES)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_string())
        .unwrap_or_default();
    let (status, code, message) = match parts.status {
        // Its words for a body serde could not read.
        StatusCode::UNSUPPORTED_MEDIA_TYPE if text.starts_with("fail to deserialize") => (
            StatusCode::BAD_REQUEST,
            "invalid-json",
            format!("the body is not a JSON-RPC message: {text}"),
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => (
            parts.status,
            "unsupported-media-type",
            "a JSON-RPC message needs Content-Type: application/json".to_string(),
        ),
        StatusCode::NOT_ACCEPTABLE => (
            parts.status,
            "not-acceptable",
            "Accept must name both application/json and text/event-stream".to_string(),
        ),
        StatusCode::METHOD_NOT_ALLOWED => (
            parts.status,
            "method-not-allowed",
            "/mcp takes JSON-RPC messages by POST".to_string(),
        ),
        StatusCode::FORBIDDEN => (parts.status, "forbidden-host", text),
        StatusCode::PAYLOAD_TOO_LARGE => (parts.status, "body-too-large", text),
        status => (status, "invalid-request", text),
    };
    let mut refused = ApiError::new(status, code, message).into_response();
    if let Some(allow) = parts.headers.get(header::ALLOW) {
        refused.headers_mut().insert(header::ALLOW, allow.clone());
    }
    refused
}

/// Answers a call of a method `/mcp` serves whose parameters do not fit it
/// (`tools/call` with `arguments` that are no object, say) with JSON-RPC's
/// invalid params (-32602), as MCP over stdio does, where the MCP transport
/// would answer that the method does not exist. The transport still sees
/// the request first, so its own refusals (media types, `Accept`) stand;
/// a JSON body it cannot read (params that are no object) is answered so too.
/// A call whose arguments say a key twice is answered with the tool error
/// the HTTP API's 400 would be; the transport sees a ping in its place, so
/// no tool runs on what rmcp would read as the last value.
async fn mcp_params_checked(request: Request, next: Next) -> Response {
    if request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    // With this type, the transport's 415 is its word for a message it
    // cannot read, as one whose params are no object.
    let json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"application/json"));
    let body = match axum::body::to_bytes(body, crate::mcp::MAX_HTTP_BODY_BYTES).await {
        Ok(body) => body,
        Err(_) => {
            return guard::body_too_large(
                crate::mcp::MAX_HTTP_BODY_BYTES,
                "the limit of this route",
            )
            .into_response()
        }
    };
    let (refused, body) = match crate::mcp::refusal(&body) {
        Some(crate::mcp::Refusal {
            answer,
            stand_in: Some(stand_in),
        }) => (Some(answer), stand_in.into()),
        Some(crate::mcp::Refusal { answer, .. }) => (Some(answer), body),
        None => (None, body),
    };
    let response = next
        .run(Request::from_parts(parts, axum::body::Body::from(body)))
        .await;
    let read = response.status() == StatusCode::OK
        || (json && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE);
    match refused {
        Some(answer) if read => {
            ([(header::CONTENT_TYPE, "application/json")], answer).into_response()
        }
        _ => response,
    }
}

/// The token of `Authorization: Bearer <token>`; the scheme's name is
/// case-insensitive (RFC 9110), so `bearer` and `BEARER` are accepted too.
pub(crate) fn bearer_token(headers: &axum::http::HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim_start_matches(' '))
}

/// Compares without an early exit, so response time does not leak the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Serves `state` on `listener` until `shutdown` resolves, then closes the
/// core (the session store's WAL goes into its file).
pub async fn run(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let closing = state.closing.clone();
    let limits = state.config.connections;
    let core = state.app.clone();
    serve::serve(listener, app(state), limits, shutdown, closing).await?;
    // Every connection has ended: nothing writes to the store any more.
    core.close().await;
    Ok(())
}

/// Listens for Ctrl-C, SIGTERM and SIGHUP from the moment it is called and resolves
/// on the first of them. The handlers are installed here, not when the future
/// is first polled: a signal sent as soon as `serve` says where it listens
/// (or while the accept loop is busy) still stops it cleanly instead of
/// killing it. Must be called inside the runtime.
#[cfg(unix)]
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{signal, SignalKind};
    let listen = |kind: SignalKind, name: &'static str| {
        let installed = signal(kind)
            .inspect_err(|error| tracing::error!(%error, "cannot listen for {name}"))
            .ok();
        async move {
            match installed {
                Some(mut signal) => {
                    signal.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        }
    };
    let interrupt = listen(SignalKind::interrupt(), "Ctrl-C");
    let terminate = listen(SignalKind::terminate(), "SIGTERM");
    // The terminal it ran in was closed.
    let hangup = listen(SignalKind::hangup(), "SIGHUP");
    async move {
        tokio::select! {
            () = interrupt => {},
            () = terminate => {},
            () = hangup => {},
        }
        tracing::info!("shutting down");
    }
}

/// Resolves on Ctrl-C.
#[cfg(not(unix))]
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
        tracing::info!("shutting down");
    }
}
