//! The one owner of the `IndexWriter`.
//!
//! All index writes happen on this thread (tantivy allows one writer per
//! index); callers anywhere send it commands and may await the commit. The
//! manifest (size, mtime, identity and content hash of every indexed note)
//! travels in the commit payload, so it can never disagree with the
//! committed documents.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tantivy::indexer::UserOperation;
use tantivy::schema::Term;
use tantivy::{IndexWriter, TantivyDocument};
use tokio::sync::oneshot;

use super::backlog::{Backlog, QueuedDoc};
use super::schema::{Fields, SCHEMA_VERSION};
use super::{Error, IndexStatus};
use crate::brain::scan::{
    list_notes, open_note, read_note_text, stat_file, stat_note, walk_notes, BrainDir,
    FileIdentity, NoteFile, NotePath,
};
use crate::brain::{parse_note, Note};

mod first_pass;

/// Notes read and parsed together before their documents go to the writer.
const PARSE_CHUNK: usize = 256;

/// After a failed commit, what it had is indexed again at the next command
/// or after this long, whichever comes first.
const RETRY_FAILED_COMMIT: Duration = Duration::from_secs(30);

/// How long the writer thread waits, idle, after a first pass before it
/// makes the `IndexWriter` again (see `WriterOwner::run`).
const WRITER_AFTER_FIRST_PASS: Duration = Duration::from_millis(200);

/// Called with (notes done, notes total) while reconciling.
pub type Progress = Box<dyn Fn(usize, usize) + Send>;

/// What a reconcile did.
#[derive(Debug, Clone, Serialize, Default, schemars::JsonSchema)]
pub struct ReconcileReport {
    /// RFC 3339 time at which it finished.
    pub at: String,
    pub notes: usize,
    pub sections: usize,
    /// Notes read and parsed again because they changed (or were new).
    pub reparsed: usize,
    pub unchanged: usize,
    pub removed: usize,
    pub skipped_too_large: usize,
    /// Symbolic links in the brain, not followed (so not indexed).
    pub skipped_links: usize,
    /// Notes (or folders) that could not be read, or whose names are not
    /// UTF-8: left out, each with a warning in the log.
    pub unreadable: usize,
    /// Notes read this time whose frontmatter is no YAML: indexed without
    /// their title, tags and aliases, each with a warning in the log.
    pub frontmatter_unread: usize,
    pub took_ms: u64,
    /// The brain could not be read, so nothing was compared: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub brain_error: Option<String>,
}

/// Written as `[size, mtime_ns, hash, sections, ino, ctime_ns]`: the
/// manifest of a large brain is rewritten with every commit and read at
/// every start. An entry of an earlier version has the first four alone:
/// its file is read once more (and its identity kept), not parsed again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ManifestEntry {
    pub size: u64,
    pub mtime_ns: i64,
    pub hash: u64,
    pub sections: u32,
    pub identity: FileIdentity,
}

impl ManifestEntry {
    /// The entry of `file`, indexed with this content hash and sections.
    pub fn of(file: &NoteFile, hash: u64, sections: u32) -> ManifestEntry {
        ManifestEntry {
            size: file.size,
            mtime_ns: file.mtime_ns,
            hash,
            sections,
            identity: file.identity,
        }
    }

    /// True when `file` is the file indexed, unchanged since: the same
    /// size, mtime, inode and status-change time. It is not read again.
    fn stats_as(&self, file: &NoteFile) -> bool {
        self.size == file.size && self.mtime_ns == file.mtime_ns && self.identity == file.identity
    }
}

impl Serialize for ManifestEntry {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (
            self.size,
            self.mtime_ns,
            self.hash,
            self.sections,
            self.identity.ino,
            self.identity.ctime_ns,
        )
            .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ManifestEntry {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entry;
        impl<'de> serde::de::Visitor<'de> for Entry {
            type Value = ManifestEntry;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("[size, mtime_ns, hash, sections, ino?, ctime_ns?]")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<ManifestEntry, A::Error> {
                use serde::de::Error;
                let missing = |i| A::Error::invalid_length(i, &self);
                let size = seq.next_element()?.ok_or_else(|| missing(0))?;
                let mtime_ns = seq.next_element()?.ok_or_else(|| missing(1))?;
                let hash = seq.next_element()?.ok_or_else(|| missing(2))?;
                let sections = seq.next_element()?.ok_or_else(|| missing(3))?;
                let identity = match seq.next_element::<u64>()? {
                    Some(ino) => FileIdentity {
                        ino,
                        ctime_ns: seq.next_element()?.ok_or_else(|| missing(5))?,
                    },
                    None => FileIdentity::default(),
                };
                Ok(ManifestEntry {
                    size,
                    mtime_ns,
                    hash,
                    sections,
                    identity,
                })
            }
        }
        deserializer.deserialize_seq(Entry)
    }
}

/// Everything the index knows about the files it was built from.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Manifest {
    pub schema: u32,
    pub notes: rustc_hash::FxHashMap<String, ManifestEntry>,
}

impl Manifest {
    /// Sections of all the notes indexed.
    pub fn sections(&self) -> usize {
        self.notes.values().map(|e| e.sections as usize).sum()
    }
}

/// Reads the manifest from the last commit's payload; empty if there is none.
pub(super) fn load_manifest(index: &tantivy::Index) -> Manifest {
    read_manifest(index).unwrap_or_default()
}

/// The manifest of the last commit (empty when the commit carries none, as
/// an index just created); an error when `meta.json` cannot be read now.
pub(super) fn read_manifest(index: &tantivy::Index) -> Result<Manifest, String> {
    let meta = index
        .load_metas()
        .map_err(|e| format!("cannot read the commit: {e}"))?;
    match meta.payload {
        None => Ok(Manifest::default()),
        Some(payload) => {
            serde_json::from_str(&payload).map_err(|e| format!("cannot read the manifest: {e}"))
        }
    }
}

enum Command {
    Reconcile {
        progress: Option<Progress>,
        reply: Option<oneshot::Sender<ReconcileReport>>,
    },
    Sync {
        paths: Vec<String>,
        /// Told whether the index now shows the paths (false when the commit
        /// failed or an earlier one did and none succeeded since).
        reply: Option<oneshot::Sender<bool>>,
    },
}

pub(super) struct WriterSetup {
    pub brain: PathBuf,
    pub data_dir: PathBuf,
    pub owner: Arc<super::owner::OwnerLock>,
    pub max_note_bytes: u64,
    pub index: tantivy::Index,
    /// The one writer, made when first needed: a first pass writes its
    /// segments without it ([`first_pass`]).
    pub writer: Option<IndexWriter<QueuedDoc>>,
    pub reader: Arc<super::Reader>,
    pub fields: Fields,
    pub status: Arc<Mutex<IndexStatus>>,
}

