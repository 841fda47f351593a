//! The application core: one [`Noggin`] handle holds a brain's index, its
//! write-back and its research log, and offers the use cases — search,
//! research (recorded for the card and its session), remember (written, then
//! indexed, and recorded in its session), read a note, status, and the
//! sessions' store — with their limits ([`crate::limits`]) checked here, once.
//!
//! The ways in are thin adapters over this handle: the CLI (`crate::cli`),
//! the HTTP server (`crate::server`) and MCP (`crate::mcp`). They turn their
//! input into the request types below and the [`Error`] into their own shape;
//! none of them runs a use case itself.

mod card_log;
mod context;
mod error;
mod trajectory;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::{Deserialize, Serialize};

pub use card_log::{CardLog, CardRecord, CardView};
pub use context::{
    check_session_id, etag, invalid_budget, invalid_session_page_limit,
    invalid_session_page_offset, PackResponse, SessionEventsRequest, SessionList,
    WorkingContextRequest, WorkingContextView,
};
pub use error::Error;
pub use trajectory::{transcript_or_path, AnalyzeTrajectoryRequest};

use crate::brain::names::{link_target, NoteNames};
use crate::brain::parse::parse_note;
use crate::brain::scan::NoteFile;
use crate::brain::scan::{read_note_text, stat_note};
use crate::brain::watch::{watch_brain, Change, WatchMode, WatchState, Watcher};
use crate::config::BrainArgs;
use crate::context::sessions::SessionStore;
use crate::context::state::Confirmed;
use crate::index::search::rfc3339;
use crate::index::{Follows, Hit, Index, Progress, ReconcileReport, SearchFilter};
use crate::knowledge::{self, Knowledge, Outcome};
use crate::limits::{DEFAULT_SEARCH_LIMIT, MAX_NOTE_PATH_CHARS, MAX_QUERY_CHARS, MAX_SEARCH_LIMIT};
use crate::research::{
    deciders::deciders_for, research_questions, ResearchRequest, ResearchResponse, ResearchSettings,
};
use crate::semantic::{ModelStatus, Semantic};

/// What the core needs to know, whichever way it is reached.
#[derive(Debug, Clone)]
pub struct CoreConfig {
    pub brain: BrainArgs,
    pub research: ResearchSettings,
    pub knowledge: knowledge::Settings,
    /// The semantic model's folder for the long-running ways in; `None`:
    /// lexical only.
    pub model_dir: Option<std::path::PathBuf>,
}

impl CoreConfig {
    /// For commands that only read: research and write-back as by default.
    pub fn reading(brain: BrainArgs) -> CoreConfig {
        CoreConfig {
            brain,
            research: ResearchSettings::default(),
            knowledge: knowledge::Settings::default(),
            model_dir: None,
        }
    }
}

/// A cheap, cloneable handle on one brain and its use cases.
#[derive(Clone)]
pub struct Noggin {
    inner: Arc<Inner>,
}

struct Inner {
    index: Index,
    knowledge: Knowledge,
    research: ResearchSettings,
    /// Each session's latest research, as the card shows it.
    card_log: CardLog,
    /// Follows edits while a long-running way in (serve, mcp) is up; `None`
    /// for one-shot commands.
    watcher: Option<Watcher>,
    /// Sessions' working context, for the long-running ways in; one-shot
    /// commands read it on their own (`noggin context`).
    sessions: Option<SessionStore>,
    max_note_bytes: u64,
    started: Instant,
    /// The local semantic model and the passages' vectors (live ways in
    /// only; off for one-shot commands).
    semantic: Semantic,
}

/// `search`: a query and its filters.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[schemars(transform = q_is_required)]
pub struct SearchRequest {
    /// What to look for (1 to 1000 characters).
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_QUERY_CHARS))]
    pub q: String,
    /// Notes to return, 1 to 100 (default 10).
    #[serde(default, deserialize_with = "any_limit")]
    #[schemars(range(min = 1, max = MAX_SEARCH_LIMIT))]
    pub limit: Option<usize>,
    /// Only notes under this folder of the brain.
    #[serde(default)]
    pub folder: Option<String>,
    /// Only notes with this tag.
    #[serde(default)]
    pub tag: Option<String>,
}

