//! The search index over a brain: tantivy on disk in `<brain>/.noggin/`.
//!
//! The index is derived data. On open, an index that is missing, corrupt or of
//! another schema version is thrown away and rebuilt from the notes. One
//! thread owns the only `IndexWriter` ([`writer`]); everyone else sends it work
//! through [`Index`] and may await the commit. Searches use a fresh searcher
//! from the shared reader, so they never wait for indexing ([`search`]).

pub mod analyzer;
mod backlog;
pub mod corpus;
mod directory;
mod impacts;
mod owner;
mod rank;
mod schema;
pub mod search;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;
use tantivy::{IndexReader, ReloadPolicy};

pub use corpus::Corpus;
pub use owner::{holder, Follows, Holder};
pub use schema::{Fields, SCHEMA_VERSION};
pub use search::{
    folder_key, has_tag, Hit, Passage, PassageKey, Reranker, SearchFilter, SectionHit,
};
use writer::Manifest;
pub use writer::{Progress, ReconcileReport};

/// Errors of the index.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("index error in {path:?}: {source}")]
    Tantivy {
        path: PathBuf,
        #[source]
        source: tantivy::TantivyError,
    },
    #[error("cannot prepare the data folder {path:?}: {source}")]
    DataDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("another noggin process holds the index in {0:?}")]
    Locked(PathBuf),
    #[error(
        "{path:?} holds {found:?}, which noggin did not write: it rebuilds its index \
         there and would delete it. Move it away, or give --data-dir a folder of noggin's own"
    )]
    NotAnIndex { path: PathBuf, found: String },
    #[error(
        "the data folder {0:?} is the brain itself: noggin's files would sit among the notes. \
         Leave --data-dir out (it is then the brain's .noggin folder) or give another folder"
    )]
    DataDirIsBrain(PathBuf),
    #[error("the index could not be updated: {0}")]
    CommitFailed(String),
    #[error("the index is open read-only")]
    ReadOnly,
    #[error(
        "{holder} holds the index in {data_dir:?} for another brain, {other:?}: \
         give each brain a --data-dir of its own"
    )]
    AnotherBrain {
        data_dir: PathBuf,
        holder: String,
        other: PathBuf,
    },
    #[error(
        "{holder} holds the index in {data_dir:?}, which this noggin cannot read ({reason}): \
         another version of noggin wrote it. Stop that process and run this one, \
         or give this one another --data-dir"
    )]
    AnotherVersion {
        data_dir: PathBuf,
        holder: String,
        reason: String,
    },
    #[error("the index writer has stopped")]
    WriterGone,
    #[error(transparent)]
    Brain(#[from] crate::brain::Error),
}

/// How to open the index of a brain.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// Canonical brain folder.
    pub brain: PathBuf,
    /// Where the index lives; `<brain>/.noggin` when `None`.
    pub data_dir: Option<PathBuf>,
    pub max_note_bytes: u64,
    /// Open without a writer (another process may own it).
    pub read_only: bool,
}

/// What `/v1/status` reports about the index.
#[derive(Debug, Clone, Serialize, Default)]
pub struct IndexStatus {
    pub notes: usize,
    pub sections: usize,
    /// True while a reconcile or rebuild is running.
    pub indexing: bool,
    /// Why the index was rebuilt from scratch on open, if it was.
    pub rebuilt_because: Option<String>,
    pub last_reconcile: Option<ReconcileReport>,
    /// RFC 3339 time of the last commit.
    pub last_commit: Option<String>,
    /// Why the last commit failed; `None` while commits succeed. Searches
    /// then miss what changed since the last good commit.
    pub commit_error: Option<String>,
    /// Why the brain could not be read at the last reconcile (moved,
    /// deleted, not readable); `None` once it can be. The index keeps what
    /// it held rather than being emptied.
    pub brain_error: Option<String>,
    /// A reconcile has ended since the index was opened with nothing left
    /// that a commit failed to take: the index was then up to date.
    #[serde(skip)]
    pub caught_up: bool,
}

impl IndexStatus {
    /// The index is being brought up to date with the brain for the first
    /// time since it was opened (or that first pass could not commit yet
    /// and will be tried again): what a search misses may still be found.
    /// A later reconcile (a rescan) starts from an index that was complete,
    /// so it does not count. An index opened only to read knows nothing of
    /// the writer's progress, except that its holder has not committed a
    /// first index yet.
    pub fn catching_up(&self) -> bool {
        !self.caught_up && (self.indexing || self.commit_error.is_some())
    }
}