/// Says in the status whether a reconcile runs (asked for, or under way).
fn set_indexing(status: &Mutex<IndexStatus>, indexing: bool) {
    status.lock().expect("status lock poisoned").indexing = indexing;
}

/// Cloneable sender of work to the writer thread.
#[derive(Clone)]
pub(super) struct WriterHandle {
    tx: mpsc::Sender<Command>,
    status: Arc<Mutex<IndexStatus>>,
    /// Passages handed to tantivy and not yet indexed (the writer's own).
    #[cfg(test)]
    backlog: Arc<Backlog>,
}

/// Starts the writer thread of `setup`'s index, whose last commit's
/// manifest is `manifest` (read once, when the index was opened).
pub(super) fn spawn(setup: WriterSetup, manifest: Manifest) -> Result<WriterHandle, Error> {
    let (tx, rx) = mpsc::channel();
    let status = setup.status.clone();
    let backlog = Arc::<Backlog>::default();
    let mut owner = WriterOwner {
        setup,
        manifest,
        backlog: backlog.clone(),
        redo: false,
        redo_at_once: false,
        refused: false,
        delete_first: false,
        lost: false,
        writer_when_idle: false,
    };
    std::thread::Builder::new()
        .name("noggin-index-writer".to_string())
        .spawn(move || owner.run(rx))
        .map_err(|source| Error::DataDir {
            path: PathBuf::from("<writer thread>"),
            source,
        })?;
    Ok(WriterHandle {
        tx,
        status,
        #[cfg(test)]
        backlog,
    })
}

impl WriterHandle {
    /// Passages handed to tantivy and not yet indexed: none once a commit
    /// is done.
    #[cfg(test)]
    pub fn queued_passages(&self) -> usize {
        self.backlog.queued()
    }

    fn commit_error(&self) -> Option<String> {
        self.status
            .lock()
            .expect("status lock poisoned")
            .commit_error
            .clone()
    }

    fn send(&self, command: Command) -> Result<(), Error> {
        let reconciles = matches!(command, Command::Reconcile { .. });
        // A reconcile asked for counts as running from now on: a search
        // in the moment before the writer takes it up must not pass for one
        // over a complete index.
        if reconciles {
            set_indexing(&self.status, true);
        }
        self.tx.send(command).map_err(|_| {
            if reconciles {
                set_indexing(&self.status, false);
            }
            Error::WriterGone
        })
    }

    pub async fn reconcile(&self, progress: Option<Progress>) -> Result<ReconcileReport, Error> {
        let (reply, done) = oneshot::channel();
        self.send(Command::Reconcile {
            progress,
            reply: Some(reply),
        })?;
        done.await.map_err(|_| Error::WriterGone)
    }

    pub fn reconcile_blocking(&self, progress: Option<Progress>) -> Result<ReconcileReport, Error> {
        let (reply, done) = oneshot::channel();
        self.send(Command::Reconcile {
            progress,
            reply: Some(reply),
        })?;
        done.blocking_recv().map_err(|_| Error::WriterGone)
    }

    pub fn request_reconcile(&self) -> Result<(), Error> {
        self.send(Command::Reconcile {
            progress: None,
            reply: None,
        })
    }

    pub async fn sync_paths(&self, paths: Vec<String>) -> Result<(), Error> {
        let (reply, done) = oneshot::channel();
        self.send(Command::Sync {
            paths,
            reply: Some(reply),
        })?;
        if done.await.map_err(|_| Error::WriterGone)? {
            Ok(())
        } else {
            Err(Error::CommitFailed(
                self.commit_error().unwrap_or_else(|| "unknown".to_string()),
            ))
        }
    }

    pub fn queue_paths(&self, paths: Vec<String>) -> Result<(), Error> {
        self.send(Command::Sync { paths, reply: None })
    }
}

struct WriterOwner {
    setup: WriterSetup,
    manifest: Manifest,
    /// Passages handed to tantivy and not yet indexed.
    backlog: Arc<Backlog>,
    /// A commit failed and the writer started again from the last one: the
    /// notes it did not take are read again at the next command, or after
    /// [`RETRY_FAILED_COMMIT`].
    redo: bool,
    /// The index was made again, empty: its notes go in at once rather
    /// than after [`RETRY_FAILED_COMMIT`].
    redo_at_once: bool,
    /// tantivy refused a note of this pass (its writer stopped, as on a
    /// full disk): the pass hands it no more, and its commit fails.
    refused: bool,
    /// Since a failed commit, and until a commit succeeds, every note put in
    /// the index first deletes whatever the index holds under its path: a
    /// merge that tantivy finished during the failed commit may have saved
    /// passages the manifest does not know of.
    delete_first: bool,
    /// The writer could not start again after a failed commit: nothing more
    /// is handed to tantivy, and the index stays unhealthy until a restart.
    lost: bool,
    /// A first pass committed without an `IndexWriter`: one is made when
    /// nothing is asked for [`WRITER_AFTER_FIRST_PASS`].
    writer_when_idle: bool,
}

/// What happened to one note file when it was looked at again.
enum Outcome {
    Unchanged,
    /// Content identical, only size/mtime bookkeeping changed.
    Touched,
    Reindexed,
    Removed,
    Absent,
}

