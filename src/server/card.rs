//! What the web card shows: `GET /v1/card` (the latest research of a session,
//! or of all, cut to what fits on a card, and with a session its working
//! context) and `GET /v1/card/events` (the same, as server-sent events, once
//! now and again after every research or change to a session).
//!
//! When a token is configured the card sends it as a bearer header, like any
//! client. Links to rendered notes cannot carry a header, so `/v1/card` also
//! hands the browser an HttpOnly, SameSite=Strict cookie scoped to `/notes`.
//! It holds a random pass made when noggin starts, never the token itself:
//! it opens rendered notes and nothing else.
//!
//! A card lists at most [`CARD_SESSIONS`] sessions, however many the store
//! holds: those read from the store are read once per change it commits and
//! shared by every card built until the next ([`CardSessions`]), so an event
//! stream's redraw after a change costs the same with ten sessions as with
//! forty thousand.

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use futures_util::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use tokio_stream::wrappers::WatchStream;

use super::error::{ApiError, AppQuery};
use super::render::note_link;
use super::{constant_time_eq, AppState};
use crate::app::CardRecord;
use crate::context::cut_chars;
use crate::context::sessions::{RecentSessions, Session, SessionStore};
use crate::context::state::{Confirmed, Item, RecentFile};
use crate::limits::CARD_SESSIONS;
use crate::research::context::{cut_on_word, REQUEST_CONTEXT_PATH};
use crate::research::Evidence;

/// The prompt shown above the facts is cut to this many characters.
const PROMPT_CHARS: usize = 160;
/// Sources listed per fact or open question.
const SOURCES_PER_QUESTION: usize = 3;
/// How often an idle event stream sends a comment, so proxies and browsers
/// keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/card", get(card))
        .route("/v1/card/events", get(card_events))
}

#[derive(Deserialize)]
struct CardParams {
    session: Option<String>,
}

impl CardParams {
    /// The session asked for; an empty one means "any".
    fn session(self) -> Result<Option<String>, ApiError> {
        match self.session.filter(|s| !s.is_empty()) {
            Some(s) => match crate::context::validate_session_id(&s) {
                Ok(()) => Ok(Some(s)),
                Err(error) => Err(ApiError::bad_request("invalid-session", error.to_string())),
            },
            None => Ok(None),
        }
    }
}

/// `GET /v1/card` response.
#[derive(Debug, Serialize)]
pub struct Card {
    /// The session asked for, or `None` for the latest research of any.
    pub session: Option<String>,
    /// Sessions with a research, most recently researched first, then the
    /// other stored sessions, most recently updated first: at most
    /// [`CARD_SESSIONS`] of them.
    pub sessions: Vec<String>,
    /// Sessions in all, listed or not (any of them can be asked for).
    pub sessions_total: usize,
    /// Whether the session asked for has a research or stored events
    /// (false without one): a name that has neither was deleted, mistyped
    /// or has not started.
    pub session_found: bool,
    /// Shown before every self-researched answer where it appears as text.
    pub marker: String,
    /// Most facts a card shows.
    pub max_facts: usize,
    /// Longest answer a card shows, in characters.
    pub answer_chars: usize,
    /// `None` until a research arrives.
    pub research: Option<CardResearch>,
    /// The session's working context, when a session with one is asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_context: Option<CardWorkingContext>,
}

/// Progress items a card shows (the newest).
const CARD_PROGRESS_ITEMS: usize = 8;
/// Decisions and confirmed answers a card shows, each (the newest).
const CARD_DECISIONS: usize = 5;
/// The latest failure is cut to this many characters on the card.
const CARD_FAILURE_CHARS: usize = 400;

