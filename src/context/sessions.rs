//! The durable session store: SQLite (WAL) in the data folder, next to the
//! index, at `<data-dir>/sessions.sqlite`.
//!
//! Each session is one row holding its folded [`WorkingContext`] as JSON and
//! a version that grows with every change; the events themselves go to a log
//! table (the last [`MAX_LOGGED_EVENTS`] per session) in the same
//! transaction. One writer thread owns the writing connection: callers send
//! it jobs, it commits all that are waiting in one transaction (group
//! commit, each job in its own savepoint) with `synchronous = FULL`, and only
//! then answers each. So an acknowledged event is on disk, concurrent
//! writers to one session are serialized without losing anything, and they
//! share an fsync rather than queue for one each.
//!
//! Reads use a second connection behind a std mutex, taken only for
//! synchronous SQLite calls on the blocking pool, never across an `.await`;
//! WAL lets them run beside the writer. Readers in other processes (the
//! `noggin context` command) open their own read-only connection.
//!
//! The store follows its path, not the file it opened: before each commit
//! the writer compares the open file's identity (device and inode) with the
//! path's, one `stat`, and when the file was deleted (`rm -rf .noggin`) or
//! replaced (a backup restored) it opens the one at the path again, making
//! the store and its folder again if they are gone; readers do the same
//! through the writer. A commit whose file left the path while it was
//! written is not acknowledged. So an event acknowledged is in the file at
//! the path. When the store cannot be opened again, requests get
//! [`Error::Unavailable`] until it can.
//!
//! A file SQLite finds damaged, no database at all, another program's
//! database or a folder in its place is the user's: the store writes nothing
//! into it and every session request says so ([`Error::Damaged`]), as does
//! the status ([`SessionStore::problem`]); the rest of noggin works. Moved
//! aside, it is followed by a new, empty store at the next request.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use std::sync::mpsc;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use serde::Serialize;
use tokio::sync::oneshot;

use super::events::Event;
use super::state::{Confirmed, Note, WorkingContext};
use super::{validate_session_id, Error, MAX_LOGGED_EVENTS};

/// File name of the store inside the data folder.
pub const STORE_FILE: &str = "sessions.sqlite";
/// How long a statement waits for another connection's lock.
const BUSY_TIMEOUT_MS: u64 = 10_000;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    version INTEGER NOT NULL,
    events INTEGER NOT NULL,
    state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    session TEXT NOT NULL,
    seq INTEGER NOT NULL,
    at_ms INTEGER NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (session, seq)
);
-- The most recently updated sessions without reading them all (the card
-- lists a few of them), and every session's summary without its state.
CREATE INDEX IF NOT EXISTS sessions_by_update ON sessions (updated_ms DESC, id, version, events);
";

/// One stored session.
#[derive(Debug, Clone, Serialize)]
pub struct Session {
    pub id: String,
    /// Milliseconds since the epoch when it was created; with `version` it
    /// makes the ETag, so a deleted and re-created session never matches an
    /// old one.
    pub created_ms: i64,
    /// RFC 3339.
    pub updated: String,
    /// Grows with every change.
    pub version: i64,
    /// Events received over its life (a research or answers recorded in
    /// it count as one each).
    pub events: i64,
    pub context: WorkingContext,
}

/// A session as `GET /v1/sessions` lists it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SessionSummary {
    pub id: String,
    pub updated: String,
    pub version: i64,
    pub events: i64,
}

/// The most recently updated sessions, and how many there are in all.
#[derive(Debug, Clone, Default)]
pub struct RecentSessions {
    /// Most recently updated first.
    pub ids: Vec<String>,
    /// Sessions the store holds.
    pub total: usize,
}

/// What storing a request's events did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Appended {
    pub session: String,
    /// Events stored by this request.
    pub accepted: usize,
    pub version: i64,
    pub events: i64,
    /// Things the caller should know (a path dropped, a failure cut, …).
    pub notes: Vec<Note>,
}

/// What a change did: the session's new version, its event count, and the
/// notes for the caller.
type ChangeOutcome = Result<(i64, i64, Vec<Note>), Error>;

/// A change to one session, run by the writer thread.
type Change = Box<dyn FnOnce(&mut WorkingContext, &str) -> Vec<Note> + Send>;

/// Work for the writer thread, with where to send the outcome.
enum Job {
    Change {
        id: String,
        raw: Vec<String>,
        change: Change,
        reply: oneshot::Sender<ChangeOutcome>,
    },
    Delete {
        id: String,
        reply: oneshot::Sender<Result<bool, Error>>,
    },
    /// Moves what the WAL holds into the main file and empties the WAL
    /// (`wal_checkpoint(TRUNCATE)`), after the jobs committed with it.
    Checkpoint {
        reply: oneshot::Sender<Result<(), Error>>,
    },
    /// Makes sure the store is open at its path (a reader found the file it
    /// had open gone or replaced).
    Check {
        reply: oneshot::Sender<Result<(), Error>>,
    },
}

/// Most jobs the writer commits together.
const MAX_JOBS_PER_COMMIT: usize = 256;

/// A cloneable handle on the store.
#[derive(Clone)]
pub struct SessionStore {
    path: Arc<PathBuf>,
    // Reads: a std mutex held only for synchronous SQLite calls on the
    // blocking pool, never across an `.await`. WAL lets it read while the
    // writer writes.
    reader: Arc<Mutex<Reader>>,
    /// The writer thread's queue; `None` for a read-only store.
    writer: Option<mpsc::Sender<Job>>,
    /// Counts committed changes, so the card can follow them.
    changed: Arc<tokio::sync::watch::Sender<u64>>,
    /// What is wrong with the store, if anything; shared with the writer.
    health: Arc<Health>,
}