/// Marks `fields` required in a request's schema (MCP's tool schemas): a
/// serde default lets a missing one reach the check that names it (as
/// `empty-query`), which makes schemars call it optional.
fn require_fields(schema: &mut schemars::Schema, fields: &[&str]) {
    let object = schema.ensure_object();
    if let Some(properties) = object.get_mut("properties").and_then(|p| p.as_object_mut()) {
        for field in fields {
            if let Some(property) = properties.get_mut(*field).and_then(|p| p.as_object_mut()) {
                property.remove("default");
                // Nor is `null` a value of it.
                if let Some(types) = property.get_mut("type").and_then(|t| t.as_array_mut()) {
                    types.retain(|t| t != "null");
                    if let [only] = types.as_slice() {
                        let only = only.clone();
                        property.insert("type".into(), only);
                    }
                }
            }
        }
    }
    let required = object
        .entry("required")
        .or_insert_with(|| serde_json::Value::Array(Vec::new()));
    if let Some(required) = required.as_array_mut() {
        for field in fields {
            if !required.iter().any(|r| r == field) {
                required.push(serde_json::Value::from(*field));
            }
        }
    }
}

impl RememberRequest {
    /// Checks the prompt and the answers, before anything is opened.
    pub fn validate(&self) -> Result<(), knowledge::Error> {
        let given: Vec<knowledge::Answer> = self.qa.iter().cloned().map(Into::into).collect();
        knowledge::check(self.prompt.as_deref().unwrap_or_default(), &given).map(|_| ())
    }
}

impl From<QuestionAnswer> for knowledge::Answer {
    fn from(qa: QuestionAnswer) -> Self {
        knowledge::Answer {
            question: qa.question,
            answer: qa.answer,
            source: qa.source,
        }
    }
}

fn q_is_required(schema: &mut schemars::Schema) {
    require_fields(schema, &["q"]);
}

fn prompt_is_required(schema: &mut schemars::Schema) {
    require_fields(schema, &["prompt"]);
}

impl SearchRequest {
    /// Checks the query and the limit, before anything is opened.
    pub fn validate(&self) -> Result<(), Error> {
        let q = self.q.trim();
        if q.is_empty() {
            return Err(Error::invalid("empty-query", "the search query is empty"));
        }
        if q.chars().count() > MAX_QUERY_CHARS {
            return Err(Error::invalid(
                "query-too-long",
                format!("the search query is over {MAX_QUERY_CHARS} characters"),
            ));
        }
        let limit = self.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
        if !(1..=MAX_SEARCH_LIMIT).contains(&limit) {
            return Err(Error::invalid(
                "invalid-limit",
                format!("limit must be between 1 and {MAX_SEARCH_LIMIT}"),
            ));
        }
        Ok(())
    }
}

/// A `limit` that is not a whole number ("abc", "-1", 2.5) reads as 0, so
/// that it is refused as `invalid-limit` like any other limit out of range
/// rather than as a query that cannot be read.
fn any_limit<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Given {
        Number(usize),
        Text(String),
        Null(()),
        Other(serde::de::IgnoredAny),
    }
    Ok(match Given::deserialize(d)? {
        Given::Number(n) => Some(n),
        Given::Text(text) => Some(text.trim().parse().unwrap_or(0)),
        Given::Null(()) => None,
        Given::Other(_) => Some(0),
    })
}

/// The notes found, best first: one hit per note.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SearchResults {
    pub hits: Vec<Hit>,
    /// True when noggin was still bringing its index up to date with the
    /// brain after it started, as the search began: a note not found yet may
    /// be found once that is done.
    pub indexing: bool,
}

