//! The working-context use cases: a session's events in, its
//! `[working-context]` block out, the sessions' list and removal, the
//! context pack and the message window. Their checks and error codes live
//! here, once; HTTP (`server::sessions`, `server::context`) and MCP are
//! adapters over them.

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Error, Noggin};
use crate::context::block::{render_block, RenderedBlock};
use crate::context::events::parse_events;
use crate::context::pack::{assemble, Pack, PackInputs, PackRequest};
use crate::context::sessions::{Appended, Session, SessionStore, SessionSummary};
use crate::context::state::WorkingContext;
use crate::context::window::{block_to_pin, fit_window, Window, WindowRequest};
use crate::context::{
    validate_session_id, DEFAULT_BLOCK_BUDGET_CHARS, DEFAULT_PACK_BUDGET_CHARS, MAX_BUDGET_CHARS,
};
use crate::limits::{DEFAULT_SESSION_PAGE, MAX_SESSION_PAGE};
use crate::research::context::{load_project_context, ContextSource};
use crate::research::ResearchRequest;

/// `session_events`' input over MCP (HTTP takes the session from its path
/// and the events as its body).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionEventsRequest {
    /// The session (1 to 200 characters); its first event creates it.
    pub session: String,
    /// Events in order, as `POST /v1/sessions/{id}/events` takes them:
    /// objects with a `type` and its fields: `user_message` (`text`),
    /// `goal` and `progress` (`text`, `done` true or false, default false),
    /// `tool_call` (`tool`, `arguments` naming file paths, `is_error`),
    /// `failure` (`kind`: `build`, `test` or `other`; `text`), `resolved`
    /// (`kind`: the failure's kind, now fixed), `decision` (`text`). Goal,
    /// progress and decision texts and tool names are at most 2,000
    /// characters, a user message 20,000; a field the type does not take is
    /// refused.
    pub events: Vec<Value>,
}

/// `working_context`'s input.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkingContextRequest {
    /// The session (1 to 200 characters) whose working context to show.
    pub session: String,
    /// Characters the block may take (default 2,000, at most 1,000,000).
    #[serde(default, deserialize_with = "crate::context::optional_budget")]
    #[schemars(range(max = MAX_BUDGET_CHARS))]
    pub budget: Option<usize>,
}

/// A session's working context: the rendered block and the same context,
/// structured, with the session's version and the ETag made of it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WorkingContextView {
    pub session: String,
    pub version: i64,
    /// Changes when the session or the budget does (HTTP's `ETag`).
    pub etag: String,
    pub events: i64,
    pub updated: String,
    #[serde(flatten)]
    pub rendered: RenderedBlock,
    /// The same context, structured (for the card and for tools).
    pub working_context: WorkingContext,
}

/// A page `limit` out of range (or not a number).
pub fn invalid_session_page_limit() -> Error {
    Error::invalid(
        "invalid-limit",
        format!("limit must be between 1 and {MAX_SESSION_PAGE}"),
    )
}

/// An `offset` that is not a whole number.
pub fn invalid_session_page_offset() -> Error {
    Error::invalid(
        "invalid-offset",
        "offset must be a whole number of sessions to skip",
    )
}

/// One page of the sessions the store holds, most recently updated first.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SessionList {
    pub sessions: Vec<SessionSummary>,
    /// How many sessions there are in all.
    pub total: usize,
}

/// The context pack and what went into it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PackResponse {
    #[serde(flatten)]
    pub pack: Pack,
    pub session: Option<String>,
    /// False when a session was named but has no events yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_found: Option<bool>,
    /// The research run for `questions`, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub research_id: Option<String>,
    /// Questions the notes did not answer: for the user.
    pub unanswered: Vec<String>,
}

/// The ETag of a session rendered at a budget.
pub fn etag(session: &Session, budget: usize) -> String {
    format!("\"{:x}-{}-{budget}\"", session.created_ms, session.version)
}

/// A session id, checked.
pub fn check_session_id(id: &str) -> Result<(), Error> {
    validate_session_id(id).map_err(|e| Error::invalid("invalid-session", e.to_string()))
}

/// The refusal of a budget of the block out of range (or not a number).
pub fn invalid_budget() -> Error {
    Error::invalid(
        "invalid-budget",
        format!("budget must be a whole number of characters from 0 to {MAX_BUDGET_CHARS}"),
    )
}

impl Noggin {
    fn store(&self) -> Result<&SessionStore, Error> {
        self.sessions().ok_or_else(|| {
            Error::Internal(anyhow::anyhow!(
                "this way in keeps no sessions (only serve and mcp do)"
            ))
        })
    }

    /// Stores a request's events (one event object or a list of them) in
    /// session `id`, all or none, once they are on disk.
    pub async fn session_events(&self, id: String, body: Value) -> Result<Appended, Error> {
        check_session_id(&id)?;
        let events = parse_events(&body).map_err(crate::context::Error::from)?;
        let raw: Vec<String> = match &body {
            Value::Array(items) => items.iter().map(Value::to_string).collect(),
            one => vec![one.to_string()],
        };
        Ok(self.store()?.append(id, events, raw).await?)
    }