/// The reading connection and the file it has open; no connection while
/// the store cannot be opened.
struct Reader {
    conn: Option<Connection>,
    file: Option<FileId>,
}

/// A file's identity: its device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    /// The identity of the file at `path`; `None` when there is none.
    fn of(path: &Path) -> Option<FileId> {
        let meta = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(FileId {
                dev: meta.dev(),
                ino: meta.ino(),
            })
        }
        // Without inodes one file at the path looks like any other.
        #[cfg(not(unix))]
        {
            let _ = meta;
            Some(FileId { dev: 0, ino: 0 })
        }
    }
}

/// Why the store cannot be used as it is.
#[derive(Debug, Clone, PartialEq)]
enum Problem {
    /// The file is damaged, no database, another program's or a folder;
    /// the damage stays with that file.
    Damaged {
        file: Option<FileId>,
        reason: String,
    },
    /// The store cannot be opened at its path (its folder cannot be made
    /// again, …); every request tries again.
    Unavailable { reason: String },
}

impl Problem {
    /// The problem an error opening the store shows.
    fn of(error: Error, file: Option<FileId>) -> Problem {
        match error {
            Error::Damaged { reason, .. } => Problem::Damaged { file, reason },
            Error::Unavailable { reason, .. } => Problem::Unavailable { reason },
            Error::Store { source, .. } => Problem::Unavailable {
                reason: source.to_string(),
            },
            other => Problem::Unavailable {
                reason: other.to_string(),
            },
        }
    }

    /// The error a request gets while the problem lasts.
    fn error(&self, path: &Path) -> Error {
        match self {
            Problem::Damaged { reason, .. } => Error::Damaged {
                path: path.to_path_buf(),
                reason: reason.clone(),
            },
            Problem::Unavailable { reason } => Error::Unavailable {
                path: path.to_path_buf(),
                reason: reason.clone(),
            },
        }
    }
}

/// The store's problem, if any, shared by its handles and its writer. It
/// is logged when it appears, once, rather than at every request it fails.
#[derive(Default)]
struct Health {
    // A std mutex: held only to look at or swap the value.
    problem: Mutex<Option<Problem>>,
}

impl Health {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Problem>> {
        // Swapping a value leaves nothing half-done for a panic to poison.
        self.problem.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn get(&self) -> Option<Problem> {
        self.lock().clone()
    }

    fn set(&self, path: &Path, problem: Problem) {
        let mut current = self.lock();
        if current.as_ref() != Some(&problem) {
            let error = problem.error(path);
            tracing::error!(%error, "the session store cannot be used; session requests answer 503");
            *current = Some(problem);
        }
    }

    /// The store is open at its path, a new file: what was wrong is over.
    fn clear(&self, path: &Path) {
        if self.lock().take().is_some() {
            tracing::info!(path = %path.display(), "the session store is usable again");
        }
    }

    /// Records the damage an outcome shows, in the file `file`.
    fn note<T>(&self, path: &Path, file: Option<FileId>, outcome: &Result<T, Error>) {
        if let Err(Error::Damaged { reason, .. }) = outcome {
            self.set(
                path,
                Problem::Damaged {
                    file,
                    reason: reason.clone(),
                },
            );
        }
    }