/// `remember`: the user's answers to the questions about a request. A
/// misspelt field is refused rather than ignored: an answer under
/// `"qustion"` would otherwise be skipped as empty, and a `"sesion"` lost.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = prompt_is_required)]
pub struct RememberRequest {
    /// The request the answers clarify; it names the note.
    #[serde(default)]
    #[schemars(length(min = 1, max = crate::limits::MAX_PROMPT_CHARS))]
    pub prompt: Option<String>,
    #[schemars(length(min = 1, max = crate::limits::MAX_ANSWERS))]
    pub qa: Vec<QuestionAnswer>,
    /// Notes are kept per prompt and day; the session also records what the
    /// user confirmed in its working context.
    #[serde(default)]
    pub session: Option<String>,
}

/// One question and the user's answer to it; both must be given (an empty
/// one is skipped with a reason).
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionAnswer {
    /// The question as it was asked (at most 500 characters).
    #[schemars(length(max = crate::limits::MAX_QUESTION_CHARS))]
    pub question: String,
    /// The user's answer, in their words (at most 10,000 characters; one
    /// shorter than `--min-answer-chars`, 20 by default, is skipped as
    /// `too-short`).
    #[schemars(length(max = crate::limits::MAX_ANSWER_CHARS))]
    pub answer: String,
    /// Who answered; `self-research` answers are never saved.
    #[serde(default)]
    pub source: Option<String>,
}

/// What `remember` did, and whether the saved notes are searchable yet.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Remembered {
    #[serde(flatten)]
    pub outcome: Outcome,
    /// True when every saved note is searchable now (or nothing was saved).
    pub indexed: bool,
    /// Why a saved note is not searchable yet, when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_indexed_because: Option<String>,
}

/// One note: its markdown source and metadata.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct NoteView {
    pub path: String,
    pub title: String,
    pub tags: Vec<String>,
    pub aliases: Vec<String>,
    /// The note's own date (`YYYY-MM-DD`), from frontmatter or file name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// RFC 3339.
    pub modified: String,
    pub size: u64,
    /// The rendered page of the note.
    pub link: String,
    /// The markdown source, frontmatter included.
    pub source: String,
}

/// A note as read from disk.
pub struct LoadedNote {
    pub file: NoteFile,
    pub source: String,
}

/// What noggin holds and how it is doing.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Status {
    pub version: String,
    /// False when the index could not be updated (see `commit_error`) or
    /// the brain could not be read (see `brain_error`): searches then miss
    /// what changed since; or when the session store cannot be used (see
    /// `session_store_error`).
    pub healthy: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub brain_error: Option<String>,
    /// Why the session store cannot be used (its file damaged): session
    /// requests answer 503 with the same message meanwhile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_store_error: Option<String>,
    pub brain: String,
    pub data_dir: String,
    pub notes: usize,
    pub sections: usize,
    pub indexing: bool,
    pub last_reconcile: Option<ReconcileReport>,
    pub last_commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebuilt_because: Option<String>,
    pub watcher: WatchState,
    pub index_bytes: u64,
    pub uptime_secs: u64,
    /// The deciders research tries, in order (`llm`, then `local`).
    pub deciders: Vec<String>,
    /// Which local decider scores candidates: `prior` or `learned`.
    pub local_decider: crate::research::DeciderKind,
    /// The confidence the local decider needs to call a question answered.
    pub answer_threshold: f32,
    /// The semantic model in use, if any, and how far embedding is.
    pub model: ModelStatus,
}