/// A cheap, cloneable handle on the index of one brain.
#[derive(Clone)]
pub struct Index {
    inner: Arc<Inner>,
}

struct Inner {
    brain: PathBuf,
    data_dir: PathBuf,
    index_dir: PathBuf,
    reader: Arc<Reader>,
    fields: Fields,
    /// `None` when opened read-only.
    writer: Option<writer::WriterHandle>,
    /// Held while this process may write the index (`None` when read-only).
    owner: Option<Arc<owner::OwnerLock>>,
    /// Written by the writer thread, read by status requests; a std mutex
    /// because it is held only to copy a small struct, never across `.await`.
    status: Arc<Mutex<IndexStatus>>,
    /// Passages read from the store, kept while their segment lives.
    passages: search::PassageCache,
    /// BM25 statistics of the current searcher generation.
    statistics: search::StatisticsCache,
    /// Term impacts of the current searcher generation.
    impacts: impacts::ImpactCache,
    /// Mixes another ranking into [`Index::search`] (dense vectors).
    reranker: OnceLock<Arc<dyn Reranker>>,
    /// Note table and note-level term frequencies of the current generation.
    notes: rank::NoteCacheByGeneration,
}

impl Index {
    /// Opens (or creates, or rebuilds) the index of a brain and starts its
    /// writer thread. Reconciling with the disk is left to the caller.
    pub fn open(options: IndexOptions) -> Result<Index, Error> {
        let brain = crate::brain::canonical_root(&options.brain)?;
        let data_dir = options
            .data_dir
            .clone()
            .unwrap_or_else(|| brain.join(".noggin"));
        // Before anything is written there (a folder that does not exist
        // yet cannot be the brain).
        if std::fs::canonicalize(&data_dir).is_ok_and(|d| d == brain) {
            return Err(Error::DataDirIsBrain(data_dir));
        }
        // A data folder noggin used before (its lock file is there) with no
        // index in it: the index was deleted, which is worth saying.
        let used_before = owner::lock_path(&data_dir).exists();
        prepare_data_dir(&data_dir)?;
        // Before anything may be deleted or rebuilt: a second process must
        // never throw away an index that another one is creating or using.
        let owner = if options.read_only {
            None
        } else {
            Some(Arc::new(owner::OwnerLock::try_acquire(&data_dir, &brain)?))
        };
        let index_dir = index_dir_of(&data_dir);
        let (schema, fields) = schema::build_schema();

        // A server committing beside a reader removes the files of the
        // segments it merged away: a reader that read the old `meta.json`
        // finds them gone, and reads the new one on its next try. Its
        // searcher is opened within the try, so that it holds the files.
        let open_for_reading = || {
            open_existing(&index_dir, &schema).and_then(|(index, manifest)| {
                let reader =
                    reader_of(&index).map_err(|e| format!("cannot read: {}", in_words(&e)))?;
                Ok((index, manifest, reader))
            })
        };
        let held = options
            .read_only
            .then(|| owner::holder(&data_dir))
            .flatten();
        if let Some(held) = &held {
            if let Some(other) = held.brain.as_ref().filter(|other| **other != brain) {
                return Err(Error::AnotherBrain {
                    data_dir,
                    holder: held.to_string(),
                    other: other.clone(),
                });
            }
        }
        let mut read_only = None;
        let opened = if options.read_only {
            let mut tried = open_for_reading();
            for _ in 0..READ_ONLY_OPEN_RETRIES {
                match &tried {
                    Err(reason) if reason.starts_with("cannot ") => {
                        std::thread::sleep(READ_ONLY_OPEN_PAUSE);
                        tried = open_for_reading();
                    }
                    _ => break,
                }
            }
            tried.map(|(index, manifest, reader)| {
                read_only = Some(reader);
                (index, manifest)
            })
        } else {
            open_existing(&index_dir, &schema)
        };
        let mut being_made = false;
        let ((index, manifest), rebuilt_because) = match opened {
            Ok(opened) => (opened, None),
            Err(reason) if options.read_only && is_of_another_version(&reason) => {
                return Err(Error::AnotherVersion {
                    data_dir,
                    holder: held.map_or("another noggin process".to_string(), |h| h.to_string()),
                    reason,
                });
            }
            Err(reason) if options.read_only && held.is_some() && is_being_made(&reason) => {
                // The holder is making the first index now: nothing to read
                // yet, and a search says it is catching up.
                being_made = true;
                (
                    (
                        tantivy::Index::create_in_ram(schema.clone()),
                        Manifest::default(),
                    ),
                    None,
                )
            }
            Err(reason) if options.read_only => {
                // Not ours to rebuild: report an empty index instead.
                tracing::warn!(%reason, "index unusable; searching an empty one");
                (
                    (
                        tantivy::Index::create_in_ram(schema.clone()),
                        Manifest::default(),
                    ),
                    Some(reason),
                )
            }
            Err(reason) => {
                if index_dir.exists() {
                    tracing::warn!(%reason, dir = %index_dir.display(), "rebuilding the index from the brain");
                }
                (
                    (create_fresh(&index_dir, &schema)?, Manifest::default()),
                    Some(reason),
                )
            }
        };
        analyzer::register(&index);
        let tantivy_err = |source| Error::Tantivy {
            path: index_dir.clone(),
            source,
        };
        let reader = match read_only {
            Some(reader) => reader,
            None => reader_of(&index).map_err(tantivy_err)?,
        };
        let rebuilt_because = match rebuilt_because.as_deref() {
            Some(NO_INDEX_YET) if used_before => Some("the index was missing".to_string()),
            Some(NO_INDEX_YET) => None,
            _ => rebuilt_because,
        };
        let status = Arc::new(Mutex::new(IndexStatus {
            rebuilt_because,
            indexing: being_made,
            notes: manifest.notes.len(),
            sections: manifest.sections(),
            ..IndexStatus::default()
        }));
        let writer = match &owner {
            None => None,
            Some(owner) => {
                // An index with notes has its writer at once (another
                // process holding it is an error now); an empty one writes
                // its first pass without one, and makes it when next needed.
                let tantivy_writer = if manifest.notes.is_empty() {
                    None
                } else {
                    match tantivy_writer(&index) {
                        Ok(w) => Some(w),
                        Err(tantivy::TantivyError::LockFailure(..)) => {
                            return Err(Error::Locked(index_dir.clone()))
                        }
                        Err(source) => return Err(tantivy_err(source)),
                    }
                };
                Some(writer::spawn(
                    writer::WriterSetup {
                        brain: brain.clone(),
                        data_dir: data_dir.clone(),
                        owner: owner.clone(),
                        max_note_bytes: options.max_note_bytes,
                        index: index.clone(),
                        writer: tantivy_writer,
                        reader: reader.clone(),
                        fields,
                        status: status.clone(),
                    },
                    manifest,
                )?)
            }
        };
        Ok(Index {
            inner: Arc::new(Inner {
                brain,
                data_dir,
                index_dir,

                reader,
                fields,
                writer,
                owner,
                status,
                passages: search::PassageCache::new(search::CACHED_PASSAGES),
                statistics: search::StatisticsCache::default(),
                impacts: impacts::ImpactCache::default(),
                reranker: OnceLock::new(),
                notes: rank::NoteCacheByGeneration::default(),
            }),
        })
    }

