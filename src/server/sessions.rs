//! `/v1/sessions`: a session's events in, its working-context block out.
//!
//! `POST /v1/sessions/{id}/events` checks every event of a request before
//! storing any, and answers once they are committed to disk. `GET
//! /v1/sessions/{id}/context` renders the block within `?budget=` characters
//! with an ETag made of the session's identity, version and the budget, so a
//! caller that sends `If-None-Match` gets 304 until something changed.

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{ApiError, AppJson, AppQuery};
use super::AppState;
use crate::context::block::{render_block, RenderedBlock};
use crate::context::events::parse_events;
use crate::context::sessions::{Appended, Session, SessionSummary};
use crate::context::state::WorkingContext;
use crate::context::{validate_session_id, DEFAULT_BLOCK_BUDGET_CHARS, MAX_BUDGET_CHARS};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/sessions", get(list))
        .route("/v1/sessions/{id}", delete(remove))
        .route("/v1/sessions/{id}/events", post(events))
        .route("/v1/sessions/{id}/context", get(context))
}

/// The session id of a path, checked.
pub fn session_id(id: &str) -> Result<(), ApiError> {
    validate_session_id(id).map_err(|e| ApiError::bad_request("invalid-session", e.to_string()))
}

fn unknown(id: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "unknown-session",
        format!("no session {id:?}; it is created by its first event"),
    )
}

async fn events(
    State(state): State<AppState>,
    Path(id): Path<String>,
    AppJson(body): AppJson<Value>,
) -> Result<Json<Appended>, ApiError> {
    session_id(&id)?;
    let events = parse_events(&body).map_err(|invalid| {
        let status = if invalid.is_too_large() {
            StatusCode::PAYLOAD_TOO_LARGE
        } else {
            StatusCode::BAD_REQUEST
        };
        ApiError::new(status, invalid.code(), invalid.to_string())
    })?;
    let raw: Vec<String> = match &body {
        Value::Array(items) => items.iter().map(Value::to_string).collect(),
        one => vec![one.to_string()],
    };
    Ok(Json(state.sessions.append(id, events, raw).await?))
}

/// Parses `?budget=` (characters).
pub fn parse_budget(raw: Option<&str>, default: usize) -> Result<usize, ApiError> {
    match raw {
        None | Some("") => Ok(default),
        Some(text) => match text.parse::<usize>() {
            Ok(n) if n <= MAX_BUDGET_CHARS => Ok(n),
            _ => Err(ApiError::bad_request(
                "invalid-budget",
                format!("budget must be a whole number of characters from 0 to {MAX_BUDGET_CHARS}"),
            )),
        },
    }
}

#[derive(Deserialize)]
struct ContextParams {
    budget: Option<String>,
}

/// `GET /v1/sessions/{id}/context` response.
#[derive(Serialize)]
struct ContextResponse {
    session: String,
    version: i64,
    etag: String,
    events: i64,
    updated: String,
    #[serde(flatten)]
    rendered: RenderedBlock,
    /// The same context, structured (for the card and for tools).
    working_context: WorkingContext,
}

/// The ETag of a session rendered at a budget.
pub fn etag(session: &Session, budget: usize) -> String {
    format!("\"{:x}-{}-{budget}\"", session.created_ms, session.version)
}

fn matches_etag(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|v| v.trim().trim_start_matches("W/"))
        .any(|v| v == etag || v == "*")
}

async fn context(
    State(state): State<AppState>,
    Path(id): Path<String>,
    AppQuery(params): AppQuery<ContextParams>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    session_id(&id)?;
    let budget = parse_budget(params.budget.as_deref(), DEFAULT_BLOCK_BUDGET_CHARS)?;
    let session = state
        .sessions
        .get(id.clone())
        .await?
        .ok_or_else(|| unknown(&id))?;
    let etag = etag(&session, budget);
    // The tag is made of hex digits, digits, dashes and quotes only.
    let etag_header = HeaderValue::from_str(&etag).map_err(ApiError::internal)?;
    if matches_etag(&headers, &etag) {
        return Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, etag_header)]).into_response());
    }
    let rendered = render_block(&session.context, budget);
    let body = ContextResponse {
        session: session.id,
        version: session.version,
        etag,
        events: session.events,
        updated: session.updated,
        rendered,
        working_context: session.context,
    };
    Ok(([(header::ETAG, etag_header)], Json(body)).into_response())
}

#[derive(Serialize)]
struct SessionList {
    sessions: Vec<SessionSummary>,
}

async fn list(State(state): State<AppState>) -> Result<Json<SessionList>, ApiError> {
    Ok(Json(SessionList {
        sessions: state.sessions.list().await?,
    }))
}

async fn remove(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    session_id(&id)?;
    if state.sessions.delete(id.clone()).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(unknown(&id))
    }
}