impl Noggin {
    /// For the long-running ways in (serve, mcp): owns the index, follows
    /// the brain and starts the first reconcile in the background, so that
    /// searches work meanwhile.
    pub fn open_live(
        config: &CoreConfig,
        watch: WatchMode,
        poll_interval: Duration,
    ) -> anyhow::Result<Noggin> {
        let index = open_writer_waiting(config)?;
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
        let watcher = watch_brain(index.brain(), watch, poll_interval, sink);
        // What `noggin remember` and the like tell the user: whether (and
        // how soon) this process indexes what they write.
        index.declare_owner(match watch {
            WatchMode::Auto => Follows::Events,
            WatchMode::Poll => Follows::Polling(poll_interval.as_millis() as u64),
            WatchMode::Off => Follows::Nothing,
        });
        index.request_reconcile()?;
        let sessions = SessionStore::open(index.data_dir())?;
        let semantic = Semantic::start(&index, config.model_dir.clone());
        crate::memory::give_back_freed_memory();
        Ok(Noggin::with_index(
            config,
            index,
            Some(watcher),
            Some(sessions),
            semantic,
        ))
    }

    /// For one-shot commands: the index's writer when it is free (brought up
    /// to date first when `reconcile`), else a read-only view of the index a
    /// running server keeps up to date.
    pub fn open_once(config: &CoreConfig, reconcile: bool) -> anyhow::Result<Noggin> {
        let brain = &config.brain;
        let index = match Index::open(brain.index_options(false)) {
            Ok(index) => {
                if reconcile {
                    index.reconcile_blocking(None)?;
                }
                index
            }
            // A running server owns the writer: use what it has indexed.
            Err(crate::index::Error::Locked(_)) => Index::open(brain.index_options(true))?,
            // A data folder this user cannot write (a read-only mount, a
            // snapshot): its index is searched as it is.
            Err(crate::index::Error::DataDir { source, .. })
                if matches!(
                    source.kind(),
                    std::io::ErrorKind::ReadOnlyFilesystem | std::io::ErrorKind::PermissionDenied
                ) =>
            {
                tracing::warn!(error = %source, "the data folder cannot be written: searching its index as it is, without bringing it up to date");
                Index::open(brain.index_options(true))?
            }
            Err(error) => {
                return Err(error)
                    .with_context(|| format!("cannot open the index of {:?}", brain.brain))
            }
        };
        let semantic = Semantic::start(&index, None);
        Ok(Noggin::with_index(config, index, None, None, semantic))
    }

    fn with_index(
        config: &CoreConfig,
        index: Index,
        watcher: Option<Watcher>,
        sessions: Option<SessionStore>,
        semantic: Semantic,
    ) -> Noggin {
        let knowledge = Knowledge::new(index.brain(), config.knowledge.clone());
        Noggin {
            inner: Arc::new(Inner {
                index,
                knowledge,
                research: config.research.clone(),
                card_log: CardLog::default(),
                watcher,
                sessions,
                max_note_bytes: config.brain.max_note_bytes,
                started: Instant::now(),
                semantic,
            }),
        }
    }

    /// Finishes before the process exits, once no request is left: the
    /// session store's WAL goes into `sessions.sqlite`, so the file alone
    /// holds every session. A failure is logged; the process stops anyway.
    pub async fn close(&self) {
        if let Some(store) = &self.inner.sessions {
            match store.checkpoint().await {
                Ok(()) => {}
                // Logged when it appeared.
                Err(error) if error.is_store_problem() => {}
                Err(error) => {
                    tracing::error!(%error, "cannot checkpoint the session store at shutdown")
                }
            }
        }
    }

    /// The semantic model and vectors (e.g. for a decider's semantic score).
    pub fn semantic(&self) -> &Semantic {
        &self.inner.semantic
    }

    pub fn index(&self) -> &Index {
        &self.inner.index
    }

    pub fn brain(&self) -> &Path {
        self.inner.index.brain()
    }

    /// The latest research of each session, for the card.
    pub fn card_log(&self) -> &CardLog {
        &self.inner.card_log
    }

    /// The session store, when this way in keeps sessions (serve, mcp).
    pub fn sessions(&self) -> Option<&SessionStore> {
        self.inner.sessions.as_ref()
    }