    /// The canonical brain folder.
    pub fn brain(&self) -> &Path {
        &self.inner.brain
    }

    pub fn data_dir(&self) -> &Path {
        &self.inner.data_dir
    }

    /// Tells other processes how the holder of the index follows the brain,
    /// and so whether it indexes the notes they write.
    pub fn declare_owner(&self, follows: Follows) {
        if let Some(owner) = &self.inner.owner {
            owner.declare(follows);
        }
    }

    pub fn is_read_only(&self) -> bool {
        self.inner.writer.is_none()
    }

    /// A copy of the current status.
    pub fn status(&self) -> IndexStatus {
        self.inner
            .status
            .lock()
            .expect("status lock poisoned")
            .clone()
    }

    /// [`IndexStatus::catching_up`], without copying the status: every
    /// search and research asks.
    pub fn catching_up(&self) -> bool {
        self.inner
            .status
            .lock()
            .expect("status lock poisoned")
            .catching_up()
    }

    /// Bytes used by the index files on disk.
    pub fn size_bytes(&self) -> u64 {
        walkdir::WalkDir::new(&self.inner.index_dir)
            .into_iter()
            .filter_map(Result::ok)
            .filter_map(|e| e.metadata().ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum()
    }

    /// Whether a reranker is installed (the semantic model is loaded).
    pub fn has_reranker(&self) -> bool {
        self.inner.reranker.get().is_some()
    }

    /// Installs the reranker of [`Index::search`]; only the first one counts.
    pub fn set_reranker(&self, reranker: Arc<dyn Reranker>) {
        let _ = self.inner.reranker.set(reranker);
    }

    fn writer(&self) -> Result<&writer::WriterHandle, Error> {
        self.inner.writer.as_ref().ok_or(Error::ReadOnly)
    }

    /// Reconciles the index with the disk and waits for the commit.
    pub async fn reconcile(&self, progress: Option<Progress>) -> Result<ReconcileReport, Error> {
        self.writer()?.reconcile(progress).await
    }

    /// Blocking variant of [`Index::reconcile`] for the command line.
    pub fn reconcile_blocking(&self, progress: Option<Progress>) -> Result<ReconcileReport, Error> {
        self.writer()?.reconcile_blocking(progress)
    }

    /// Starts a reconcile without waiting for it.
    pub fn request_reconcile(&self) -> Result<(), Error> {
        self.writer()?.request_reconcile()
    }

    /// Re-reads the given note paths (relative) and waits until the index
    /// shows them as they are on disk now.
    pub async fn sync_paths(&self, paths: Vec<String>) -> Result<(), Error> {
        self.writer()?.sync_paths(paths).await
    }

    /// Queues the given paths for re-reading without waiting.
    pub fn queue_paths(&self, paths: Vec<String>) -> Result<(), Error> {
        self.writer()?.queue_paths(paths)
    }
}

/// The one writer of `index`, with its threads and memory.
fn tantivy_writer(
    index: &tantivy::Index,
) -> tantivy::Result<tantivy::IndexWriter<backlog::QueuedDoc>> {
    let threads = writer_threads();
    index.writer_with_num_threads(threads, threads * WRITER_BUDGET_PER_THREAD)
}

/// Makes the index of `data_dir` again, empty, after its folder was deleted
/// or replaced under the writer (the owner's lock taken again first, when
/// it went too), with the writer of the new index. The notes are indexed
/// into it by the caller.
fn make_again(
    data_dir: &Path,
    owner: &owner::OwnerLock,
) -> Result<(tantivy::Index, tantivy::IndexWriter<backlog::QueuedDoc>), Error> {
    let index_dir = index_dir_of(data_dir);
    prepare_data_dir(data_dir)?;
    owner.take_again()?;
    let (schema, _) = schema::build_schema();
    let index = create_fresh(&index_dir, &schema)?;
    analyzer::register(&index);
    let writer = tantivy_writer(&index).map_err(|source| Error::Tantivy {
        path: index_dir,
        source,
    })?;
    Ok((index, writer))
}

/// Tantivy indexing threads: one per core, at most four. They tokenize
/// and invert while this process's own threads read and parse notes.
fn writer_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4)
}