    /// The error for writing into `file`, if it is known to be damaged.
    fn refusal(&self, path: &Path, file: Option<FileId>) -> Option<Error> {
        match &*self.lock() {
            Some(problem @ Problem::Damaged { file: damaged, .. })
                if file.is_some() && *damaged == file =>
            {
                Some(problem.error(path))
            }
            _ => None,
        }
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A reader never makes the file: the writer does, with its tables.
const READER_FLAGS: OpenFlags = OpenFlags::SQLITE_OPEN_READ_WRITE
    .union(OpenFlags::SQLITE_OPEN_NO_MUTEX)
    .union(OpenFlags::SQLITE_OPEN_URI);

/// Opens the store at `path` for writing, making it (and its folder) when
/// it is not there; returns the connection and the file it has open.
fn open_writing(data_dir: &Path, path: &Path) -> Result<(Connection, Option<FileId>), Error> {
    make_data_dir(data_dir)?;
    no_folder_at(path)?;
    let store_err = |source| Error::store(path, source);
    let conn = connect(path, OpenFlags::default())?;
    // Before anything is written: a file that is not ours stays as it is.
    check_ours(path, &conn)?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(store_err)?;
    // FULL: a commit is on disk before the event is acknowledged, not
    // only safe from a crash of this process.
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(store_err)?;
    conn.execute_batch(SCHEMA).map_err(store_err)?;
    // The file exists now (the schema made it if it was not there).
    Ok((conn, FileId::of(path)))
}

/// Refuses a folder (or anything but a file) at the store's path: SQLite
/// says no more than that it cannot open it.
fn no_folder_at(path: &Path) -> Result<(), Error> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => Err(Error::Damaged {
            path: path.to_path_buf(),
            reason: "it is a folder, not a file".into(),
        }),
        _ => Ok(()),
    }
}

/// Refuses a database that is not a session store: one with tables, none of
/// them `sessions`, is another program's. Reading its schema is also what
/// finds a file that is no database at all. An empty file, or one without
/// tables, becomes a store.
fn check_ours(path: &Path, conn: &Connection) -> Result<(), Error> {
    let tables = (|| {
        let mut statement = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
        let names = statement.query_map([], |row| row.get::<_, String>(0))?;
        names.collect::<rusqlite::Result<Vec<String>>>()
    })()
    .map_err(|source| Error::store(path, source))?;
    if tables.is_empty() || tables.iter().any(|t| t == "sessions") {
        return Ok(());
    }
    Err(Error::Damaged {
        path: path.to_path_buf(),
        reason: format!("it holds other tables: {}", tables.join(", ")),
    })
}

/// Makes the data folder when it is gone (deleted while noggin runs), as
/// the index does, with a `.gitignore` of `*` so git leaves it out. Only
/// the folder itself: a brain folder deleted is not made again.
fn make_data_dir(data_dir: &Path) -> Result<(), Error> {
    let unavailable = |reason: String| Error::Unavailable {
        path: data_dir.join(STORE_FILE),
        reason,
    };
    match std::fs::create_dir(data_dir) {
        Ok(()) => {
            if let Err(error) = crate::index::mark_ignored_by_git(data_dir) {
                tracing::warn!(path = %data_dir.display(), %error, "cannot mark the data folder for git to ignore");
            }
        }
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(error) => {
            return Err(unavailable(format!(
                "its folder {data_dir:?} is gone and cannot be made again: {error}"
            )))
        }
    }
    if !data_dir.is_dir() {
        return Err(unavailable(format!(
            "its folder's path {data_dir:?} holds something that is not a folder"
        )));
    }
    Ok(())
}

fn connect(path: &Path, flags: OpenFlags) -> Result<Connection, Error> {
    let store_err = |source| Error::store(path, source);
    let conn = Connection::open_with_flags(path, flags).map_err(store_err)?;
    conn.busy_timeout(std::time::Duration::from_millis(BUSY_TIMEOUT_MS))
        .map_err(store_err)?;
    Ok(conn)
}

impl SessionStore {
    /// Opens (or creates) the store in `data_dir` for reading and writing,
    /// and starts its writer thread. A store that cannot be opened (a
    /// damaged file, another program's) does not stop it: the store starts
    /// with that problem, which every session request and the status say.
    pub fn open(data_dir: &Path) -> Result<SessionStore, Error> {
        std::fs::create_dir_all(data_dir).map_err(|source| Error::DataDir {
            path: data_dir.to_path_buf(),
            source,
        })?;
        let path = data_dir.join(STORE_FILE);
        let health = Arc::new(Health::default());
        let opened = open_writing(data_dir, &path).and_then(|(conn, file)| {
            let reader = connect(&path, READER_FLAGS)?;
            Ok((conn, reader, file))
        });
        let (conn, reader) = match opened {
            Ok((conn, reader, file)) => (
                Some((conn, file)),
                Reader {
                    conn: Some(reader),
                    file,
                },
            ),
            Err(error) => {
                health.set(&path, Problem::of(error, FileId::of(&path)));
                (
                    None,
                    Reader {
                        conn: None,
                        file: None,
                    },
                )
            }
        };
        let changed = Arc::new(tokio::sync::watch::Sender::new(0));
        let (sender, jobs) = mpsc::channel();
        let writer = Writer {
            data_dir: data_dir.to_path_buf(),
            path: path.clone(),
            file: conn.as_ref().and_then(|(_, file)| *file),
            conn: conn.map(|(conn, _)| conn),
            changed: changed.clone(),
            health: health.clone(),
        };
        std::thread::Builder::new()
            .name("noggin-sessions".into())
            .spawn(move || writer.run(jobs))
            .map_err(|source| Error::DataDir {
                path: path.clone(),
                source,
            })?;
        Ok(SessionStore {
            path: Arc::new(path),
            reader: Arc::new(Mutex::new(reader)),
            writer: Some(sender),
            changed,
            health,
        })
    }

    /// Opens an existing store read-only (for the CLI beside a running
    /// server); `None` when there is no store yet.
    pub fn open_read_only(data_dir: &Path) -> Result<Option<SessionStore>, Error> {
        let path = data_dir.join(STORE_FILE);
        if !path.exists() {
            return Ok(None);
        }
        let file = FileId::of(&path);
        no_folder_at(&path)?;
        let conn = connect(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        check_ours(&path, &conn)?;
        Ok(Some(SessionStore {
            path: Arc::new(path),
            reader: Arc::new(Mutex::new(Reader {
                conn: Some(conn),
                file,
            })),
            writer: None,
            changed: Arc::new(tokio::sync::watch::Sender::new(0)),
            health: Arc::default(),
        }))
    }

    /// A receiver that changes after every committed change of this
    /// process (not of other processes).
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// How many changes this process has committed: what
    /// [`SessionStore::subscribe`] follows, read now.
    pub fn changes(&self) -> u64 {
        *self.changed.borrow()
    }

    /// Where the store lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What keeps the store from being used now (a damaged file, a folder
    /// that cannot be made again), for the status; `None` when nothing does.
    pub fn problem(&self) -> Option<String> {
        self.health
            .get()
            .map(|problem| problem.error(&self.path).to_string())
    }

    /// Looks at the store's file again when it is no longer the one read
    /// (moved aside, replaced, damaged by hand), so that [`problem`] says
    /// how the store is now rather than at the last session request.
    ///
    /// [`problem`]: SessionStore::problem
    pub async fn recheck(&self) {
        if self.writer.is_none() {
            return;
        }
        let read = self.reader.lock().unwrap_or_else(|e| e.into_inner()).file;
        // While the store cannot be used, each look tries it again (one
        // open that fails at the file's header, and writes nothing).
        if FileId::of(&self.path) != read || self.health.get().is_some() {
            // Any read opens the file at the path again and records what
            // it finds; its own outcome is in the health.
            let _ = self.recent(1).await;
        }
    }

    /// Runs a read on the reading connection, opened again first when the
    /// file it has open is no longer the one at the store's path (one
    /// `stat`); damage it finds is recorded.
    fn read<T>(&self, work: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, Error> {
        // Reads leave nothing half-done for a panic to poison.
        let mut reader = self.reader.lock().unwrap_or_else(|e| e.into_inner());
        // A read-only store (the CLI) lives as long as one command.
        if self.writer.is_some() && (reader.conn.is_none() || FileId::of(&self.path) != reader.file)
        {
            reader.conn = None;
            // The writer opens the store at its path, or says why it cannot.
            self.check_blocking()?;
            // Looked at before opening: a file replaced in between is
            // noticed at the next read.
            reader.file = FileId::of(&self.path);
            reader.conn = Some(connect(&self.path, READER_FLAGS)?);
        }
        let Some(conn) = reader.conn.as_ref() else {
            return Err(Error::Task("the store has no reading connection".into()));
        };
        let outcome = work(conn).map_err(|source| Error::store(&self.path, source));
        self.health.note(&self.path, reader.file, &outcome);
        outcome
    }

    /// Waits until the writer has the store open at its path.
    fn check_blocking(&self) -> Result<(), Error> {
        let (reply, outcome) = oneshot::channel();
        self.submit(Job::Check { reply })?;
        outcome
            .blocking_recv()
            .map_err(|_| Error::Task("the writer thread has stopped".into()))?
    }

    /// Runs a blocking store call on the blocking pool.
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(SessionStore) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || work(store))
            .await
            .map_err(|e| Error::Task(e.to_string()))?
    }