    pub fn knowledge_settings(&self) -> &knowledge::Settings {
        self.inner.knowledge.settings()
    }

    pub fn research_settings(&self) -> &ResearchSettings {
        &self.inner.research
    }

    /// Brings the index up to date with the brain; needs the writer.
    pub fn reindex(&self, progress: Option<Progress>) -> anyhow::Result<ReconcileReport> {
        if self.inner.index.is_read_only() {
            let brain = self.brain();
            match crate::index::holder(self.inner.index.data_dir()) {
                Some(held) if held.follows == Follows::Nothing => anyhow::bail!(
                    "{held} holds the index of {brain:?} and does not follow the brain \
                     (--watch off): stop it, or start it again, to index the brain"
                ),
                Some(held) if held.follows.is_live() => {
                    anyhow::bail!("{held} holds the index of {brain:?} and keeps it up to date")
                }
                Some(held) => anyhow::bail!(
                    "{held} is writing the index of {brain:?}; run this again when it is done"
                ),
                None => anyhow::bail!(
                    "the index of {brain:?} cannot be written: its data folder is read-only, \
                     or another noggin process is writing it"
                ),
            }
        }
        Ok(self.inner.index.reconcile_blocking(progress)?)
    }

    /// Ranked notes for a query.
    pub async fn search(&self, request: SearchRequest) -> Result<SearchResults, Error> {
        request.validate()?;
        let q = request.q.trim().to_string();
        let limit = request.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
        let filter = SearchFilter {
            folder: request.folder.filter(|f| !f.trim().is_empty()),
            tag: request.tag.filter(|t| !t.trim().is_empty()),
            kind: None,
        };
        let index = self.inner.index.clone();
        // Read before searching: the reader has every commit of a reconcile
        // by the time it reports itself done.
        let indexing = index.catching_up();
        let hits = tokio::task::spawn_blocking(move || index.search(&q, &filter, limit))
            .await
            .context("the search task failed")??;
        Ok(SearchResults { hits, indexing })
    }

    /// Answers the questions the brain answers, leaves the rest open, and
    /// records the research for the card.
    pub async fn research(&self, request: ResearchRequest) -> Result<ResearchResponse, Error> {
        request.validate()?;
        let indexing = self.inner.index.catching_up();
        let mut response = if self.inner.index.brain().is_dir() {
            let corpus: Arc<dyn crate::index::Corpus> = Arc::new(self.inner.index.clone());
            research_questions(corpus, &self.inner.research, &request).await
        } else {
            // The brain folder moved away or was deleted: its notes cannot
            // be opened, so nothing is answered or cited from them.
            crate::research::all_open(&request)
        };
        response.indexing = indexing;
        if let (Some(session), Some(store)) = (&request.session, &self.inner.sessions) {
            // The session's open questions; the research stands either way.
            let answered = response
                .answered
                .iter()
                .map(|a| a.question.clone())
                .collect();
            let open = response
                .unanswered
                .iter()
                .map(|u| u.question.clone())
                .collect();
            if let Err(error) = store.record_research(session.clone(), answered, open).await {
                tracing::error!(%error, "cannot record the research in its session");
            }
        }
        self.inner
            .card_log
            .record(request.session, request.prompt, response.clone());
        Ok(response)
    }