/// Memory each indexing thread may buffer before it flushes a segment (tantivy
/// wants at least 15 MB a thread). A thread that flushes mid-way leaves the
/// other one to finalize the last, larger segment alone at the commit: 30 MB
/// keeps the software-docs corpus (23 MB of Markdown) in one segment a thread
/// and indexes it 2–3% faster than 20 MB, four times that corpus 4% faster,
/// for 1–7 MB more peak RSS (the queue before tantivy is bounded, see
/// `backlog`).
const WRITER_BUDGET_PER_THREAD: usize = 30_000_000;

/// How often a read-only open (the CLI beside a server) tries again when
/// the index's files change under it, and how long it waits each time.
const READ_ONLY_OPEN_RETRIES: usize = 20;
const READ_ONLY_OPEN_PAUSE: std::time::Duration = std::time::Duration::from_millis(25);

/// Marks a folder of noggin's own (the data folder) with a `.gitignore` of
/// `*`, so that a brain kept in git leaves it out.
pub(crate) fn mark_ignored_by_git(dir: &Path) -> std::io::Result<()> {
    std::fs::write(dir.join(".gitignore"), "*\n")
}

fn prepare_data_dir(data_dir: &Path) -> Result<(), Error> {
    let io_err = |source| Error::DataDir {
        path: data_dir.to_path_buf(),
        source,
    };
    // Only a folder noggin makes (or finds empty) is noggin's to mark: a
    // `.gitignore` of `*` in a folder of the user's would hide it from git.
    let ours = match std::fs::read_dir(data_dir) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(source) => return Err(io_err(source)),
    };
    if let Err(source) = std::fs::create_dir_all(data_dir) {
        // A link to a folder that is gone: say where it points.
        if let Ok(target) = std::fs::read_link(data_dir) {
            return Err(io_err(std::io::Error::new(
                source.kind(),
                format!("it is a link to {target:?}, which does not exist"),
            )));
        }
        return Err(io_err(source));
    }
    if ours {
        mark_ignored_by_git(data_dir).map_err(io_err)?;
    }
    Ok(())
}