    /// Hands a job to the writer thread.
    fn submit(&self, job: Job) -> Result<(), Error> {
        let writer = self
            .writer
            .as_ref()
            .ok_or_else(|| Error::Task("the store was opened read-only".into()))?;
        writer
            .send(job)
            .map_err(|_| Error::Task("the writer thread has stopped".into()))
    }

    fn change_job(
        &self,
        id: &str,
        raw: Vec<String>,
        change: Change,
    ) -> Result<oneshot::Receiver<ChangeOutcome>, Error> {
        validate_session_id(id)?;
        let (reply, outcome) = oneshot::channel();
        self.submit(Job::Change {
            id: id.to_string(),
            raw,
            change,
            reply,
        })?;
        Ok(outcome)
    }

    /// Stores checked events in one transaction and waits until they are
    /// committed; the session is created on its first event. `raw` is each
    /// event's JSON, kept in the log. Not for async code (it blocks).
    pub fn append_blocking(
        &self,
        id: &str,
        events: &[Event],
        raw: &[String],
    ) -> Result<Appended, Error> {
        let accepted = events.len();
        let outcome = self.change_job(id, raw.to_vec(), apply_events(events.to_vec()))?;
        let (version, total, notes) = outcome
            .blocking_recv()
            .map_err(|_| Error::Task("the writer thread has stopped".into()))??;
        Ok(Appended {
            session: id.to_string(),
            accepted,
            version,
            events: total,
            notes,
        })
    }

    /// Stores checked events; answers once they are committed.
    pub async fn append(
        &self,
        id: String,
        events: Vec<Event>,
        raw: Vec<String>,
    ) -> Result<Appended, Error> {
        let accepted = events.len();
        let outcome = self.change_job(&id, raw, apply_events(events))?;
        let (version, total, notes) = outcome
            .await
            .map_err(|_| Error::Task("the writer thread has stopped".into()))??;
        Ok(Appended {
            session: id,
            accepted,
            version,
            events: total,
            notes,
        })
    }

    /// Records a research of the session (created if new).
    pub async fn record_research(
        &self,
        id: String,
        answered: Vec<String>,
        unanswered: Vec<String>,
    ) -> Result<(), Error> {
        let raw =
            serde_json::json!({"type": "research", "answered": answered, "unanswered": unanswered});
        let outcome = self.change_job(
            &id,
            vec![raw.to_string()],
            Box::new(move |context, _| {
                context.record_research(&answered, &unanswered);
                Vec::new()
            }),
        )?;
        outcome
            .await
            .map_err(|_| Error::Task("the writer thread has stopped".into()))??;
        Ok(())
    }

    /// Records answers the user confirmed in the session (created if new).
    pub async fn record_answers(&self, id: String, confirmed: Vec<Confirmed>) -> Result<(), Error> {
        let raw = serde_json::json!({"type": "answers", "confirmed": confirmed.len()});
        let outcome = self.change_job(
            &id,
            vec![raw.to_string()],
            Box::new(move |context, _| {
                context.record_answers(&confirmed);
                Vec::new()
            }),
        )?;
        outcome
            .await
            .map_err(|_| Error::Task("the writer thread has stopped".into()))??;
        Ok(())
    }

    fn decode(&self, state: &str) -> Result<WorkingContext, Error> {
        decode(&self.path, state)
    }

    /// One session, or `None`.
    pub fn get_blocking(&self, id: &str) -> Result<Option<Session>, Error> {
        let row: Option<(i64, i64, i64, i64, String)> = self.read(|conn| {
            conn.query_row(
                "SELECT created_ms, updated_ms, version, events, state FROM sessions WHERE id = ?1",
                [id],
                |row| {
                    Ok((
                        row.get(0)?,
                        row.get(1)?,
                        row.get(2)?,
                        row.get(3)?,
                        row.get(4)?,
                    ))
                },
            )
            .optional()
        })?;
        row.map(|(created_ms, updated_ms, version, events, state)| {
            Ok(Session {
                id: id.to_string(),
                created_ms,
                updated: rfc3339(updated_ms),
                version,
                events,
                context: self.decode(&state)?,
            })
        })
        .transpose()
    }

