//! `/v1/sessions`: a session's events in, its working-context block out.
//!
//! Thin adapters over the core's use cases ([`crate::app::Noggin`]'s
//! `session_events`, `working_context`, `list_sessions`, `delete_session`).
//! `GET /v1/sessions/{id}/context` renders the block within `?budget=`
//! characters with the ETag the core makes of the session's identity,
//! version and the budget, so a caller that sends `If-None-Match` gets 304
//! until something changed.

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use serde::Deserialize;

use super::error::{AnyJson, ApiError, AppQuery};
use super::AppState;
use crate::app::{
    check_session_id, invalid_budget, invalid_session_page_limit, invalid_session_page_offset,
    SessionList,
};
use crate::context::sessions::Appended;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/sessions", get(list))
        .route("/v1/sessions/{id}", delete(remove))
        .route("/v1/sessions/{id}/events", post(events))
        .route("/v1/sessions/{id}/context", get(context))
}

/// The `{id}` of a session route. One that is not UTF-8 once decoded is
/// refused in the API's error shape (axum answers plain text).
struct SessionId(String);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for SessionId {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, ApiError> {
        match Path::<String>::from_request_parts(parts, state).await {
            Ok(Path(id)) => Ok(SessionId(id)),
            Err(rejection) => Err(ApiError::bad_request(
                "invalid-session",
                rejection.body_text(),
            )),
        }
    }
}

async fn events(
    State(state): State<AppState>,
    SessionId(id): SessionId,
    AnyJson(body): AnyJson,
) -> Result<Json<Appended>, ApiError> {
    Ok(Json(state.app.session_events(id, body).await?))
}

/// Parses `?budget=` (characters); its range is the core's to check.
fn parse_budget(raw: Option<&str>) -> Result<Option<usize>, ApiError> {
    match raw {
        None | Some("") => Ok(None),
        Some(text) => text
            .parse::<usize>()
            .map(Some)
            .map_err(|_| invalid_budget().into()),
    }
}

#[derive(Deserialize)]
struct ContextParams {
    budget: Option<String>,
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
    SessionId(id): SessionId,
    AppQuery(params): AppQuery<ContextParams>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    // The session is checked first, as before the budget.
    check_session_id(&id)?;
    let budget = parse_budget(params.budget.as_deref())?;
    let view = state.app.working_context(id, budget).await?;
    // The tag is made of hex digits, digits, dashes and quotes only.
    let etag_header = HeaderValue::from_str(&view.etag).map_err(ApiError::internal)?;
    if matches_etag(&headers, &view.etag) {
        return Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, etag_header)]).into_response());
    }
    Ok(([(header::ETAG, etag_header)], Json(view)).into_response())
}

#[derive(Deserialize)]
struct ListParams {
    limit: Option<String>,
    offset: Option<String>,
}

async fn list(
    State(state): State<AppState>,
    AppQuery(params): AppQuery<ListParams>,
) -> Result<Json<SessionList>, ApiError> {
    let number = |raw: Option<&str>, invalid: fn() -> crate::app::Error| match raw {
        None | Some("") => Ok(None),
        Some(text) => text
            .trim()
            .parse::<usize>()
            .map(Some)
            .map_err(|_| invalid()),
    };
    let limit = number(params.limit.as_deref(), invalid_session_page_limit)?;
    let offset = number(params.offset.as_deref(), invalid_session_page_offset)?;
    Ok(Json(state.app.list_sessions(limit, offset).await?))
}

async fn remove(
    State(state): State<AppState>,
    SessionId(id): SessionId,
) -> Result<StatusCode, ApiError> {
    state.app.delete_session(id).await?;
    Ok(StatusCode::NO_CONTENT)
}