impl WriterOwner {
    fn run(&mut self, rx: mpsc::Receiver<Command>) {
        loop {
            let first = if self.redo {
                // A commit that failed waits, or a full disk would be tried
                // again and again as fast as it refuses.
                let wait = if std::mem::take(&mut self.redo_at_once) {
                    Duration::ZERO
                } else {
                    RETRY_FAILED_COMMIT
                };
                match rx.recv_timeout(wait) {
                    Ok(command) => Some(command),
                    Err(mpsc::RecvTimeoutError::Timeout) => None,
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            } else if std::mem::take(&mut self.writer_when_idle) {
                // A first pass leaves the index without its writer: it is
                // made again once nothing is asked of this thread for a
                // moment, so that whoever waited for the pass goes on
                // meanwhile (and a `noggin index` that exits at once never
                // makes it). A write before then makes it itself. If it
                // cannot be made now (the brain moved away, say), the next
                // write tries again, and only then is a missing index made
                // again.
                match rx.recv_timeout(WRITER_AFTER_FIRST_PASS) {
                    Ok(command) => Some(command),
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if self.setup.writer.is_none() && !self.lost {
                            self.setup.writer = super::tantivy_writer(&self.setup.index).ok();
                        }
                        None
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            } else {
                match rx.recv() {
                    Ok(command) => Some(command),
                    Err(_) => break,
                }
            };
            if std::mem::take(&mut self.redo) {
                tracing::info!("indexing again what the failed commit did not take");
                self.reconcile(None);
                if !self.healthy() && !self.redo && !self.lost {
                    // Nothing had changed after all, so nothing committed:
                    // a commit of its own shows the index healthy again.
                    self.commit();
                }
            }
            let Some(first) = first else { continue };
            // Take everything already queued so a burst of edits costs one commit.
            let mut commands = vec![first];
            commands.extend(rx.try_iter());
            let mut sync_paths = HashSet::new();
            let mut sync_replies = Vec::new();
            let mut reconciles = Vec::new();
            for command in commands {
                match command {
                    Command::Sync { paths, reply } => {
                        sync_paths.extend(paths);
                        sync_replies.extend(reply);
                    }
                    Command::Reconcile { progress, reply } => reconciles.push((progress, reply)),
                }
            }
            if !sync_paths.is_empty() {
                let mut changed = false;
                for path in &sync_paths {
                    changed |= !matches!(self.sync_one(path), Outcome::Unchanged | Outcome::Absent);
                }
                if changed {
                    self.commit();
                }
            }
            let healthy = self.healthy();
            for reply in sync_replies {
                let _ = reply.send(healthy);
            }
            if !reconciles.is_empty() {
                // One reconcile answers every request queued with it.
                let mut progress = None;
                let mut replies = Vec::new();
                for (p, r) in reconciles {
                    progress = progress.or(p);
                    replies.extend(r);
                }
                let report = self.reconcile(progress);
                for reply in replies {
                    let _ = reply.send(report.clone());
                }
            }
        }
        tracing::debug!("index writer stopped");
    }

    /// The `IndexWriter`, made now if there is none yet (the index made
    /// again if its folder is gone); none when it cannot be made (then the
    /// writer is lost until a restart).
    fn writer(&mut self) -> Option<&mut IndexWriter<QueuedDoc>> {
        if self.setup.writer.is_none() && !self.lost {
            match super::tantivy_writer(&self.setup.index) {
                Ok(writer) => self.setup.writer = Some(writer),
                Err(error) => self.writer_failed(&error),
            }
        }
        self.setup.writer.as_mut()
    }

    /// The `IndexWriter` could not be made (or started again): the index is
    /// made again when its folder is gone, else the writer is lost until a
    /// restart.
    fn writer_failed(&mut self, error: &dyn std::fmt::Display) {
        if !self.make_again_if_gone(error) {
            tracing::error!(%error, "cannot start the index writer; the index stays as it is until noggin restarts");
            self.lost = true;
        }
    }

    /// After `error`: when the index folder is gone, makes the index again
    /// ([`WriterOwner::make_again`]) and says so (true).
    fn make_again_if_gone(&mut self, error: &dyn std::fmt::Display) -> bool {
        let gone = self.index_gone();
        if gone {
            tracing::warn!(%error, "the index folder is gone; making the index again from the brain");
            self.make_again();
        }
        gone
    }

    /// True while the last commit succeeded.
    fn healthy(&self) -> bool {
        self.setup
            .status
            .lock()
            .expect("status lock poisoned")
            .commit_error
            .is_none()
    }

    /// Reports a failed commit and starts tantivy's writer again from the
    /// last commit. After a failure tantivy may have lost indexing threads
    /// (the documents of later commits would silently go nowhere) or
    /// documents of this one, so the writer is rebuilt and the manifest goes
    /// back to what the last commit holds: every note the failed commit had
    /// is read again at the next command ([`WriterOwner::redo`]).
    fn commit_failed(&mut self, error: &dyn std::fmt::Display) {
        self.report_commit_error(error);
        if self.lost {
            return;
        }
        let Some(writer) = self.writer() else {
            return;
        };
        match writer.rollback() {
            Ok(_) => {
                self.manifest = load_manifest(&self.setup.index);
                self.redo = true;
                self.refused = false;
                self.delete_first = true;
            }
            Err(error) => self.writer_failed(&error),
        }
    }

    /// Says that a commit failed, in the log and in the status (until one
    /// succeeds).
    fn report_commit_error(&self, error: &dyn std::fmt::Display) {
        tracing::error!(%error, "index commit failed");
        self.setup
            .status
            .lock()
            .expect("status lock poisoned")
            .commit_error = Some(error.to_string());
    }

    /// The index's folder (or the whole data folder) was deleted, or the
    /// brain's folder was replaced with its `.noggin`: no commit is there.
    fn index_gone(&self) -> bool {
        !super::has_commit(&super::index_dir_of(&self.setup.data_dir))
    }

    /// Makes the index again in its folder and indexes every note into it
    /// at the next command (or within [`RETRY_FAILED_COMMIT`]). Searches go
    /// on from what the reader has open until that commit, which the
    /// reader then reads from the same folder.
    fn make_again(&mut self) {
        match super::make_again(&self.setup.data_dir, &self.setup.owner) {
            Ok((index, writer)) => {
                self.setup.index = index;
                self.setup.writer = Some(writer);
                self.manifest = Manifest::default();
                self.redo = true;
                self.redo_at_once = true;
                self.refused = false;
                self.delete_first = false;
            }
            Err(error) => {
                tracing::error!(%error, "cannot make the index again; it stays as it is until noggin restarts");
                self.lost = true;
            }
        }
    }

    fn reconcile(&mut self, progress: Option<Progress>) -> ReconcileReport {
        let started = Instant::now();
        set_indexing(&self.setup.status, true);
        let mut report = ReconcileReport::default();
        // Into an empty index, all cores read, parse and index at once.
        let read = if self.first_pass_ready() {
            self.first_pass(&mut report, progress.as_ref())
        } else {
            self.catch_up(&mut report, progress.as_ref())
        };
        if let Err(error) = read {
            // The folder vanished or cannot be read: keep the index as it
            // was rather than wiping it for what may be an unmounted disk.
            tracing::warn!(%error, "cannot scan the brain; the index stays as it was");
            report.brain_error = Some(error.to_string());
            let mut status = self.setup.status.lock().expect("status lock poisoned");
            status.indexing = false;
            // Nothing more will come of waiting for this pass.
            status.caught_up = true;
            // The last reconcile that read the brain stays the one shown.
            status.brain_error = report.brain_error.clone();
            return report;
        }
        report.notes = self.manifest.notes.len();
        report.sections = self.manifest.sections();
        report.took_ms = started.elapsed().as_millis() as u64;
        report.at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        {
            let mut status = self.setup.status.lock().expect("status lock poisoned");
            status.indexing = false;
            status.caught_up |= status.commit_error.is_none();
            status.brain_error = None;
            status.last_reconcile = Some(report.clone());
        }
        report
    }

    /// Brings the index up to date with the brain: notes gone are taken
    /// out, new and changed ones read and indexed, and it all committed. An
    /// error when the brain cannot be read (nothing is changed then).
    fn catch_up(
        &mut self,
        report: &mut ReconcileReport,
        progress: Option<&Progress>,
    ) -> Result<(), crate::brain::Error> {
        let (files, scan) = list_notes(&self.setup.brain)?;
        // Where it cannot be held open, notes are opened by their full path.
        let dir = BrainDir::open(&self.setup.brain).ok();
        report.skipped_links = scan.links;
        report.unreadable = scan.unreadable;
        let unreadable_folders = scan.unreadable_folders;
        let total = files.len();
        let on_disk: HashSet<&str> = files.iter().map(|f| f.rel_path.as_str()).collect();
        let gone = gone_notes(self.manifest.notes.keys(), &on_disk, &unreadable_folders);
        let mut changed = false;
        for path in gone {
            self.delete_note(&path);
            report.removed += 1;
            changed = true;
        }
        // The notes the index knows are stat'ed first, all at once on all
        // cores (a warm start is nothing more); one whose size, mtime, inode
        // and ctime are as indexed is done without being read.
        let max_note_bytes = self.setup.max_note_bytes;
        let mut todo: Vec<(&NotePath, Option<Stat>)> = {
            let manifest = &self.manifest;
            files
                .par_iter()
                .filter_map(|path| {
                    let Some(known) = manifest.notes.get(&path.rel_path) else {
                        return Some((path, None));
                    };
                    let stat = stat_file(path.abs_path.clone(), &path.rel_path, max_note_bytes);
                    match &stat {
                        Ok(Some(file)) if known.stats_as(file) => None,
                        _ => Some((path, Some(stat))),
                    }
                })
                .collect()
        };
        report.unchanged += total - todo.len();
        let mut done = total - todo.len();
        // Reading and parsing the rest run on all cores, a chunk at a time
        // so that parsed documents never pile up; this thread feeds them to
        // the one writer in path order while tantivy's threads index the
        // chunk before.
        for chunk in todo.chunks_mut(PARSE_CHUNK) {
            let looked: Vec<Looked> = {
                let (fields, manifest, dir) = (&self.setup.fields, &self.manifest, dir.as_ref());
                chunk
                    .par_iter_mut()
                    .map(|(path, stat)| {
                        look(fields, manifest, max_note_bytes, path, stat.take(), dir)
                    })
                    .collect()
            };
            for ((path, _), looked) in chunk.iter().zip(looked) {
                let outcome = match looked {
                    Looked::Note(file, prepared) => {
                        if let Prepared::Parsed {
                            frontmatter_unread: true,
                            ..
                        } = prepared
                        {
                            report.frontmatter_unread += 1;
                        }
                        self.apply(&file, prepared)
                    }
                    Looked::TooLarge => {
                        report.skipped_too_large += 1;
                        self.forget(&path.rel_path)
                    }
                    Looked::Gone => self.forget(&path.rel_path),
                    // Kept as it was indexed, if it was: counted apart.
                    Looked::Unreadable => {
                        report.unreadable += 1;
                        Outcome::Absent
                    }
                };
                match outcome {
                    Outcome::Unchanged => report.unchanged += 1,
                    Outcome::Touched => {
                        report.unchanged += 1;
                        changed = true;
                    }
                    Outcome::Reindexed => {
                        report.reparsed += 1;
                        changed = true;
                    }
                    Outcome::Removed => {
                        report.removed += 1;
                        changed = true;
                    }
                    Outcome::Absent => {}
                }
            }
            done += chunk.len();
            if let Some(progress) = progress {
                progress(done, total);
            }
        }
        if changed || self.manifest.schema != SCHEMA_VERSION {
            self.commit();
        }
        Ok(())
    }

    /// Brings one path (relative) up to date with the disk.
    fn sync_one(&mut self, rel_path: &str) -> Outcome {
        match stat_note(&self.setup.brain, rel_path, self.setup.max_note_bytes) {
            Ok(Some(file)) => self.look_at(&file),
            Ok(None) | Err(crate::brain::Error::TooLarge { .. }) => self.forget(rel_path),
            Err(error) => {
                tracing::warn!(%error, "cannot look at a changed note");
                Outcome::Unchanged
            }
        }
    }

    fn look_at(&mut self, file: &NoteFile) -> Outcome {
        let prepared = prepare(&self.setup.fields, &self.manifest, file);
        self.apply(file, prepared)
    }

    /// Takes out of the index a note that is no longer one (gone, or over
    /// the size limit).
    fn forget(&mut self, rel_path: &str) -> Outcome {
        if self.manifest.notes.contains_key(rel_path) {
            self.delete_note(rel_path);
            Outcome::Removed
        } else {
            Outcome::Absent
        }
    }

    /// Records in the index and the manifest what [`prepare`] found.
    fn apply(&mut self, file: &NoteFile, prepared: Prepared) -> Outcome {
        match prepared {
            Prepared::Unchanged => Outcome::Unchanged,
            Prepared::Touched => {
                if let Some(entry) = self.manifest.notes.get_mut(&file.rel_path) {
                    entry.size = file.size;
                    entry.mtime_ns = file.mtime_ns;
                    entry.identity = file.identity;
                }
                Outcome::Touched
            }
            Prepared::Parsed { hash, docs, .. } => {
                let sections = self.replace_note(&file.rel_path, docs);
                self.manifest.notes.insert(
                    file.rel_path.clone(),
                    ManifestEntry::of(file, hash, sections),
                );
                Outcome::Reindexed
            }
        }
    }

    fn delete_note(&mut self, rel_path: &str) {
        if self.lost {
            return;
        }
        let term = Term::from_field_text(self.setup.fields.path, rel_path);
        let Some(writer) = self.writer() else {
            return;
        };
        writer.delete_term(term);
        self.manifest.notes.remove(rel_path);
    }

    /// Deletes the indexed passages of the note and adds its new ones, as
    /// one batch: tantivy puts a batch in one segment, in order, which is
    /// how note-level ranking finds a note's passages side by side.
    fn replace_note(&mut self, rel_path: &str, docs: Vec<TantivyDocument>) -> u32 {
        if self.lost || self.refused {
            return 0;
        }
        let added = docs.len() as u32;
        let mut batch = Vec::with_capacity(docs.len() + 1);
        // Every indexed note is in the manifest (unless a commit failed:
        // `delete_first`), so a note that is not has nothing to delete; a
        // delete per note of a first index would cost each commit a look-up
        // of every one of them.
        if self.delete_first || self.manifest.notes.contains_key(rel_path) {
            batch.push(UserOperation::Delete(Term::from_field_text(
                self.setup.fields.path,
                rel_path,
            )));
        }
        self.backlog.wait_for_room();
        batch.extend(
            docs.into_iter()
                .map(|doc| UserOperation::Add(self.backlog.queue(doc))),
        );
        let Some(writer) = self.writer() else {
            return 0;
        };
        match writer.run(batch) {
            Ok(_) => added,
            Err(error) => {
                // Said once: every later note of the pass would be refused
                // the same way, and the commit says why.
                tracing::error!(path = %rel_path, %error, "cannot index a note; the rest of this pass waits for the next commit");
                self.refused = true;
                0
            }
        }
    }

    fn commit(&mut self) {
        if self.lost {
            return self.commit_failed(&"the index writer is gone");
        }
        self.manifest.schema = SCHEMA_VERSION;
        let payload = match serde_json::to_string(&self.manifest) {
            Ok(payload) => payload,
            Err(error) => {
                tracing::error!(%error, "cannot serialize the manifest");
                return;
            }
        };
        let Some(writer) = self.writer() else {
            return self.commit_failed(&"the index writer is gone");
        };
        let mut prepared = match writer.prepare_commit() {
            Ok(prepared) => prepared,
            Err(error) => return self.commit_failed(&super::in_words(&error)),
        };
        prepared.set_payload(&payload);
        if let Err(error) = prepared.commit() {
            return self.commit_failed(&super::in_words(&error));
        }
        self.committed();
    }

    /// What follows a commit: searches see it, and the status says so.
    fn committed(&mut self) {
        self.setup.reader.committed();
        let mut status = self.setup.status.lock().expect("status lock poisoned");
        status.notes = self.manifest.notes.len();
        status.sections = self.manifest.sections();
        status.last_commit =
            Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        status.commit_error = None;
        self.delete_first = false;
    }

    /// True when a pass may write the index's segments itself
    /// ([`first_pass`]): nothing is indexed, or waits to be.
    fn first_pass_ready(&self) -> bool {
        !self.lost
            && !self.refused
            && self.manifest.notes.is_empty()
            && self
                .setup
                .index
                .searchable_segment_ids()
                .is_ok_and(|ids| ids.is_empty())
    }

    /// Indexes the brain into the empty index on all cores, each into a
    /// segment of its own, as the walk of the brain finds its notes, and
    /// commits them with the manifest. The `IndexWriter` is dropped meanwhile
    /// (one writer at a time), and made again when next needed. A failure to
    /// write is a failed commit: reported, and tried again later; an error
    /// when the brain cannot be read (nothing is written then).
    fn first_pass(
        &mut self,
        report: &mut ReconcileReport,
        progress: Option<&Progress>,
    ) -> Result<(), crate::brain::Error> {
        drop(self.setup.writer.take());
        let (index, brain) = (&self.setup.index, &self.setup.brain);
        let dir = BrainDir::open(brain).ok();
        let reading = first_pass::Reading {
            fields: &self.setup.fields,
            max_note_bytes: self.setup.max_note_bytes,
            dir: dir.as_ref(),
        };
        let (written, walked) = first_pass::write_segments(
            index,
            reading,
            super::writer_threads(),
            |each| walk_notes(brain, each),
            progress,
        );
        let scan = walked?;
        report.skipped_links = scan.links;
        report.unreadable = scan.unreadable;
        let written = written.and_then(|pass| {
            let written = pass.written;
            report.reparsed += written.reparsed;
            report.skipped_too_large += written.skipped_too_large;
            report.unreadable += written.unreadable;
            report.frontmatter_unread += written.frontmatter_unread;
            first_pass::commit_segments(index, written.segments, &pass.payload)?;
            Ok(pass.manifest)
        });
        match written {
            Ok(manifest) => {
                self.writer_when_idle = !manifest.notes.is_empty();
                self.manifest = manifest;
                self.committed();
            }
            Err(error) => {
                let error = super::in_words(&error);
                self.report_commit_error(&error);
                if !self.make_again_if_gone(&error) {
                    self.manifest = load_manifest(&self.setup.index);
                    self.redo = true;
                }
            }
        }
        Ok(())
    }
}

/// What reading a note file found, before anything is written: the part of
/// indexing that needs no writer, so it can run on many threads.
enum Prepared {
    /// Size and mtime as indexed: not even read.
    Unchanged,
    /// Read, but the content is as indexed.
    Touched,
    /// New or changed content, parsed into its documents.
    Parsed {
        hash: u64,
        docs: Vec<TantivyDocument>,
        /// Its frontmatter could not be read (a warning said why).
        frontmatter_unread: bool,
    },
}

/// A stat of a note path the index knows.
type Stat = Result<Option<NoteFile>, crate::brain::Error>;

/// What a reconcile found at a listed note path.
enum Looked {
    Note(NoteFile, Prepared),
    TooLarge,
    /// Gone since the listing, or not a file.
    Gone,
    /// Left as it is indexed (if it is).
    Unreadable,
}

/// The indexed notes that are gone from the disk: not listed, and not in a
/// folder that could not be read (what that holds is unknown, not gone: its
/// notes are kept as they were indexed, as a note that cannot be read is).
fn gone_notes<'a>(
    indexed: impl Iterator<Item = &'a String>,
    on_disk: &HashSet<&str>,
    unreadable_folders: &[String],
) -> Vec<String> {
    let unknown = |path: &str| {
        unreadable_folders.iter().any(|folder| {
            path.strip_prefix(folder.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
        })
    };
    indexed
        .filter(|p| !on_disk.contains(p.as_str()) && !unknown(p))
        .cloned()
        .collect()
}

/// Looks at a listed note path that may have changed: a path the index
/// knows comes with its `stat`, and is read if it changed; a new one is
/// opened and read at once. An unreadable file counts as unchanged (with a
/// warning).
fn look(
    fields: &Fields,
    manifest: &Manifest,
    max_note_bytes: u64,
    path: &NotePath,
    stat: Option<Stat>,
    dir: Option<&BrainDir>,
) -> Looked {
    let found = if let Some(stat) = stat {
        stat.map(|file| {
            file.map(|file| {
                let prepared = prepare(fields, manifest, &file);
                (file, prepared)
            })
        })
    } else {
        open_note(path, max_note_bytes, dir).map(|opened| {
            opened.map(|(file, text)| {
                let prepared = prepare_text(fields, None, &file, &text);
                (file, prepared)
            })
        })
    };
    match found {
        Ok(Some((file, prepared))) => Looked::Note(file, prepared),
        Ok(None) => Looked::Gone,
        Err(crate::brain::Error::TooLarge { path, size }) => {
            tracing::warn!(path = %path.display(), size, "skipping a note over the size limit");
            Looked::TooLarge
        }
        // A note that cannot be stat'ed or read keeps what the index holds
        // of it (a disk that went away must not empty the index).
        Err(error) => {
            tracing::warn!(%error, "skipping an unreadable note");
            Looked::Unreadable
        }
    }
}

/// Reads, hashes and parses a note file unless the manifest shows it
/// unchanged; an unreadable file counts as unchanged (with a warning).
fn prepare(fields: &Fields, manifest: &Manifest, file: &NoteFile) -> Prepared {
    let known = manifest.notes.get(&file.rel_path);
    if known.is_some_and(|e| e.stats_as(file)) {
        return Prepared::Unchanged;
    }
    let text = match read_note_text(file) {
        Ok(text) => text,
        Err(error) => {
            tracing::warn!(%error, "skipping an unreadable note");
            return Prepared::Unchanged;
        }
    };
    prepare_text(fields, known, file, &text)
}

/// Hashes and parses a note's text, unless it is the text indexed.
fn prepare_text(
    fields: &Fields,
    known: Option<&ManifestEntry>,
    file: &NoteFile,
    text: &str,
) -> Prepared {
    let hash = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
    if known.is_some_and(|e| e.hash == hash) {
        return Prepared::Touched;
    }
    let note = parse_note(&file.rel_path, text);
    Prepared::Parsed {
        hash,
        docs: note_documents(fields, &note, file.mtime_ns / 1_000_000_000),
        frontmatter_unread: note.frontmatter_unread,
    }
}

/// What a passage's document holds beside its text values: their lengths
/// and types, and the numbers (ample: the document grows if it must).
const DOC_OVERHEAD_BYTES: usize = 128;

/// The tantivy documents of a note: one per passage.
fn note_documents(f: &Fields, note: &Note, modified_secs: i64) -> Vec<TantivyDocument> {
    let created = note.created.map(|d| d.to_string()).unwrap_or_default();
    let note_id = xxhash_rust::xxh3::xxh3_64(note.path.as_bytes());
    // The file's name is the note's name in Obsidian (what `[[links]]` and
    // the quick switcher use): searched with the title when the title does
    // not say it (a frontmatter title, a first heading).
    let name = crate::brain::parse::file_stem(&note.path).trim();
    let lower = name.to_lowercase();
    let says_it = |other: &str| other.to_lowercase().contains(&lower);
    let name =
        (!name.is_empty() && !says_it(&note.title) && !note.aliases.iter().any(|a| says_it(a)))
            .then_some(name);
    // Room for the values' bytes at once (tantivy's own start is 1 KB): the
    // note's, the same in every passage, and then the passage's own.
    let note_bytes = note.path.len()
        + note.title.len()
        + note.aliases.iter().map(String::len).sum::<usize>()
        + name.map_or(0, str::len)
        + note.tags.iter().map(String::len).sum::<usize>()
        + created.len()
        + DOC_OVERHEAD_BYTES;
    note.sections
        .iter()
        .enumerate()
        .map(|(ord, section)| {
            let mut doc = TantivyDocument::with_capacity(
                note_bytes + section.heading.len() + section.text.len(),
            );
            doc.add_text(f.path, &note.path);
            doc.add_text(f.title, &note.title);
            for alias in &note.aliases {
                doc.add_text(f.title, alias);
            }
            if let Some(name) = name {
                doc.add_text(f.title, name);
            }
            doc.add_text(f.heading, &section.heading);
            for tag in &note.tags {
                doc.add_text(f.tags, tag);
            }
            doc.add_text(f.text, &section.text);
            let parts = [&note.title, &section.heading, &section.text];
            for part in parts.into_iter().chain(&note.aliases) {
                if !part.is_ascii() {
                    doc.add_text(f.chars, part);
                }
            }
            doc.add_i64(f.modified, modified_secs);
            doc.add_text(f.created, &created);
            doc.add_text(f.kind, note.kind.as_str());
            doc.add_u64(f.ord, ord as u64);
            doc.add_u64(f.note, note_id);
            if note.stale {
                doc.add_u64(f.stale, 1);
            }
            doc
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::index::schema::build_schema;
    use crate::index::{Index, IndexOptions, IndexStatus};
    use tantivy::TantivyDocument;

    /// A writable index of `brain`, not yet reconciled.
    fn open_index(brain: &std::path::Path, max_note_bytes: u64) -> Index {
        Index::open(IndexOptions {
            brain: brain.to_path_buf(),
            data_dir: None,
            max_note_bytes,
            read_only: false,
        })
        .unwrap()
    }

    /// A first pass writes every note into the empty index on all cores,
    /// each note's passages side by side in one segment (note-level ranking
    /// reads them so), and commits them with their manifest: a second pass
    /// finds nothing to do, and an edit after it is indexed by the writer.
    #[test]
    fn a_first_pass_writes_each_note_whole_into_one_segment() {
        use tantivy::schema::Value;
        let temp = tempfile::tempdir().unwrap();
        let brain = std::fs::canonicalize(temp.path()).unwrap().join("brain");
        std::fs::create_dir_all(brain.join("deep/er")).unwrap();
        let notes = 300;
        for n in 0..notes {
            let folder = ["", "deep/", "deep/er/"][n % 3];
            let text =
                format!("# Note {n}\n\nalpha {n}\n\n## Two\n\nbravo\n\n## Three\n\ncharlie\n");
            std::fs::write(brain.join(format!("{folder}n{n}.md")), text).unwrap();
        }
        let index = open_index(&brain, 1_000_000);
        let report = index.reconcile_blocking(None).unwrap();
        assert_eq!(
            (report.notes, report.reparsed, report.sections),
            (notes, notes, 3 * notes)
        );
        assert!(index.status().commit_error.is_none());

        let searcher = index.searcher();
        let fields = build_schema().1;
        for reader in searcher.segment_readers() {
            let store = reader.get_store_reader(0).unwrap();
            let mut last: Option<(String, u64)> = None;
            for doc in 0..reader.max_doc() {
                let doc: TantivyDocument = store.get(doc).unwrap();
                let path = doc
                    .get_first(fields.path)
                    .and_then(|v| v.as_str())
                    .unwrap()
                    .to_string();
                let ord = doc.get_first(fields.ord).and_then(|v| v.as_u64()).unwrap();
                match &last {
                    Some((before, ord_before)) if *before == path => {
                        assert_eq!(ord, ord_before + 1)
                    }
                    _ => assert_eq!(ord, 0, "{path} starts at its first passage"),
                }
                last = Some((path, ord));
            }
        }
        assert_eq!(searcher.num_docs() as usize, 3 * notes);

        let again = index.reconcile_blocking(None).unwrap();
        assert_eq!((again.reparsed, again.unchanged), (0, notes));
        std::fs::write(brain.join("n0.md"), "# Note 0\n\ndelta\n").unwrap();
        let edited = index.reconcile_blocking(None).unwrap();
        assert_eq!((edited.reparsed, edited.sections), (1, 3 * notes - 2));
        assert_eq!(index.searcher().num_docs() as usize, 3 * notes - 2);
        let term = index.query_terms("delta").remove(0);
        assert_eq!(index.doc_freq(&term).0, 1);
    }

    /// A brain that cannot be listed leaves the index, and the last
    /// reconcile shown, as they were, and says why until it can be.
    #[test]
    fn a_brain_gone_keeps_the_index_and_its_last_reconcile() {
        let temp = tempfile::tempdir().unwrap();
        let brain = temp.path().join("brain");
        std::fs::create_dir_all(&brain).unwrap();
        std::fs::write(brain.join("a.md"), "# A\n\nalpha").unwrap();
        let index = open_index(&brain, 100);
        let first = index.reconcile_blocking(None).unwrap();
        assert_eq!(first.notes, 1);
        let away = temp.path().join("away");
        std::fs::rename(&brain, &away).unwrap();
        let gone = index.reconcile_blocking(None).unwrap();
        assert!(gone.brain_error.is_some(), "{gone:?}");
        let status = index.status();
        assert!(status.brain_error.is_some());
        assert_eq!(status.notes, 1);
        let shown = status.last_reconcile.expect("the last reconcile");
        assert_eq!((shown.notes, shown.at.as_str()), (1, first.at.as_str()));
        std::fs::rename(&away, &brain).unwrap();
        let back = index.reconcile_blocking(None).unwrap();
        assert!(back.brain_error.is_none(), "{back:?}");
        assert!(index.status().brain_error.is_none());
    }

    /// A reconcile reads new notes, leaves unchanged ones unread, re-reads
    /// edited ones and takes out a note that grew over the size limit.
    #[test]
    fn reconcile_follows_new_edited_and_oversized_notes() {
        let temp = tempfile::tempdir().unwrap();
        let brain = temp.path().join("brain");
        std::fs::create_dir_all(brain.join("sub")).unwrap();
        let write = |path: &str, text: &str| std::fs::write(brain.join(path), text).unwrap();
        write("a.md", "# A\n\nalpha");
        write("sub/b.md", "# B\n\nbeta");
        write("c.md", "# C\n\ngamma");
        let index = open_index(&brain, 100);
        let first = index.reconcile_blocking(None).unwrap();
        assert_eq!((first.notes, first.reparsed, first.unchanged), (3, 3, 0));
        // tantivy drops each document once it has indexed it.
        assert_eq!(index.writer().unwrap().queued_passages(), 0);

        write("a.md", &"alpha ".repeat(30));
        write("sub/b.md", "# B\n\nbeta, edited");
        write("d.md", "# D\n\ndelta");
        write("e.md", &"epsilon ".repeat(30));
        let second = index.reconcile_blocking(None).unwrap();
        assert_eq!(second.skipped_too_large, 2, "{second:?}");
        assert_eq!(
            second.removed, 1,
            "the note that grew too large should have gone: {second:?}"
        );
        assert_eq!((second.reparsed, second.unchanged), (2, 1), "{second:?}");
        assert_eq!(second.notes, 3, "{second:?}");
        assert_eq!(index.writer().unwrap().queued_passages(), 0);
        assert_eq!(index.status().notes, 3);
    }

    /// Only the first pass since the index was opened means the index is
    /// catching up, until it has committed: a first commit the disk refused
    /// still does, and a rescan of a complete index does not.
    #[test]
    fn only_the_first_pass_catches_up_until_it_commits() {
        use crate::index::directory::REFUSING_NEW_FILES;
        let temp = tempfile::tempdir().unwrap();
        let brain = std::fs::canonicalize(temp.path()).unwrap().join("brain");
        std::fs::create_dir_all(&brain).unwrap();
        std::fs::write(brain.join("a.md"), "# A\n\nalpha").unwrap();
        let index = open_index(&brain, 100);
        assert!(!index.status().catching_up(), "nothing asked for yet");

        REFUSING_NEW_FILES.lock().unwrap().push(brain.clone());
        index.reconcile_blocking(None).unwrap();
        REFUSING_NEW_FILES.lock().unwrap().retain(|p| *p != brain);
        let refused = index.status();
        assert!(
            refused.commit_error.is_some() && refused.catching_up(),
            "{refused:?}"
        );

        index.reconcile_blocking(None).unwrap();
        let done = index.status();
        assert!(
            done.commit_error.is_none() && !done.catching_up(),
            "{done:?}"
        );
        let mut rescan = done.clone();
        rescan.indexing = true;
        assert!(!rescan.catching_up(), "a rescan of a complete index");

        // An index opened only to read (another process writes) cannot tell.
        assert!(!IndexStatus::default().catching_up());
    }

    /// A first pass whose commit the disk refuses is tried again at the
    /// next command or after [`RETRY_FAILED_COMMIT`], not at once again
    /// and again as fast as the disk refuses it.
    #[test]
    fn a_refused_first_commit_is_not_tried_again_at_once() {
        use crate::index::directory::{REFUSED, REFUSING_NEW_FILES};
        let temp = tempfile::tempdir().unwrap();
        let brain = std::fs::canonicalize(temp.path()).unwrap().join("brain");
        std::fs::create_dir_all(&brain).unwrap();
        std::fs::write(brain.join("a.md"), "# A\n\nalpha").unwrap();
        let index = open_index(&brain, 100);
        let refusals = || {
            REFUSED
                .lock()
                .unwrap()
                .iter()
                .filter(|p| p.starts_with(&brain))
                .count()
        };
        REFUSING_NEW_FILES.lock().unwrap().push(brain.clone());
        index.reconcile_blocking(None).unwrap();
        let after_the_pass = refusals();
        assert!(after_the_pass > 0 && index.status().commit_error.is_some());
        std::thread::sleep(std::time::Duration::from_millis(500));
        let later = refusals();
        REFUSING_NEW_FILES.lock().unwrap().retain(|p| *p != brain);
        assert_eq!(
            later, after_the_pass,
            "the refused commit was tried again at once"
        );

        // The next command indexes it, once the disk takes files again.
        index.reconcile_blocking(None).unwrap();
        assert!(index.status().commit_error.is_none());
        assert_eq!(index.status().notes, 1);
    }

    /// A commit that fails (the disk refuses the new segment's files)
    /// leaves the index unhealthy; once the disk takes files again, the
    /// next command indexes what the failed commit had, and new notes too.
    #[test]
    fn what_a_failed_commit_had_is_indexed_once_the_disk_takes_files_again() {
        use crate::index::directory::REFUSING_NEW_FILES;
        let temp = tempfile::tempdir().unwrap();
        let brain = std::fs::canonicalize(temp.path()).unwrap().join("brain");
        std::fs::create_dir_all(&brain).unwrap();
        let write = |path: &str, text: &str| std::fs::write(brain.join(path), text).unwrap();
        write("a.md", "# A\n\nalpha");
        let index = open_index(&brain, 1_000);
        index.reconcile_blocking(None).unwrap();
        assert!(index.status().commit_error.is_none());
        let found = |word: &str| {
            let term = index.query_terms(word).remove(0);
            index.doc_freq(&term).0
        };
        assert_eq!(found("alpha"), 1);

        write("b.md", "# B\n\nbravo");
        REFUSING_NEW_FILES.lock().unwrap().push(brain.clone());
        index.reconcile_blocking(None).unwrap();
        REFUSING_NEW_FILES.lock().unwrap().retain(|p| *p != brain);
        assert!(index.status().commit_error.is_some());
        assert_eq!(found("bravo"), 0);

        write("c.md", "# C\n\ncharlie");
        let report = index.reconcile_blocking(None).unwrap();
        assert!(index.status().commit_error.is_none(), "{report:?}");
        assert_eq!(report.notes, 3, "{report:?}");
        for word in ["alpha", "bravo", "charlie"] {
            assert_eq!(found(word), 1, "{word}");
        }
        // Later notes are indexed too: the writer has its threads again.
        write("d.md", "# D\n\ndelta");
        index.reconcile_blocking(None).unwrap();
        assert_eq!(found("delta"), 1);
        assert_eq!(index.writer().unwrap().queued_passages(), 0);

        // A failed commit whose note is gone again by the next command:
        // nothing is left to index, and the index is healthy again.
        write("e.md", "# E\n\necho");
        REFUSING_NEW_FILES.lock().unwrap().push(brain.clone());
        index.reconcile_blocking(None).unwrap();
        REFUSING_NEW_FILES.lock().unwrap().retain(|p| *p != brain);
        assert!(index.status().commit_error.is_some());
        std::fs::remove_file(brain.join("e.md")).unwrap();
        let report = index.reconcile_blocking(None).unwrap();
        assert!(index.status().commit_error.is_none(), "{report:?}");
        assert_eq!((report.notes, found("echo")), (4, 0), "{report:?}");
    }

    #[test]
    fn the_notes_of_a_folder_that_cannot_be_read_are_not_gone() {
        let indexed: Vec<String> = [
            "a.md",
            "Decisions/x.md",
            "Decisions/deep/y.md",
            "Decisions2/z.md",
            "b.md",
        ]
        .map(String::from)
        .to_vec();
        let on_disk: std::collections::HashSet<&str> = ["a.md"].into_iter().collect();
        let gone = super::gone_notes(indexed.iter(), &on_disk, &["Decisions".to_string()]);
        assert_eq!(gone, ["Decisions2/z.md", "b.md"]);
    }

    #[test]
    fn manifest_entries_are_written_as_arrays() {
        use super::{FileIdentity, Manifest, ManifestEntry};
        let mut manifest = Manifest {
            schema: 5,
            ..Manifest::default()
        };
        let entry = ManifestEntry {
            size: 1,
            mtime_ns: -2,
            hash: u64::MAX,
            sections: 4,
            identity: FileIdentity {
                ino: 77,
                ctime_ns: -8,
            },
        };
        manifest.notes.insert("a.md".to_string(), entry.clone());
        let json = serde_json::to_string(&manifest).unwrap();
        assert!(
            json.contains(r#""a.md":[1,-2,18446744073709551615,4,77,-8]"#),
            "{json}"
        );
        let back: Manifest = serde_json::from_str(&json).unwrap();
        assert_eq!((back.schema, &back.notes["a.md"]), (5, &entry));
        // An entry of an earlier version has no identity: its file is read
        // once more.
        let before: Manifest =
            serde_json::from_str(r#"{"schema":5,"notes":{"a.md":[1,-2,3,4]}}"#).unwrap();
        assert_eq!(before.notes["a.md"].identity, FileIdentity::default());
        assert_eq!(before.notes["a.md"].hash, 3);
        assert!(
            serde_json::from_str::<Manifest>(r#"{"schema":5,"notes":{"a.md":[1,-2,3]}}"#).is_err()
        );
    }

    #[test]
    fn a_note_replaced_by_a_file_of_the_same_size_and_mtime_is_read_again() {
        let brain = tempfile::tempdir().unwrap();
        let index = open_index(brain.path(), 1 << 20);
        let same_time =
            std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        let write = |name: &str, text: &str| {
            let path = brain.path().join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(same_time)
                .unwrap();
        };
        write("a.md", "zqoldaa\n");
        write("b.md", "zqnewbb\n");
        index.reconcile_blocking(None).unwrap();
        let found = |word: &str| {
            index
                .search(word, &crate::index::SearchFilter::default(), 10)
                .unwrap()
                .into_iter()
                .map(|hit| hit.path)
                .collect::<Vec<_>>()
        };
        assert_eq!(found("zqoldaa"), ["a.md"]);
        // `mv b.md a.md`: the same size and mtime, another file.
        std::fs::rename(brain.path().join("b.md"), brain.path().join("a.md")).unwrap();
        let report = index.reconcile_blocking(None).unwrap();
        assert_eq!((report.reparsed, report.removed), (1, 1), "{report:?}");
        assert_eq!(found("zqnewbb"), ["a.md"]);
        assert!(found("zqoldaa").is_empty());
    }
}