    pub async fn get(&self, id: String) -> Result<Option<Session>, Error> {
        self.blocking(move |store| store.get_blocking(&id)).await
    }

    /// All sessions, most recently updated first.
    pub fn list_blocking(&self) -> Result<Vec<SessionSummary>, Error> {
        self.page_blocking(usize::MAX, 0)
            .map(|(sessions, _)| sessions)
    }

    /// Up to `limit` sessions, most recently updated first, after skipping
    /// `offset` of them, and the number of all, in one read.
    pub fn page_blocking(
        &self,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<SessionSummary>, usize), Error> {
        let as_sql = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        self.read(|conn| {
            // One snapshot for both: a commit between them would count a
            // session the page does not show, or the other way round.
            let tx = conn.unchecked_transaction()?;
            let total: i64 = tx.query_row("SELECT count(*) FROM sessions", [], |row| row.get(0))?;
            let sessions = {
                let mut statement = tx.prepare(
                    "SELECT id, updated_ms, version, events FROM sessions \
                     ORDER BY updated_ms DESC, id LIMIT ?1 OFFSET ?2",
                )?;
                let rows = statement.query_map([as_sql(limit), as_sql(offset)], |row| {
                    Ok(SessionSummary {
                        id: row.get(0)?,
                        updated: rfc3339(row.get(1)?),
                        version: row.get(2)?,
                        events: row.get(3)?,
                    })
                })?;
                rows.collect::<Result<Vec<_>, _>>()?
            };
            tx.finish()?;
            Ok((sessions, total as usize))
        })
    }

    pub async fn page(
        &self,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<SessionSummary>, usize), Error> {
        self.blocking(move |store| store.page_blocking(limit, offset))
            .await
    }

    /// The `limit` most recently updated sessions and the number of all, in
    /// one read: reads `limit` rows of an index, not every session.
    pub fn recent_blocking(&self, limit: usize) -> Result<RecentSessions, Error> {
        let (total, ids) = self.read(|conn| {
            // One snapshot for both: a commit between them would count a
            // session the list does not show, or the other way round.
            let tx = conn.unchecked_transaction()?;
            let total: i64 = tx.query_row("SELECT count(*) FROM sessions", [], |row| row.get(0))?;
            let ids = {
                let mut statement =
                    tx.prepare("SELECT id FROM sessions ORDER BY updated_ms DESC, id LIMIT ?1")?;
                let rows = statement.query_map([limit as i64], |row| row.get::<_, String>(0))?;
                rows.collect::<Result<Vec<_>, _>>()?
            };
            tx.finish()?;
            Ok((total, ids))
        })?;
        Ok(RecentSessions {
            ids,
            total: usize::try_from(total).unwrap_or(0),
        })
    }

    pub async fn recent(&self, limit: usize) -> Result<RecentSessions, Error> {
        self.blocking(move |store| store.recent_blocking(limit))
            .await
    }

    /// Removes a session and its log; false when there was none.
    pub fn delete_blocking(&self, id: &str) -> Result<bool, Error> {
        let (reply, outcome) = oneshot::channel();
        self.submit(Job::Delete {
            id: id.to_string(),
            reply,
        })?;
        outcome
            .blocking_recv()
            .map_err(|_| Error::Task("the writer thread has stopped".into()))?
    }

    pub async fn delete(&self, id: String) -> Result<bool, Error> {
        let (reply, outcome) = oneshot::channel();
        self.submit(Job::Delete { id, reply })?;
        outcome
            .await
            .map_err(|_| Error::Task("the writer thread has stopped".into()))?
    }

    /// Moves every committed change from the WAL into `sessions.sqlite` and
    /// empties the WAL, so that the file alone holds every session (what a
    /// user who copies it backs up). For shutdown, once the requests are
    /// done; the store stays usable. Not for async code (it blocks).
    pub fn checkpoint_blocking(&self) -> Result<(), Error> {
        let (reply, outcome) = oneshot::channel();
        self.submit(Job::Checkpoint { reply })?;
        outcome
            .blocking_recv()
            .map_err(|_| Error::Task("the writer thread has stopped".into()))?
    }

    /// [`SessionStore::checkpoint_blocking`] for async code.
    pub async fn checkpoint(&self) -> Result<(), Error> {
        let (reply, outcome) = oneshot::channel();
        self.submit(Job::Checkpoint { reply })?;
        outcome
            .await
            .map_err(|_| Error::Task("the writer thread has stopped".into()))?
    }

    /// The logged events of a session, oldest first (JSON as received).
    pub fn logged_events_blocking(&self, id: &str) -> Result<Vec<String>, Error> {
        self.read(|conn| {
            let mut statement =
                conn.prepare("SELECT event FROM events WHERE session = ?1 ORDER BY seq")?;
            let rows = statement.query_map([id], |row| row.get::<_, String>(0))?;
            rows.collect()
        })
    }
}

fn decode(path: &Path, state: &str) -> Result<WorkingContext, Error> {
    serde_json::from_str(state).map_err(|source| Error::CorruptState {
        path: path.to_path_buf(),
        source,
    })
}

fn apply_events(events: Vec<Event>) -> Change {
    Box::new(move |context, at| {
        let mut notes = Vec::new();
        for (i, event) in events.iter().enumerate() {
            notes.extend(context.apply(i + 1, event, at));
        }
        notes
    })
}

/// The one writer: it takes every job waiting in its queue and commits them
/// in one transaction (group commit), so concurrent writers share an fsync
/// instead of queueing for one each. Each job runs in its own savepoint: a
/// failing job is undone alone and the others still commit.
struct Writer {
    data_dir: PathBuf,
    path: PathBuf,
    /// `None` while the store cannot be opened at its path.
    conn: Option<Connection>,
    /// The file `conn` has open.
    file: Option<FileId>,
    changed: Arc<tokio::sync::watch::Sender<u64>>,
    health: Arc<Health>,
}

/// A job's outcome, held until the commit it belongs to succeeds.
enum Done {
    Change(oneshot::Sender<ChangeOutcome>, ChangeOutcome),
    Delete(oneshot::Sender<Result<bool, Error>>, Result<bool, Error>),
}

impl Writer {
    fn run(mut self, jobs: mpsc::Receiver<Job>) {
        // Ends when every handle on the store is gone.
        while let Ok(first) = jobs.recv() {
            let mut batch = vec![first];
            while batch.len() < MAX_JOBS_PER_COMMIT {
                match jobs.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
            self.commit(batch);
        }
    }

    fn store_err(&self) -> impl Fn(rusqlite::Error) -> Error + '_ {
        |source| Error::store(&self.path, source)
    }