    /// Writes the user's answers into the brain, then indexes the note so
    /// that the next research finds them (read-your-writes) when this
    /// process owns the index.
    pub async fn remember(&self, request: RememberRequest) -> Result<Remembered, Error> {
        if let Some(session) = &request.session {
            crate::context::validate_session_id(session)
                .map_err(|e| Error::invalid("invalid-session", e.to_string()))?;
        }
        let session = request.session.clone();
        let given: Vec<knowledge::Answer> = request.qa.into_iter().map(Into::into).collect();
        let prompt = request.prompt.unwrap_or_default();
        let outcome = self.inner.knowledge.remember(&prompt, &given).await?;
        let paths: Vec<String> = outcome.saved.iter().map(|s| s.path.clone()).collect();
        let not_indexed_because = if paths.is_empty() {
            None
        } else if self.inner.index.is_read_only() {
            Some(not_indexed_here(self.inner.index.data_dir()))
        } else {
            // The answers are safely on disk; if indexing fails the watcher
            // or the next reconcile picks the note up, so the save stands.
            match self.inner.index.sync_paths(paths.clone()).await {
                // A note over the size limit is on disk, and no note of the
                // index.
                Ok(()) => paths.iter().find_map(|path| {
                    let size = std::fs::metadata(self.brain().join(path)).ok()?.len();
                    (size > self.inner.max_note_bytes).then(|| {
                        format!(
                            "{path} is {size} bytes, over the {} a note may have \
                             (--max-note-bytes)",
                            self.inner.max_note_bytes
                        )
                    })
                }),
                Err(error) => {
                    tracing::error!(%error, "a saved note could not be indexed right away");
                    Some(format!("indexing failed: {error}"))
                }
            }
        };
        // The card stops showing them as open: what was saved, and what the
        // note already held as given.
        let answered: Vec<String> = outcome
            .saved
            .iter()
            .flat_map(|s| s.questions.iter().cloned())
            .chain(
                outcome
                    .skipped
                    .iter()
                    .filter(|s| s.reason == knowledge::SkipReason::Duplicate)
                    .map(|s| s.question.clone()),
            )
            .collect();
        self.inner.card_log.answered(session.as_deref(), &answered);
        if let (Some(session), Some(store)) = (session, &self.inner.sessions) {
            let confirmed: Vec<Confirmed> = outcome
                .saved
                .iter()
                .flat_map(|s| &s.questions)
                .filter_map(|q| given.iter().find(|a| &a.question == q))
                .map(|a| Confirmed {
                    question: a.question.clone(),
                    answer: a.answer.clone(),
                })
                .collect();
            if !confirmed.is_empty() {
                // The answers are saved in the brain either way.
                if let Err(error) = store.record_answers(session, confirmed).await {
                    tracing::error!(%error, "cannot record the answers in their session");
                }
            }
        }
        Ok(Remembered {
            outcome,
            indexed: not_indexed_because.is_none(),
            not_indexed_because,
        })
    }

    /// Reads the note at `rel_path` if it is one the brain serves: relative,
    /// without `..` or hidden parts, a note, inside the brain. Anything else
    /// is not found, so a caller cannot tell a file outside the brain from
    /// one that does not exist.
    ///
    /// A note of the brain that cannot be read (no permission) is an error
    /// that says so: it is known to be a note of the brain by then.
    pub fn load_note(&self, rel_path: &str) -> Result<Option<LoadedNote>, String> {
        if rel_path.contains('\0')
            || rel_path.starts_with('/')
            || rel_path.chars().count() > MAX_NOTE_PATH_CHARS
        {
            return Ok(None);
        }
        let file = match stat_note(self.brain(), rel_path, self.inner.max_note_bytes) {
            Ok(Some(file)) => file,
            Ok(None) => return Ok(None),
            Err(error) => {
                tracing::debug!(%error, "not serving a note");
                return Ok(None);
            }
        };
        match read_note_text(&file) {
            Ok(source) => Ok(Some(LoadedNote { file, source })),
            Err(error) => {
                tracing::warn!(%error, "cannot read a note");
                // Named by its path in the brain, with the system's reason.
                let why = match error {
                    crate::brain::Error::Io { source, .. } => source.to_string(),
                    other => other.to_string(),
                };
                Err(format!("noggin cannot read {}: {why}", file.rel_path))
            }
        }
    }

    /// One note's source and metadata.
    pub async fn read_note(&self, rel_path: String) -> Result<NoteView, Error> {
        let app = self.clone();
        let note = tokio::task::spawn_blocking(move || app.load_note(&rel_path))
            .await
            .context("the note reading task failed")?;
        self.note_view(note)
    }

