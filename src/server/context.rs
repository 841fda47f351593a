//! `POST /v1/context` (the context pack) and `POST /v1/context/window` (a
//! chat history cut to a token budget).
//!
//! The pack runs research for its `questions` through the same use case as
//! `POST /v1/research` (recorded for the card and the session), reads the session's working
//! context and assembles one block; the window is pure computation over the
//! request, with the session's block pinned when asked.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use serde::Serialize;

use super::error::{ApiError, AppJson};
use super::sessions::session_id;
use super::AppState;
use crate::context::block::render_block;
use crate::context::pack::{assemble, Pack, PackInputs, PackRequest};
use crate::context::window::{fit_window, Window, WindowRequest};
use crate::context::{DEFAULT_BLOCK_BUDGET_CHARS, DEFAULT_PACK_BUDGET_CHARS};
use crate::research::context::{load_project_context, ContextSource};
use crate::research::ResearchRequest;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/context", post(pack))
        .route("/v1/context/window", post(window))
}

/// `POST /v1/context` response.
#[derive(Serialize)]
struct PackResponse {
    #[serde(flatten)]
    pack: Pack,
    session: Option<String>,
    /// False when a session was named but has no events yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    session_found: Option<bool>,
    /// The research run for `questions`, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    research_id: Option<String>,
    /// Questions the notes did not answer: for the user.
    unanswered: Vec<String>,
}

async fn pack(
    State(state): State<AppState>,
    AppJson(request): AppJson<PackRequest>,
) -> Result<Json<PackResponse>, ApiError> {
    request
        .validate()
        .map_err(|invalid| ApiError::bad_request(invalid.code(), invalid.to_string()))?;
    let budget = request.budget.unwrap_or(DEFAULT_PACK_BUDGET_CHARS);
    let research = if request.questions.is_empty() {
        None
    } else {
        let research_request = ResearchRequest {
            prompt: request.prompt.clone().unwrap_or_default(),
            questions: request.questions.clone(),
            session: request.session.clone(),
            project_context: None,
        };
        Some(state.app.research(research_request).await?)
    };
    let project_context = match &research {
        Some(response) => response.project_context.clone(),
        None => {
            let index = state.app.index().clone();
            let settings = state.app.research_settings().clone();
            tokio::task::spawn_blocking(move || {
                let source = match &settings.project_context_path {
                    Some(path) => ContextSource::File(path),
                    None => ContextSource::Brain,
                };
                load_project_context(&index, source, settings.project_context_chars).text
            })
            .await
            .map_err(ApiError::internal)?
        }
    };
    let session = match &request.session {
        Some(id) => state.sessions.get(id.clone()).await?,
        None => None,
    };
    let inputs = PackInputs {
        prompt: request.prompt.as_deref(),
        project_context: project_context.as_deref(),
        research: research.as_ref(),
        context: session.as_ref().map(|s| &s.context),
    };
    let pack = assemble(&inputs, budget);
    Ok(Json(PackResponse {
        pack,
        session_found: request.session.as_ref().map(|_| session.is_some()),
        session: request.session,
        research_id: research.as_ref().map(|r| r.research_id.clone()),
        unanswered: research
            .map(|r| r.unanswered.into_iter().map(|u| u.question).collect())
            .unwrap_or_default(),
    }))
}

async fn window(
    State(state): State<AppState>,
    AppJson(request): AppJson<WindowRequest>,
) -> Result<Json<Window>, ApiError> {
    request
        .validate()
        .map_err(|invalid| ApiError::bad_request(invalid.code(), invalid.to_string()))?;
    let pinned = match (&request.session, request.protect.working_context) {
        (Some(id), true) => {
            session_id(id)?;
            let session = state.sessions.get(id.clone()).await?.ok_or_else(|| {
                ApiError::new(
                    StatusCode::NOT_FOUND,
                    "unknown-session",
                    format!("no session {id:?} to pin"),
                )
            })?;
            // At most half the window, at about four characters a token.
            let chars = DEFAULT_BLOCK_BUDGET_CHARS.min(request.budget.saturating_mul(2));
            render_block(&session.context, chars).block
        }
        _ => None,
    };
    Ok(Json(fit_window(&request, pinned)))
}