    /// Makes sure the store is open at its path and may be written: opens
    /// the file at the path again when the one open was deleted or
    /// replaced (or none could be opened), and refuses a file known to be
    /// damaged.
    fn ready(&mut self) -> Result<(), Error> {
        let at_path = FileId::of(&self.path);
        // A damaged file gets nothing more written into it.
        if let Some(refusal) = self.health.refusal(&self.path, at_path) {
            return Err(refusal);
        }
        if self.conn.is_none() || at_path.is_none() || at_path != self.file {
            if self.conn.take().is_some() {
                // SQLite sees that its file has moved and leaves the files
                // now at the path alone as it closes.
                tracing::warn!(path = %self.path.display(), "the session store was deleted or replaced; opening the one at its path");
            }
            match open_writing(&self.data_dir, &self.path) {
                Ok((conn, file)) => {
                    self.conn = Some(conn);
                    self.file = file;
                    self.health.clear(&self.path);
                    // Its sessions are not the ones read before.
                    self.changed.send_modify(|n| *n += 1);
                }
                Err(error) => {
                    let problem = Problem::of(error, at_path);
                    self.health.set(&self.path, problem.clone());
                    return Err(problem.error(&self.path));
                }
            }
        }
        Ok(())
    }

    fn commit(&mut self, batch: Vec<Job>) {
        if let Err(error) = self.ready() {
            refuse(batch, || error.again());
            return;
        }
        let Some(conn) = &self.conn else {
            return refuse(batch, not_open);
        };
        let mut done = Vec::with_capacity(batch.len());
        let mut checkpoints = Vec::new();
        let outcome = (|| -> Result<(), Error> {
            let err = self.store_err();
            let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
                .map_err(&err)?;
            for job in batch {
                match job {
                    Job::Change {
                        id,
                        raw,
                        change,
                        reply,
                    } => {
                        let result = savepoint(&tx, &err, |tx| {
                            change_session(&self.path, tx, &id, &raw, change)
                        });
                        done.push(Done::Change(reply, result));
                    }
                    Job::Delete { id, reply } => {
                        let result = savepoint(&tx, &err, |tx| {
                            let removed = tx
                                .execute("DELETE FROM sessions WHERE id = ?1", [&id])
                                .map_err(&err)?;
                            tx.execute("DELETE FROM events WHERE session = ?1", [&id])
                                .map_err(&err)?;
                            Ok(removed > 0)
                        });
                        done.push(Done::Delete(reply, result));
                    }
                    Job::Checkpoint { reply } => checkpoints.push(reply),
                    // The store is open at its path: `ready` saw to it.
                    Job::Check { reply } => drop(reply.send(Ok(()))),
                }
            }
            tx.commit().map_err(&err)
        })();
        // The file committed to must still be the one at the path, or the
        // commit went to a file deleted or moved away meanwhile: nothing
        // is acknowledged, and the next batch opens the one at the path.
        let outcome = outcome.and_then(|()| {
            if FileId::of(&self.path) == self.file {
                Ok(())
            } else {
                tracing::warn!(path = %self.path.display(), "the session store was deleted or replaced during a commit; its changes are refused, to be sent again");
                self.conn = None;
                Err(Error::Unavailable {
                    path: self.path.clone(),
                    reason: "it was deleted or replaced while these changes were committed, so \
                             they were not kept; send them again"
                        .into(),
                })
            }
        });
        self.health.note(&self.path, self.file, &outcome);
        for d in &done {
            match d {
                Done::Change(_, result) => self.health.note(&self.path, self.file, result),
                Done::Delete(_, result) => self.health.note(&self.path, self.file, result),
            }
        }
        match outcome {
            Ok(()) => {
                if !done.is_empty() {
                    self.changed.send_modify(|n| *n += 1);
                }
                for d in done {
                    // A caller that went away no longer waits for its answer.
                    match d {
                        Done::Change(reply, result) => drop(reply.send(result)),
                        Done::Delete(reply, result) => drop(reply.send(result)),
                    }
                }
            }
            Err(error) => {
                if !error.is_store_problem() {
                    tracing::error!(%error, "cannot commit to the session store");
                }
                for d in done {
                    match d {
                        Done::Change(reply, _) => drop(reply.send(Err(error.again()))),
                        Done::Delete(reply, _) => drop(reply.send(Err(error.again()))),
                    }
                }
            }
        }
        for reply in checkpoints {
            let outcome = self.ready().and_then(|()| match &self.conn {
                Some(conn) => checkpoint(&self.path, conn),
                None => Err(not_open()),
            });
            self.health.note(&self.path, self.file, &outcome);
            drop(reply.send(outcome));
        }
    }
}

/// Moves the WAL into the main file and truncates it. Readers of this
/// process hold no transaction between their calls; one of another process
/// is waited for up to the busy timeout.
fn checkpoint(path: &Path, conn: &Connection) -> Result<(), Error> {
    let busy: i64 = conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get(0))
        .map_err(|source| Error::store(path, source))?;
    if busy != 0 {
        return Err(Error::Task(
            "the checkpoint could not finish: a reader kept the WAL busy".into(),
        ));
    }
    Ok(())
}