    /// The note `name` names: its path, or else the note a wikilink of that
    /// name leads to (`[[Deploy]]`, `Runbooks/Deploy`, `./Deploy.md`, a
    /// note's title), as a model that read a link asks for it.
    pub async fn read_note_named(&self, name: String) -> Result<NoteView, Error> {
        let app = self.clone();
        let note = tokio::task::spawn_blocking(move || {
            if let Some(note) = app.load_note(&name)? {
                return Ok(Some(note));
            }
            let target = link_target(&name);
            if target.is_empty() {
                return Ok(None);
            }
            let path = NoteNames::scan(app.brain(), app.inner.max_note_bytes)
                .resolve(target, "")
                .or_else(|| app.inner.index.note_titled(target));
            match path {
                Some(path) => app.load_note(&path),
                None => Ok(None),
            }
        })
        .await
        .context("the note reading task failed")?;
        self.note_view(note)
    }

    fn note_view(&self, note: Result<Option<LoadedNote>, String>) -> Result<NoteView, Error> {
        let note = note
            .map_err(|message| Error::Unavailable {
                code: "note-unreadable",
                message,
            })?
            .ok_or_else(|| Error::NotFound("no such note in the brain".into()))?;
        let parsed = parse_note(&note.file.rel_path, &note.source);
        Ok(NoteView {
            link: note_link(&note.file.rel_path),
            path: note.file.rel_path,
            title: parsed.title,
            tags: parsed.tags,
            aliases: parsed.aliases,
            created: parsed.created.map(|d| d.to_string()),
            modified: rfc3339(note.file.mtime_ns / 1_000_000_000),
            size: note.file.size,
            source: note.source,
        })
    }

    /// The max size of a note this brain indexes and serves.
    pub fn max_note_bytes(&self) -> u64 {
        self.inner.max_note_bytes
    }

    /// [`Noggin::status`] after looking at the session store's file again:
    /// what `/v1/status` and MCP's `status` answer.
    pub async fn current_status(&self) -> Status {
        if let Some(sessions) = &self.inner.sessions {
            sessions.recheck().await;
        }
        self.status()
    }

    /// What noggin holds and how it is doing.
    pub fn status(&self) -> Status {
        let index = &self.inner.index;
        let mut held = index.status();
        // A brain moved away or deleted while noggin runs may not wake the
        // watcher: look (one stat).
        if !index.brain().is_dir() {
            held.brain_error =
                Some(crate::brain::Error::NotAFolder(index.brain().to_path_buf()).to_string());
        }
        let watcher = match &self.inner.watcher {
            Some(watcher) => watcher.state(),
            None => WatchState::off(),
        };
        let session_store_error = self.inner.sessions.as_ref().and_then(|s| s.problem());
        Status {
            version: env!("CARGO_PKG_VERSION").to_string(),
            healthy: held.commit_error.is_none()
                && held.brain_error.is_none()
                && session_store_error.is_none(),
            commit_error: held.commit_error,
            brain_error: held.brain_error,
            session_store_error,
            brain: index.brain().display().to_string(),
            data_dir: index.data_dir().display().to_string(),
            notes: held.notes,
            sections: held.sections,
            indexing: held.indexing,
            last_reconcile: held.last_reconcile,
            last_commit: held.last_commit,
            rebuilt_because: held.rebuilt_because,
            watcher,
            index_bytes: index.size_bytes(),
            uptime_secs: self.inner.started.elapsed().as_secs(),
            deciders: deciders_for(&self.inner.research)
                .iter()
                .map(|d| d.name().to_string())
                .collect(),
            local_decider: self.inner.research.decider,
            answer_threshold: self.inner.research.threshold,
            model: self.inner.semantic.status(),
        }
    }
}