/// The first entry of `index_dir` that is not a file of a tantivy index
/// (the metadata, the locks, segment files named by a 32-digit hex id, and
/// an atomic write's leftover temporary file), if any: a folder holding one
/// is not noggin's to delete.
fn foreign_entry(index_dir: &Path) -> std::io::Result<Option<String>> {
    for entry in std::fs::read_dir(index_dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let segment = name.split_once('.').is_some_and(|(id, ext)| {
            id.len() == 32
                && id.bytes().all(|b| b.is_ascii_hexdigit())
                && !ext.is_empty()
                && ext.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.')
        });
        let known = matches!(
            name.as_str(),
            "meta.json" | ".managed.json" | ".tantivy-meta.lock" | ".tantivy-writer.lock"
        ) || name.starts_with(".tmp")
            || segment;
        if !known || !entry.file_type()?.is_file() {
            return Ok(Some(name));
        }
    }
    Ok(None)
}

/// The index's folder inside the data folder.
fn index_dir_of(data_dir: &Path) -> PathBuf {
    data_dir.join("index")
}

/// True when `index_dir` holds a commit (tantivy's `meta.json`).
fn has_commit(index_dir: &Path) -> bool {
    index_dir.join("meta.json").exists()
}

/// Why [`open_existing`] found no index: a first start, unless noggin used
/// the data folder before.
const NO_INDEX_YET: &str = "no index yet";

/// The shared reader of `index` ([`Reader`]).
fn reader_of(index: &tantivy::Index) -> tantivy::Result<Arc<Reader>> {
    let reader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?;
    Ok(Arc::new(Reader {
        reader,
        commits: AtomicU64::new(0),
        seen: AtomicU64::new(0),
        reloading: Mutex::new(None),
    }))
}

/// The reader searches share, brought up to the last commit by the first
/// search after it: a commit no one searches after (`noggin index`, a burst
/// of edits) costs no reload, and a search never sees less than was
/// committed before it began.
pub(crate) struct Reader {
    reader: IndexReader,
    /// Commits made, and how many of them the reader has loaded.
    commits: AtomicU64,
    seen: AtomicU64,
    /// Held while reloading: searches that come meanwhile wait for it. It
    /// holds the commit whose reload last failed, said once in the log.
    reloading: Mutex<Option<u64>>,
}

impl Reader {
    /// Tells the reader a commit was made.
    fn committed(&self) {
        self.commits.fetch_add(1, Ordering::AcqRel);
    }

    /// A searcher of the last commit.
    pub(crate) fn searcher(&self) -> tantivy::Searcher {
        if self.seen.load(Ordering::Acquire) < self.commits.load(Ordering::Acquire) {
            let mut failed = self.reloading.lock().unwrap_or_else(|e| e.into_inner());
            // What the reload reads includes at least the commits made
            // before it begins.
            let made = self.commits.load(Ordering::Acquire);
            if self.seen.load(Ordering::Acquire) < made {
                match self.reader.reload() {
                    Ok(()) => self.seen.store(made, Ordering::Release),
                    // Searches go on with what the reader holds; the next
                    // one tries again.
                    Err(error) if *failed != Some(made) => {
                        *failed = Some(made);
                        tracing::error!(%error, "cannot reload the index reader");
                    }
                    Err(_) => {}
                }
            }
        }
        self.reader.searcher()
    }
}