/// What a job gets when the writer has no store open after `ready` said
/// it had: a bug, not the user's doing.
fn not_open() -> Error {
    Error::Task("the session store is not open".into())
}

/// Answers every job of `batch` with an error, doing none.
fn refuse(batch: Vec<Job>, error: impl Fn() -> Error) {
    for job in batch {
        // A caller that went away no longer waits for its answer.
        match job {
            Job::Change { reply, .. } => drop(reply.send(Err(error()))),
            Job::Delete { reply, .. } => drop(reply.send(Err(error()))),
            Job::Checkpoint { reply } | Job::Check { reply } => drop(reply.send(Err(error()))),
        }
    }
}

impl Error {
    /// The same failure again, for each job of a batch that failed as one.
    fn again(&self) -> Error {
        match self {
            Error::Damaged { path, reason } => Error::Damaged {
                path: path.clone(),
                reason: reason.clone(),
            },
            Error::Unavailable { path, reason } => Error::Unavailable {
                path: path.clone(),
                reason: reason.clone(),
            },
            other => Error::Task(format!("the commit failed: {other}")),
        }
    }
}

/// Runs `work` in a savepoint: kept if it succeeds, undone if it fails.
fn savepoint<T>(
    tx: &rusqlite::Transaction<'_>,
    err: &impl Fn(rusqlite::Error) -> Error,
    work: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, Error>,
) -> Result<T, Error> {
    tx.execute_batch("SAVEPOINT job").map_err(err)?;
    match work(tx) {
        Ok(value) => {
            tx.execute_batch("RELEASE job").map_err(err)?;
            Ok(value)
        }
        Err(error) => {
            tx.execute_batch("ROLLBACK TO job; RELEASE job")
                .map_err(err)?;
            Err(error)
        }
    }
}