/// A session's working context as the card shows it: its goals, latest
/// failure, recent files and progress.
#[derive(Debug, Serialize)]
pub struct CardWorkingContext {
    pub version: i64,
    /// RFC 3339.
    pub updated: String,
    /// Cut to fit, with "…".
    pub last_user_query: Option<String>,
    pub goals: Vec<Item>,
    /// The most recent failure still open.
    pub failure: Option<CardFailure>,
    /// Open failures (one per kind).
    pub failures: usize,
    /// The other open failures, the most recent first (the card opens them
    /// under "+N more").
    pub more_failures: Vec<CardFailure>,
    /// Most recent first.
    pub recent_files: Vec<RecentFile>,
    /// The newest items, oldest of them first.
    pub progress: Vec<Item>,
    pub progress_done: usize,
    pub progress_total: usize,
    /// The session's questions still open for the user, when the card has
    /// no research of it to show them with (after a restart: the card keeps
    /// research in memory, the session store keeps the questions).
    pub open_questions: Vec<String>,
    /// The newest decisions, oldest of them first.
    pub decisions: Vec<String>,
    pub decisions_total: usize,
    /// The newest answers the user confirmed, oldest of them first.
    pub confirmed: Vec<Confirmed>,
}

/// The latest failure on the card.
#[derive(Debug, Serialize)]
pub struct CardFailure {
    pub kind: &'static str,
    pub text: String,
    pub cut: bool,
    pub at: String,
}

impl CardWorkingContext {
    /// True when none of what the panel shows is there.
    fn shows_nothing(&self) -> bool {
        self.last_user_query.is_none()
            && self.goals.is_empty()
            && self.failure.is_none()
            && self.recent_files.is_empty()
            && self.progress.is_empty()
            && self.open_questions.is_empty()
            && self.decisions.is_empty()
            && self.confirmed.is_empty()
    }

    fn from_session(session: &Session, with_questions: bool) -> Self {
        let c = &session.context;
        let shown = |f: &crate::context::state::Failure| {
            let (text, cut) = cut_chars(&f.text, CARD_FAILURE_CHARS);
            CardFailure {
                kind: f.kind.as_str(),
                text,
                cut: cut || f.cut,
                at: f.at.clone(),
            }
        };
        let failure = c.failures.first().map(shown);
        let more_failures = c.failures.iter().skip(1).map(shown).collect();
        let skip = c.progress.len().saturating_sub(CARD_PROGRESS_ITEMS);
        CardWorkingContext {
            version: session.version,
            updated: session.updated.clone(),
            last_user_query: c
                .last_user_query
                .as_deref()
                .map(|q| cut_chars(q, PROMPT_CHARS).0),
            goals: c.goals.clone(),
            failure,
            failures: c.failures.len(),
            more_failures,
            recent_files: c.recent_files.clone(),
            progress: c.progress[skip..].to_vec(),
            progress_done: c.progress.iter().filter(|p| p.done).count(),
            progress_total: c.progress.len(),
            open_questions: if with_questions {
                c.open_questions.clone()
            } else {
                Vec::new()
            },
            decisions: newest(&c.decisions, CARD_DECISIONS),
            decisions_total: c.decisions.len(),
            confirmed: newest(&c.confirmed, CARD_DECISIONS),
        }
    }
}

/// The last `n` of `items`, in their order.
fn newest<T: Clone>(items: &[T], n: usize) -> Vec<T> {
    items[items.len().saturating_sub(n)..].to_vec()
}

/// The research a card shows.
#[derive(Debug, Serialize)]
pub struct CardResearch {
    pub research_id: String,
    pub session: Option<String>,
    /// RFC 3339.
    pub at: String,
    /// Grows with every research noggin records.
    pub seq: u64,
    /// The request the questions were about, cut to fit.
    pub prompt: String,
    pub took_ms: u64,
    /// noggin was still indexing the brain as the research began: what is
    /// open may be answered once that is done.
    pub indexing: bool,
    /// Self-researched facts, in the order they were asked.
    pub facts: Vec<Fact>,
    /// Facts answered beyond those shown.
    pub more_facts: usize,
    /// Those facts, for the card to show when asked.
    pub more: Vec<Fact>,
    /// Questions left for the user.
    pub open: Vec<OpenQuestion>,
    /// Questions it left open that the user answered since (through
    /// `/v1/answers` or MCP): no longer in `open`.
    pub answered_by_user: Vec<String>,
}

/// One self-researched answer on the card.
#[derive(Debug, Serialize)]
pub struct Fact {
    pub question: String,
    /// The answer, cut on a word with "…" when it is longer than the card allows.
    pub answer: String,
    /// True when `answer` was cut.
    pub cut: bool,
    /// The answer as text: the marker, then the answer.
    pub text: String,
    pub confidence: f32,
    pub source: &'static str,
    pub sources: Vec<Source>,
}