/// Why a process without the index's writer did not index a note, in words
/// that are true: who holds the index and when the note will be indexed.
fn not_indexed_here(data_dir: &Path) -> String {
    match crate::index::holder(data_dir) {
        Some(held) => match held.follows {
            Follows::Events => {
                format!("{held} holds the index; its watcher indexes the note within a second")
            }
            Follows::Polling(ms) => format!(
                "{held} holds the index; it looks for changed notes every {ms} ms and \
                 indexes the note then"
            ),
            Follows::Nothing => format!(
                "{held} holds the index and does not follow the brain (--watch off): the \
                 note is indexed when it starts again"
            ),
            Follows::Once => format!(
                "{held} is writing the index; the next `noggin index` or `noggin serve` \
                 indexes the note"
            ),
        },
        None => "another noggin process was writing the index; the next `noggin index` or \
                 `noggin serve` indexes the note"
            .to_string(),
    }
}

/// How long a starting server waits for a one-shot command (`noggin
/// remember`, `noggin index`) that holds the index to finish with it.
const OWNER_WAIT: Duration = Duration::from_secs(30);

/// How long it waits for a server (`serve`, `mcp`) that holds the index: one
/// that is stopping (being restarted) lets go within moments, one that runs
/// never does.
const LIVE_OWNER_WAIT: Duration = Duration::from_secs(2);

/// Opens the index as its writer; while another process holds it, waits up
/// to [`OWNER_WAIT`] for a one-shot command (run a moment before the server
/// starts, it holds it only briefly) and [`LIVE_OWNER_WAIT`] for a server.
/// Then the error says who keeps it.
fn open_writer_waiting(config: &CoreConfig) -> anyhow::Result<Index> {
    let started = Instant::now();
    let mut told = false;
    loop {
        match Index::open(config.brain.index_options(false)) {
            Err(crate::index::Error::Locked(path)) => {
                let held = crate::index::holder(&path);
                let live = held.as_ref().is_some_and(|h| h.follows.is_live());
                let wait = if live { LIVE_OWNER_WAIT } else { OWNER_WAIT };
                if started.elapsed() >= wait {
                    let hint = match &held {
                        Some(h) if h.command == "serve" => "an MCP client can use its /mcp",
                        _ => "to serve several MCP clients, run `noggin serve` and point them at its /mcp",
                    };
                    let who = held.map_or("another noggin process".to_string(), |h| h.to_string());
                    anyhow::bail!(
                        "{who} holds the index in {path:?}: one noggin process serves a brain \
                         ({hint})"
                    );
                }
                if !told && !live {
                    tracing::info!(path = %path.display(), "another noggin process holds the index; waiting for it");
                    told = true;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            result => return Ok(result?),
        }
    }
}

/// The address of a note's rendered page.
pub fn note_link(rel_path: &str) -> String {
    format!("/notes/{}", encoded_path(rel_path))
}

/// A note's path as it stands in a URI: each segment percent-encoded (all
/// but letters, digits and `-_.~`), the slashes kept.
pub fn encoded_path(rel_path: &str) -> String {
    use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
    const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~');
    let segments: Vec<String> = rel_path
        .split('/')
        .map(|s| utf8_percent_encode(s, SEGMENT).to_string())
        .collect();
    segments.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What MCP clients build their calls from says what the tools refuse.
    #[test]
    fn the_schemas_require_what_the_use_cases_refuse_without() {
        let search = serde_json::to_value(schemars::schema_for!(SearchRequest)).unwrap();
        assert_eq!(search["required"], serde_json::json!(["q"]));
        assert!(search["properties"]["q"].get("default").is_none());
        assert_eq!(search["properties"]["q"]["minLength"], 1);
        let remember = serde_json::to_value(schemars::schema_for!(RememberRequest)).unwrap();
        let required = remember["required"].as_array().unwrap();
        assert!(required.iter().any(|r| r == "prompt") && required.iter().any(|r| r == "qa"));
        assert_eq!(remember["properties"]["prompt"]["type"], "string");
    }
}