/// Reads, changes and writes one session inside the writer's transaction.
fn change_session(
    path: &Path,
    tx: &rusqlite::Transaction<'_>,
    id: &str,
    raw: &[String],
    change: Change,
) -> ChangeOutcome {
    let err = |source| Error::store(path, source);
    let now = now_ms();
    let at = rfc3339(now);
    let existing: Option<(i64, i64, String)> = tx
        .query_row(
            "SELECT version, events, state FROM sessions WHERE id = ?1",
            [id],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .optional()
        .map_err(err)?;
    let (version, events, before, mut context) = match existing {
        Some((version, events, state)) => {
            let context = decode(path, &state)?;
            (version, events, Some(state), context)
        }
        None => (0, 0, None, WorkingContext::default()),
    };
    let notes = change(&mut context, &at);
    let state = serde_json::to_string(&context).map_err(|source| Error::CorruptState {
        path: path.to_path_buf(),
        source,
    })?;
    // The version (and so the ETag) moves only when the working context
    // does (its stored form tells): an agent that asks for the same pack
    // every turn gets a 304 until something changed. The events are logged
    // all the same.
    let version = if before.as_ref() == Some(&state) {
        version
    } else {
        version + 1
    };
    let total = events + raw.len() as i64;
    tx.execute(
        "INSERT INTO sessions (id, created_ms, updated_ms, version, events, state)
         VALUES (?1, ?2, ?2, ?3, ?4, ?5)
         ON CONFLICT(id) DO UPDATE SET updated_ms = ?2, version = ?3, events = ?4, state = ?5",
        params![id, now, version, total, state],
    )
    .map_err(err)?;
    {
        let mut insert = tx
            .prepare_cached(
                "INSERT INTO events (session, seq, at_ms, event) VALUES (?1, ?2, ?3, ?4)",
            )
            .map_err(err)?;
        for (i, event) in raw.iter().enumerate() {
            insert
                .execute(params![id, events + 1 + i as i64, now, event])
                .map_err(err)?;
        }
    }
    // Trimming the log now and then keeps it bounded at little cost.
    if total / 100 != events / 100 {
        tx.execute(
            "DELETE FROM events WHERE session = ?1 AND seq <= ?2",
            params![id, total - MAX_LOGGED_EVENTS],
        )
        .map_err(err)?;
    }
    Ok((version, total, notes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::events::parse_events;
    use serde_json::json;

    #[test]
    fn events_survive_reopening_and_deletion_removes_them() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::open(dir.path()).unwrap();
        let body = json!([
            {"type": "user_message", "text": "fix the build"},
            {"type": "goal", "text": "green CI"}
        ]);
        let events = parse_events(&body).unwrap();
        let raw: Vec<String> = body
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.to_string())
            .collect();
        let appended = store.append_blocking("s1", &events, &raw).unwrap();
        assert_eq!((appended.version, appended.events), (1, 2));
        drop(store);

        let store = SessionStore::open(dir.path()).unwrap();
        let session = store.get_blocking("s1").unwrap().unwrap();
        assert_eq!(
            session.context.last_user_query.as_deref(),
            Some("fix the build")
        );
        assert_eq!(store.logged_events_blocking("s1").unwrap().len(), 2);
        let reader = SessionStore::open_read_only(dir.path()).unwrap().unwrap();
        assert_eq!(reader.list_blocking().unwrap().len(), 1);
        assert!(store.delete_blocking("s1").unwrap());
        assert!(!store.delete_blocking("s1").unwrap());
        assert!(store.get_blocking("s1").unwrap().is_none());
        assert!(store.logged_events_blocking("s1").unwrap().is_empty());
    }

    #[test]
    fn the_version_moves_only_when_the_working_context_does() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::open(dir.path()).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let version = || store.get_blocking("s").unwrap().unwrap().version;
        let research = |open: &[&str]| {
            let open = open.iter().map(|q| q.to_string()).collect();
            runtime
                .block_on(store.record_research("s".into(), Vec::new(), open))
                .unwrap();
        };
        research(&["When do we deploy?"]);
        assert_eq!(version(), 1);
        // The same research again: nothing to show anew.
        research(&["When do we deploy?"]);
        research(&["when do we deploy?"]);
        assert_eq!(version(), 1);
        assert_eq!(store.logged_events_blocking("s").unwrap().len(), 3);
        research(&["Who owns payments?"]);
        assert_eq!(version(), 2);
    }

    /// What a user who backs up the file the README names gets.
    fn sessions_in_the_file_alone(store_file: &Path) -> Vec<String> {
        let copy = tempfile::tempdir().unwrap();
        let file = copy.path().join(STORE_FILE);
        std::fs::copy(store_file, &file).unwrap();
        let conn = Connection::open(&file).unwrap();
        let mut statement = conn.prepare("SELECT id FROM sessions ORDER BY id").unwrap();
        let ids = statement
            .query_map([], |row| row.get::<_, String>(0))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        ids
    }

    #[test]
    fn after_a_checkpoint_the_file_alone_holds_every_session() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::open(dir.path()).unwrap();
        let body = json!({"type": "goal", "text": "green CI"});
        let events = parse_events(&body).unwrap();
        for id in ["a", "b"] {
            store
                .append_blocking(id, &events, &[body.to_string()])
                .unwrap();
        }
        store.checkpoint_blocking().unwrap();
        let wal = dir.path().join(format!("{STORE_FILE}-wal"));
        assert_eq!(std::fs::metadata(wal).map_or(0, |m| m.len()), 0);
        assert_eq!(
            sessions_in_the_file_alone(&dir.path().join(STORE_FILE)),
            ["a", "b"]
        );
        // The store stays usable.
        store
            .append_blocking("c", &events, &[body.to_string()])
            .unwrap();
        assert_eq!(store.list_blocking().unwrap().len(), 3);
    }

    /// What a user may find at the store's path, each made in `path`.
    fn not_a_store(kind: &str, path: &Path) {
        match kind {
            "random bytes" => {
                let mut noise: u32 = 7;
                let bytes: Vec<u8> = (0..8192)
                    .map(|_| {
                        noise = noise.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                        (noise >> 24) as u8
                    })
                    .collect();
                std::fs::write(path, bytes).unwrap();
            }
            "a folder" => std::fs::create_dir(path).unwrap(),
            "another program's database" => {
                Connection::open(path)
                    .unwrap()
                    .execute_batch(
                        "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('x');",
                    )
                    .unwrap();
            }
            _ => unreachable!("{kind}"),
        }
    }

    /// The bytes at `path`, or `None` for a folder.
    fn contents(path: &Path) -> Option<Vec<u8>> {
        path.is_file().then(|| std::fs::read(path).unwrap())
    }

    #[test]
    fn a_file_that_is_no_store_is_left_as_it_is_and_moving_it_aside_starts_afresh() {
        let body = json!({"type": "goal", "text": "green CI"});
        let events = parse_events(&body).unwrap();
        let raw = [body.to_string()];
        for kind in ["random bytes", "a folder", "another program's database"] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(STORE_FILE);
            not_a_store(kind, &path);
            let before = contents(&path);

            let store = SessionStore::open(dir.path()).unwrap();
            let problem = store
                .problem()
                .unwrap_or_else(|| panic!("{kind}: no problem"));
            assert!(
                problem.contains("is not a noggin session store"),
                "{kind}: {problem}"
            );
            assert!(problem.contains("move it aside"), "{kind}: {problem}");
            for outcome in [
                store.append_blocking("s1", &events, &raw).map(|_| ()),
                store.list_blocking().map(|_| ()),
                store.delete_blocking("s1").map(|_| ()),
                store.checkpoint_blocking(),
            ] {
                assert!(
                    matches!(outcome, Err(Error::Damaged { .. })),
                    "{kind}: {outcome:?}"
                );
            }
            assert_eq!(contents(&path), before, "{kind} was changed");
            assert_eq!(path.is_dir(), kind == "a folder");

            std::fs::rename(&path, dir.path().join("aside")).unwrap();
            store.append_blocking("s1", &events, &raw).unwrap();
            assert_eq!(store.list_blocking().unwrap().len(), 1, "{kind}");
            assert_eq!(store.problem(), None, "{kind}");
        }
    }

    #[test]
    fn the_most_recently_updated_sessions_come_first_with_the_count_of_all() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::open(dir.path()).unwrap();
        let body = json!({"type": "goal", "text": "green CI"});
        let events = parse_events(&body).unwrap();
        let raw = [body.to_string()];
        for id in ["a", "b", "c", "d"] {
            store.append_blocking(id, &events, &raw).unwrap();
            // Distinct update times, so the order is theirs.
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        store.append_blocking("b", &events, &raw).unwrap();
        let recent = store.recent_blocking(2).unwrap();
        assert_eq!(
            (recent.ids, recent.total),
            (vec!["b".to_string(), "d".into()], 4)
        );
        assert_eq!(store.recent_blocking(10).unwrap().ids, ["b", "d", "c", "a"]);
    }
}