/// A tantivy error as a person reads it: the failing file and the system's
/// words, where tantivy's own message quotes its Rust structures
/// (`IoError { io_error: Custom { kind: … } }`).
pub(super) fn in_words(error: &tantivy::TantivyError) -> String {
    use tantivy::directory::error::{LockError, OpenReadError, OpenWriteError};
    use tantivy::TantivyError;
    match error {
        TantivyError::IoError(io) => io.to_string(),
        TantivyError::OpenWriteError(OpenWriteError::IoError { io_error, filepath }) => {
            format!("cannot write {}: {io_error}", filepath.display())
        }
        TantivyError::OpenReadError(OpenReadError::IoError { io_error, filepath }) => {
            format!("cannot read {}: {io_error}", filepath.display())
        }
        TantivyError::OpenReadError(OpenReadError::FileDoesNotExist(path)) => {
            format!("{} is missing", path.display())
        }
        TantivyError::LockFailure(LockError::IoError(io), _) => {
            format!("cannot take the index's lock: {io}")
        }
        other => other.to_string(),
    }
}

/// Why [`open_existing`] found an index with no commit of notes: one being
/// made now, or one whose maker stopped before its first commit.
const FIRST_INDEX_UNFINISHED: &str = "the first index was not finished";

/// True when [`open_existing`] found no commit of notes yet: with a live
/// holder, one it is making now.
fn is_being_made(reason: &str) -> bool {
    reason == NO_INDEX_YET || reason == FIRST_INDEX_UNFINISHED
}

/// Why [`open_existing`] cannot use an index another version of noggin
/// wrote: its fields differ, or what it parsed and stored.
const SCHEMA_DIFFERS: &str = "schema differs";
const SCHEMA_VERSION_WORD: &str = "schema version";

/// True when [`open_existing`] refused the index as another version's.
fn is_of_another_version(reason: &str) -> bool {
    reason == SCHEMA_DIFFERS || reason.starts_with(SCHEMA_VERSION_WORD)
}

/// Opens an index that exists, is intact and has our schema version; the
/// error says why it cannot be used.
fn open_existing(
    index_dir: &Path,
    schema: &tantivy::schema::Schema,
) -> Result<(tantivy::Index, Manifest), String> {
    if !has_commit(index_dir) {
        return Err(NO_INDEX_YET.to_string());
    }
    let index = directory::IndexDirectory::open(index_dir)
        .map_err(tantivy::TantivyError::from)
        .and_then(tantivy::Index::open)
        .map_err(|e| format!("cannot open: {}", in_words(&e)))?;
    if index.schema() != *schema {
        return Err(SCHEMA_DIFFERS.to_string());
    }
    let manifest = writer::read_manifest(&index)?;
    if manifest.schema == 0 {
        // Created, and nothing committed into it yet.
        return Err(FIRST_INDEX_UNFINISHED.to_string());
    }
    if manifest.schema != SCHEMA_VERSION {
        return Err(format!(
            "{SCHEMA_VERSION_WORD} {} instead of {SCHEMA_VERSION}",
            manifest.schema
        ));
    }
    match index.validate_checksum() {
        Ok(bad) if bad.is_empty() => Ok((index, manifest)),
        Ok(bad) => Err(format!("corrupt files: {bad:?}")),
        Err(e) => Err(format!("cannot verify: {}", in_words(&e))),
    }
}

fn create_fresh(
    index_dir: &Path,
    schema: &tantivy::schema::Schema,
) -> Result<tantivy::Index, Error> {
    if index_dir.exists() {
        let io_err = |source| Error::DataDir {
            path: index_dir.to_path_buf(),
            source,
        };
        if let Some(found) = foreign_entry(index_dir).map_err(io_err)? {
            return Err(Error::NotAnIndex {
                path: index_dir.to_path_buf(),
                found,
            });
        }
        std::fs::remove_dir_all(index_dir).map_err(io_err)?;
    }
    std::fs::create_dir_all(index_dir).map_err(|source| Error::DataDir {
        path: index_dir.to_path_buf(),
        source,
    })?;
    let dir = directory::IndexDirectory::open(index_dir).map_err(|e| Error::Tantivy {
        path: index_dir.to_path_buf(),
        source: e.into(),
    })?;
    tantivy::Index::create(dir, schema.clone(), tantivy::IndexSettings::default()).map_err(
        |source| Error::Tantivy {
            path: index_dir.to_path_buf(),
            source,
        },
    )
}