/// A note an answer rests on, or that came closest for an open question.
#[derive(Debug, Serialize)]
pub struct Source {
    pub path: String,
    pub title: String,
    pub heading: String,
    /// The rendered note; `None` for text that came with the request.
    pub link: Option<String>,
}

/// A question the notes did not answer.
#[derive(Debug, Serialize)]
pub struct OpenQuestion {
    pub question: String,
    /// The notes that came closest, if any.
    pub sources: Vec<Source>,
}

async fn card(
    State(state): State<AppState>,
    AppQuery(params): AppQuery<CardParams>,
) -> Result<Response, ApiError> {
    let session = params.session()?;
    let mut response = Json(build_full_card(&state, session).await).into_response();
    if state.config.token.is_some() {
        if let Some(cookie) = notes_cookie() {
            response.headers_mut().insert(header::SET_COOKIE, cookie);
        }
    }
    Ok(response)
}

async fn card_events(
    State(state): State<AppState>,
    AppQuery(params): AppQuery<CardParams>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let session = params.session()?;
    let mut closing = state.closing.subscribe();
    // The research stream yields its current value first: the card at once,
    // once. A research, an answer, or a change to any session redraws it.
    let researched = WatchStream::new(state.app.card_log().subscribe());
    let sessions_changed = WatchStream::from_changes(state.sessions.subscribe());
    // A change to one session wakes every stream; a card it left as it was
    // is not sent again.
    let mut sent: Option<String> = None;
    let events = futures_util::stream::select(researched, sessions_changed)
        .then(move |_| {
            let (state, session) = (state.clone(), session.clone());
            async move {
                let card = build_full_card(&state, session).await;
                // A struct of strings and numbers always serializes.
                serde_json::to_string(&card).unwrap_or_default()
            }
        })
        .filter_map(move |json| {
            let changed = sent.as_deref() != Some(json.as_str());
            let event = changed.then(|| {
                sent = Some(json.clone());
                Ok(Event::default().event("card").data(json))
            });
            std::future::ready(event)
        })
        // An endless response would hold up a graceful shutdown.
        .take_until(async move {
            let _ = closing.wait_for(|&c| c).await;
        });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

/// The card with the session's working context, and the most recently
/// updated sessions of the store beside those with a research. A store
/// failure is logged and leaves the card without them.
pub async fn build_full_card(state: &AppState, session: Option<String>) -> Card {
    let mut card = build_card(state, session.clone());
    let stored = match state.card_sessions.get(&state.sessions).await {
        Ok(stored) => stored,
        Err(error) => {
            // A store problem was logged when it appeared, not at every card.
            if !error.is_store_problem() {
                tracing::error!(%error, "cannot list the sessions for the card");
            }
            Arc::default()
        }
    };
    (card.sessions, card.sessions_total) =
        listed_sessions(std::mem::take(&mut card.sessions), &stored);
    if let Some(id) = session {
        match state.sessions.get(id).await {
            Ok(Some(stored)) => {
                card.session_found = true;
                // The session's open questions are the research's, shown
                // with it; without it (after a restart) the panel shows them.
                let with_questions = card.research.is_none();
                card.working_context =
                    Some(CardWorkingContext::from_session(&stored, with_questions))
                        .filter(|shown| !shown.shows_nothing());
            }
            Ok(None) => {}
            // Not known to be missing: the status says what ails the store.
            Err(error) if error.is_store_problem() => card.session_found = true,
            Err(error) => tracing::error!(%error, "cannot read the session for the card"),
        }
    }
    card
}

/// The sessions a card lists, at most [`CARD_SESSIONS`]: those with a
/// research first, then the store's most recently updated others; and the
/// number of sessions in all.
fn listed_sessions(researched: Vec<String>, stored: &RecentSessions) -> (Vec<String>, usize) {
    let mut seen: HashSet<&str> = HashSet::with_capacity(researched.len() + stored.ids.len());
    let mut listed = Vec::with_capacity(CARD_SESSIONS);
    for id in researched.iter().chain(&stored.ids) {
        if seen.insert(id) && listed.len() < CARD_SESSIONS {
            listed.push(id.clone());
        }
    }
    // A session with a research is stored too, unless recording it failed
    // (or the store cannot be read): never fewer than those seen.
    let total = stored.total.max(seen.len());
    (listed, total)
}

/// The store's most recently updated sessions as the card lists them,
/// read once per change the store commits and shared by every card built
/// until the next: each event stream builds its card again after every
/// change, and would otherwise each read the store again. Counting this
/// process's changes is enough: only the process that owns the index
/// writes the store.
#[derive(Clone, Default)]
pub struct CardSessions {
    // A std mutex: held only to look at or swap the cell, never across
    // `.await`.
    latest: Arc<Mutex<Listing>>,
}

/// The listing for one count of the store's changes, read by the first
/// card that asks for it.
#[derive(Default)]
struct Listing {
    changes: u64,
    sessions: Arc<tokio::sync::OnceCell<Arc<RecentSessions>>>,
}

impl CardSessions {
    /// The sessions as of the store's latest change (or a later one).
    async fn get(
        &self,
        store: &SessionStore,
    ) -> Result<Arc<RecentSessions>, crate::context::Error> {
        // Counted before the store is read: a change committed meanwhile
        // makes the next look read it again.
        let changes = store.changes();
        let cell = {
            let mut latest = self.latest.lock().unwrap_or_else(|e| e.into_inner());
            if latest.changes < changes {
                *latest = Listing {
                    changes,
                    sessions: Arc::default(),
                };
            }
            latest.sessions.clone()
        };
        // The first to ask reads the store; the others wait for its answer.
        cell.get_or_try_init(|| async { store.recent(CARD_SESSIONS).await.map(Arc::new) })
            .await
            .cloned()
    }
}

/// The card for `session` (or the latest research of any) as it is now.
pub fn build_card(state: &AppState, session: Option<String>) -> Card {
    let settings = state.config.card;
    let marker = state.config.knowledge.marker.clone();
    let view = state.app.card_log().view(session.as_deref());
    let research = view
        .research
        .map(|shown| card_research(&shown, &marker, settings));
    Card {
        session_found: session.is_some() && research.is_some(),
        session,
        sessions_total: view.sessions.len(),
        sessions: view.sessions,
        marker,
        max_facts: settings.facts,
        answer_chars: settings.answer_chars,
        research,
        working_context: None,
    }
}

fn card_research(
    shown: &CardRecord,
    marker: &str,
    settings: crate::config::CardSettings,
) -> CardResearch {
    let record = &shown.record;
    let response = &record.response;
    let fact = |answered: &crate::research::Answered| {
        let (answer, cut) = cut_on_word(&answered.answer, settings.answer_chars);
        Fact {
            question: answered.question.clone(),
            text: format!("{marker}{answer}"),
            answer,
            cut,
            confidence: answered.confidence,
            source: answered.source,
            // The notes the answer comes from, not the others read.
            sources: sources(
                &answered.evidence[..answered.cited.max(1).min(answered.evidence.len())],
            ),
        }
    };
    let facts: Vec<Fact> = response
        .answered
        .iter()
        .take(settings.facts)
        .map(fact)
        .collect();
    let more: Vec<Fact> = response
        .answered
        .iter()
        .skip(settings.facts)
        .map(fact)
        .collect();
    CardResearch {
        research_id: response.research_id.clone(),
        session: record.session.clone(),
        at: record.at.clone(),
        seq: record.seq,
        prompt: cut_on_word(&record.prompt, PROMPT_CHARS).0,
        took_ms: response.took_ms,
        indexing: response.indexing,
        more_facts: more.len(),
        facts,
        more,
        open: response
            .unanswered
            .iter()
            .filter(|open| !shown.answered.contains(&open.question))
            .map(|open| OpenQuestion {
                question: open.question.clone(),
                sources: sources(&open.evidence),
            })
            .collect(),
        answered_by_user: shown.answered.clone(),
    }
}

/// The distinct notes of some evidence, best first.
fn sources(evidence: &[Evidence]) -> Vec<Source> {
    let mut sources: Vec<Source> = Vec::new();
    for e in evidence {
        if sources.len() == SOURCES_PER_QUESTION {
            break;
        }
        if sources.iter().any(|s| s.path == e.path) {
            continue;
        }
        sources.push(Source {
            link: (e.path != REQUEST_CONTEXT_PATH).then(|| note_link(&e.path)),
            path: e.path.clone(),
            title: e.title.clone(),
            heading: e.heading.clone(),
        });
    }
    sources
}

/// The pass that lets this browser open rendered notes, made once per
/// process; `None` when no randomness is available (then notes need the
/// bearer header, which a link cannot send).
fn notes_pass() -> Option<&'static str> {
    static PASS: OnceLock<Option<String>> = OnceLock::new();
    PASS.get_or_init(|| {
        use std::io::Read;
        let mut bytes = [0u8; 32];
        let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
        match read {
            Ok(()) => Some(bytes.iter().map(|b| format!("{b:02x}")).collect()),
            Err(error) => {
                tracing::warn!(%error, "no randomness for the card's note pass; note links will need the token");
                None
            }
        }
    })
    .as_deref()
}