    /// Session `id`'s working context, its block within `budget` characters
    /// (default [`DEFAULT_BLOCK_BUDGET_CHARS`]).
    pub async fn working_context(
        &self,
        id: String,
        budget: Option<usize>,
    ) -> Result<WorkingContextView, Error> {
        check_session_id(&id)?;
        let budget = budget.unwrap_or(DEFAULT_BLOCK_BUDGET_CHARS);
        if budget > MAX_BUDGET_CHARS {
            return Err(invalid_budget());
        }
        let session = self
            .store()?
            .get(id.clone())
            .await?
            .ok_or_else(|| unknown_session(&id))?;
        let etag = etag(&session, budget);
        let rendered = render_block(&session.context, budget);
        Ok(WorkingContextView {
            session: session.id,
            version: session.version,
            etag,
            events: session.events,
            updated: session.updated,
            rendered,
            working_context: session.context,
        })
    }

    /// Up to `limit` sessions (default [`DEFAULT_SESSION_PAGE`], at most
    /// [`MAX_SESSION_PAGE`]), most recently updated first, after the first
    /// `offset`; and how many there are.
    pub async fn list_sessions(
        &self,
        limit: Option<usize>,
        offset: Option<usize>,
    ) -> Result<SessionList, Error> {
        let limit = limit.unwrap_or(DEFAULT_SESSION_PAGE);
        if !(1..=MAX_SESSION_PAGE).contains(&limit) {
            return Err(invalid_session_page_limit());
        }
        let (sessions, total) = self.store()?.page(limit, offset.unwrap_or(0)).await?;
        Ok(SessionList { sessions, total })
    }

    /// Forgets session `id` and its events.
    pub async fn delete_session(&self, id: String) -> Result<(), Error> {
        check_session_id(&id)?;
        if self.store()?.delete(id.clone()).await? {
            self.card_log().forget(&id);
            Ok(())
        } else {
            Err(unknown_session(&id))
        }
    }

    /// The context pack: research for `questions` (recorded like
    /// [`Noggin::research`]), the project context and the session's working
    /// context, in one block within the budget.
    pub async fn context_pack(&self, request: PackRequest) -> Result<PackResponse, Error> {
        request
            .validate()
            .map_err(|invalid| Error::invalid(invalid.code(), invalid.to_string()))?;
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
            Some(self.research(research_request).await?)
        };
        let project_context = match &research {
            Some(response) => response.project_context.clone(),
            None => {
                let index = self.index().clone();
                let settings = self.research_settings().clone();
                tokio::task::spawn_blocking(move || {
                    let source = match &settings.project_context_path {
                        Some(path) => ContextSource::File(path),
                        None => ContextSource::Brain,
                    };
                    load_project_context(&index, source, settings.project_context_chars).text
                })
                .await
                .context("the project context task failed")?
            }
        };
        let session = match &request.session {
            Some(id) => self.store()?.get(id.clone()).await?,
            None => None,
        };
        let inputs = PackInputs {
            prompt: request.prompt.as_deref(),
            project_context: project_context.as_deref(),
            research: research.as_ref(),
            context: session.as_ref().map(|s| &s.context),
            marker: Some(&self.knowledge_settings().marker),
        };
        let mut pack = assemble(&inputs, budget);
        if research
            .as_ref()
            .is_some_and(|r| r.indexing && !r.unanswered.is_empty())
        {
            pack.warnings.push(
                "noggin was still indexing the brain: the questions left open may be \
                 answered once it is done"
                    .to_string(),
            );
        }
        Ok(PackResponse {
            pack,
            session_found: request.session.as_ref().map(|_| session.is_some()),
            session: request.session,
            research_id: research.as_ref().map(|r| r.research_id.clone()),
            unanswered: research
                .map(|r| r.unanswered.into_iter().map(|u| u.question).collect())
                .unwrap_or_default(),
        })
    }

    /// A chat history cut to a token budget, the session's block pinned when
    /// `protect.working_context` asks for it.
    pub async fn context_window(&self, request: WindowRequest) -> Result<Window, Error> {
        request
            .validate()
            .map_err(|invalid| Error::invalid(invalid.code(), invalid.to_string()))?;
        // A session given is checked, pinned or not: a wrong id is the
        // caller's bug either way.
        if let Some(id) = &request.session {
            check_session_id(id)?;
        }
        let (pinned, left_out) = match (&request.session, request.protect.working_context) {
            (Some(id), true) => {
                let session =
                    self.store()?.get(id.clone()).await?.ok_or_else(|| {
                        Error::UnknownSession(format!("no session {id:?} to pin"))
                    })?;
                let block = block_to_pin(&session.context, &request);
                let left_out = match &block {
                    Some(_) => None,
                    None if session.context.is_empty() => Some("empty-working-context"),
                    None => Some("budget"),
                };
                (block, left_out)
            }
            _ => (None, None),
        };
        let mut window = fit_window(&request, pinned);
        window.pinned_left_out = left_out;
        Ok(window)
    }
}

fn unknown_session(id: &str) -> Error {
    Error::UnknownSession(format!(
        "no session {id:?}; it is created by its first event"
    ))
}