/// A temp brain of the given notes (path, markdown), indexed: for tests.
#[cfg(test)]
pub(crate) fn indexed_brain(notes: &[(&str, &str)]) -> (tempfile::TempDir, Index) {
    let temp = tempfile::tempdir().unwrap();
    let brain = temp.path().join("brain");
    std::fs::create_dir_all(&brain).unwrap();
    for (path, text) in notes {
        let file = brain.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    (temp, indexed_folder(brain))
}

/// The index of the notes already in `brain`, made: for tests that shape
/// the files first (their times, say).
#[cfg(test)]
pub(crate) fn indexed_folder(brain: PathBuf) -> Index {
    let index = Index::open(IndexOptions {
        brain,
        data_dir: None,
        max_note_bytes: 1 << 20,
        read_only: false,
    })
    .unwrap();
    index.reconcile_blocking(None).unwrap();
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_folder_that_links_to_nothing_says_so() {
        let temp = tempfile::tempdir().unwrap();
        let link = temp.path().join("data");
        std::os::unix::fs::symlink(temp.path().join("gone"), &link).unwrap();
        let said = prepare_data_dir(&link).unwrap_err().to_string();
        assert!(said.contains("which does not exist"), "{said}");
        assert!(said.contains("gone"), "{said}");
    }

    #[test]
    fn tantivy_errors_are_said_in_words() {
        use tantivy::directory::error::OpenWriteError;
        let full = std::io::Error::new(std::io::ErrorKind::StorageFull, "no space left on device");
        let error = tantivy::TantivyError::from(OpenWriteError::wrap_io_error(
            full,
            PathBuf::from("index/abc.idx"),
        ));
        assert_eq!(
            in_words(&error),
            "cannot write index/abc.idx: no space left on device"
        );
    }

    /// A commit leaves the reader as it was until a search: then every
    /// search that begins after the commit sees it, also those that come
    /// together while the first of them reloads.
    #[test]
    fn searches_after_a_commit_see_it_and_the_commit_alone_reloads_nothing() {
        let (temp, index) = indexed_brain(&[("a.md", "# A\n\nalpha")]);
        let brain = temp.path().join("brain");
        let reader = &index.inner.reader;
        for round in 1..=5u64 {
            std::fs::write(brain.join(format!("n{round}.md")), "# N\n\nnew").unwrap();
            index.reconcile_blocking(None).unwrap();
            let (seen, commits) = (&reader.seen, &reader.commits);
            assert!(
                seen.load(Ordering::Acquire) < commits.load(Ordering::Acquire),
                "the commit reloaded the reader"
            );
            let together = std::sync::Barrier::new(8);
            std::thread::scope(|scope| {
                for _ in 0..8 {
                    scope.spawn(|| {
                        together.wait();
                        assert_eq!(index.searcher().num_docs(), 1 + round);
                    });
                }
            });
            assert_eq!(
                seen.load(Ordering::Acquire),
                commits.load(Ordering::Acquire)
            );
        }
    }

    /// A command beside a process that holds an index another version of
    /// noggin wrote says so, rather than searching an empty index as if the
    /// brain had no notes.
    #[test]
    fn an_index_of_another_version_that_another_holds_is_refused() {
        let (temp, holder) = indexed_brain(&[("a.md", "# A\n\nalpha")]);
        let brain = std::fs::canonicalize(temp.path().join("brain")).unwrap();
        // As another version leaves it: a manifest of its schema version.
        let meta = index_dir_of(&brain.join(".noggin")).join("meta.json");
        let text = std::fs::read_to_string(&meta).unwrap();
        let other = text.replace(
            &format!("\\\"schema\\\":{SCHEMA_VERSION}"),
            "\\\"schema\\\":1",
        );
        assert_ne!(other, text);
        std::fs::write(&meta, other).unwrap();
        let opened = Index::open(IndexOptions {
            brain,
            data_dir: None,
            max_note_bytes: 1 << 20,
            read_only: true,
        });
        match opened {
            Err(error @ Error::AnotherVersion { .. }) => {
                let said = error.to_string();
                assert!(said.contains("another version of noggin"), "{said}");
            }
            Err(error) => panic!("{error}"),
            Ok(_) => panic!("an index of another version was opened"),
        }
        drop(holder);
    }
}