/// The cookie's name carries part of the pass, so that two noggins on one
/// host (cookies ignore ports) do not overwrite each other's.
fn notes_cookie_name(pass: &str) -> String {
    format!("noggin_notes_{}", &pass[..8])
}

fn notes_cookie() -> Option<HeaderValue> {
    let pass = notes_pass()?;
    let cookie = format!(
        "{}={pass}; Path=/notes; HttpOnly; SameSite=Strict",
        notes_cookie_name(pass)
    );
    HeaderValue::from_str(&cookie).ok()
}

/// True when a request may see rendered notes: no token is configured, or
/// it carries the bearer token, or the cookie `/v1/card` handed out.
pub fn authorized_for_pages(state: &AppState, headers: &HeaderMap) -> bool {
    let Some(token) = state.config.token.as_deref() else {
        return true;
    };
    let bearer = super::bearer_token(headers);
    if bearer.is_some_and(|b| constant_time_eq(b.as_bytes(), token.as_bytes())) {
        return true;
    }
    let Some(pass) = notes_pass() else {
        return false;
    };
    let name = notes_cookie_name(pass);
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .any(|(n, value)| n == name && constant_time_eq(value.as_bytes(), pass.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_card_lists_researched_sessions_first_and_a_bounded_number() {
        let ids = |range: std::ops::Range<usize>| range.map(|i| format!("s{i}")).collect();
        let stored = RecentSessions {
            ids: ids(0..CARD_SESSIONS),
            total: 10 * CARD_SESSIONS,
        };
        let researched: Vec<String> = vec!["s3".into(), "r".into()];
        let (listed, total) = listed_sessions(researched, &stored);
        assert_eq!(listed.len(), CARD_SESSIONS);
        assert_eq!(listed[..4], ["s3", "r", "s0", "s1"]);
        assert_eq!(listed.iter().filter(|s| *s == "s3").count(), 1);
        assert_eq!(total, 10 * CARD_SESSIONS);

        // Without the store: the sessions with a research, all counted.
        let (listed, total) = listed_sessions(ids(0..CARD_SESSIONS + 1), &Default::default());
        assert_eq!((listed.len(), total), (CARD_SESSIONS, CARD_SESSIONS + 1));
    }

    #[test]
    fn answers_are_cut_on_a_word_with_an_ellipsis() {
        let cases: &[(&str, usize, &str, bool)] = &[
            ("short answer", 150, "short answer", false),
            ("  padded  ", 150, "padded", false),
            ("one two three four", 12, "one two…", true),
            ("one two, three four", 12, "one two…", true),
            ("abcdefghijklmnop", 10, "abcdefghi…", true),
            (
                "배포는 화요일과 목요일 오후 두 시 이후에 합니다",
                12,
                "배포는 화요일과…",
                true,
            ),
        ];
        for &(text, max, expected, cut) in cases {
            let (got, was_cut) = cut_on_word(text, max);
            assert_eq!(
                (got.as_str(), was_cut),
                (expected, cut),
                "{text:?} to {max}"
            );
            assert!(got.chars().count() <= max);
        }
        let long = "word ".repeat(100);
        let (got, _) = cut_on_word(&long, 150);
        assert!(got.chars().count() <= 150 && got.ends_with('…'), "{got}");
    }
}
