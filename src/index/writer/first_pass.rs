//! The first pass into an empty index: every core reads, parses and indexes
//! notes into a segment of its own.
//!
//! Through tantivy's `IndexWriter`, reading and parsing ran on one set of
//! threads and indexing on another, with a queue between them: on a machine
//! of two cores, five busy threads took turns, and the indexing threads
//! waited for the first notes to be parsed. An empty index has nothing to
//! delete and nothing to merge with, so here each core takes notes a few at
//! a time, reads, parses and indexes them into its own tantivy
//! `SegmentWriter`, and finishes its segment; the segments are then made
//! durable and named in one commit, with the manifest as its payload, as
//! `IndexWriter::commit` would. The writer thread drops its `IndexWriter`
//! first and makes it again after, so there is still one writer of the
//! index at a time.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

use serde_json::value::RawValue;
use tantivy::directory::Directory;
use tantivy::indexer::{AddOperation, SegmentWriter};
use tantivy::{Index, IndexMeta, Segment, SegmentMeta};

use super::{look, Looked, Manifest, ManifestEntry, Prepared, Progress};
use crate::brain::scan::{BrainDir, NotePath, ScanReport};
use crate::index::schema::Fields;

/// Notes a thread takes at most at a time, and notes the walk hands over
/// at a time: enough that taking them costs nothing next to indexing them.
const TAKE: usize = 16;

/// Notes a thread has done before it says so (for the progress shown).
const TELL_EVERY: usize = 256;

/// Memory a thread's segment may buffer before it is finished and another
/// begun: as much as each of the `IndexWriter`'s threads
/// (`super::super::WRITER_BUDGET_PER_THREAD`).
const SEGMENT_BUDGET: usize = super::super::WRITER_BUDGET_PER_THREAD;

/// What tantivy leaves free in a segment's budget (its `MARGIN_IN_BYTES`).
const SEGMENT_MARGIN: usize = 1_000_000;

/// The budget tantivy sizes a segment's term table by (a third of it, up to
/// 2^19 slots of 8 bytes; the `IndexWriter`'s 15 MB least gives the most).
/// The table doubles as terms come; one of 2^15 slots to start with misses
/// the CPU's caches less (cold index of tldr-pages: CPU 0.70 of `e59017a`
/// against 0.72 with 2^19).
const TABLE_BUDGET: usize = 1_000_000;

/// What a first pass reads notes with.
#[derive(Clone, Copy)]
pub(super) struct Reading<'a> {
    pub fields: &'a Fields,
    pub max_note_bytes: u64,
    /// The brain's folder held open, to open notes from.
    pub dir: Option<&'a BrainDir>,
}

/// What the threads of a first pass wrote, and the manifest of it.
pub(super) struct Pass {
    pub written: Written,
    pub manifest: Manifest,
    /// The manifest as the commit's payload: a JSON string of its JSON, as
    /// `meta.json` holds it.
    pub payload: Box<RawValue>,
}

/// What the threads of a first pass found and wrote.
#[derive(Default)]
pub(super) struct Written {
    /// Finished segments, not yet named by a commit.
    pub segments: Vec<SegmentMeta>,
    pub reparsed: usize,
    pub skipped_too_large: usize,
    pub unreadable: usize,
    pub frontmatter_unread: usize,
}

impl Written {
    fn add(&mut self, other: Written) {
        self.segments.extend(other.segments);
        self.reparsed += other.reparsed;
        self.skipped_too_large += other.skipped_too_large;
        self.unreadable += other.unreadable;
        self.frontmatter_unread += other.frontmatter_unread;
    }
}

/// What a thread tells the thread that waits for the first pass.
enum Told {
    /// So many more notes done, with the manifest entries of those indexed.
    Done(usize, Vec<(String, ManifestEntry)>),
    /// No notes left: the thread finishes its segment.
    Finishing,
}

/// Indexes the notes `walk` lists into new segments of `index`, on
/// `threads` threads that take them as the walk hands them over (the walk
/// runs on this thread, which then gathers the manifest, and makes it the
/// payload while the segments are finished). `progress` hears (notes done,
/// notes listed) once the walk is done. Nothing is committed: on an error
/// the segments written are left for tantivy's garbage collection.
pub(super) fn write_segments(
    index: &Index,
    reading: Reading,
    threads: usize,
    walk: impl FnOnce(&mut dyn FnMut(NotePath)) -> Result<ScanReport, crate::brain::Error>,
    progress: Option<&Progress>,
) -> (
    tantivy::Result<Pass>,
    Result<ScanReport, crate::brain::Error>,
) {
    // Each thread compresses its own documents for the store: a thread of
    // its own for that (tantivy's default) would take turns with the others
    // on every block.
    let mut index = index.clone();
    index.settings_mut().docstore_compress_dedicated_thread = false;
    let index = &index;
    let failed = AtomicBool::new(false);
    let queue = Queue::default();
    let (done_tx, done_rx) = mpsc::channel::<Told>();
    let threads = threads.max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let done_tx = done_tx.clone();
                let (queue, failed) = (&queue, &failed);
                scope.spawn(move || {
                    let written = write_some(index, threads, reading, queue, failed, &done_tx);
                    if written.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    written
                })
            })
            .collect();
        drop(done_tx);
        let mut listed = 0;
        let mut found = Vec::with_capacity(TAKE);
        // The walk is done when it returns, and also if it panics: the
        // threads must not wait for it then.
        let walk_done = Walked(&queue);
        let walked = walk(&mut |path| {
            listed += 1;
            found.push(path);
            if found.len() == TAKE {
                queue.add(&mut found, false);
            }
        });
        queue.add(&mut found, false);
        drop(walk_done);
        let mut manifest = Manifest {
            schema: super::SCHEMA_VERSION,
            notes: rustc_hash::FxHashMap::with_capacity_and_hasher(listed, Default::default()),
        };
        let mut payload = None;
        let (mut done, mut finishing) = (0, 0);
        for told in done_rx {
            match told {
                Told::Done(count, entries) => {
                    done += count;
                    manifest.notes.extend(entries);
                    if let Some(progress) = progress {
                        progress(done, listed);
                    }
                }
                Told::Finishing => {
                    finishing += 1;
                    if finishing == threads {
                        payload = Some(payload_of(&manifest));
                    }
                }
            }
        }
        let mut all = Written::default();
        let mut error = None;
        for worker in workers {
            match worker.join() {
                Ok(Ok(written)) => all.add(written),
                Ok(Err(e)) => error = error.or(Some(e)),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        let payload = payload
            .unwrap_or_else(|| payload_of(&manifest))
            .map_err(|e| tantivy::TantivyError::InternalError(e.to_string()));
        let written = match (error, payload) {
            (Some(error), _) | (None, Err(error)) => Err(error),
            (None, Ok(payload)) => Ok(Pass {
                written: all,
                manifest,
                payload,
            }),
        };
        (written, walked)
    })
}

/// The manifest as the commit's payload: its JSON as a JSON string, made
/// while the segments are finished rather than when `meta.json` is written.
fn payload_of(manifest: &Manifest) -> serde_json::Result<Box<RawValue>> {
    serde_json::value::to_raw_value(&serde_json::to_string(manifest)?)
}

/// One thread's share: takes notes as they are listed until there are no
/// more (or another thread failed), indexing them into a segment of its own.
fn write_some(
    index: &Index,
    threads: usize,
    reading: Reading,
    queue: &Queue,
    failed: &AtomicBool,
    done: &mpsc::Sender<Told>,
) -> tantivy::Result<Written> {
    let empty = Manifest::default();
    let mut written = Written::default();
    let mut open: Option<(Segment, SegmentWriter)> = None;
    // Notes done and not yet told: told a few hundred at a time, since each
    // message wakes the thread that waits for them.
    let mut untold = 0;
    let mut entries = Vec::new();
    let mut taken = Vec::with_capacity(TAKE);
    while queue.take(&mut taken, threads) && !failed.load(Ordering::Relaxed) {
        for path in &taken {
            match look(
                reading.fields,
                &empty,
                reading.max_note_bytes,
                path,
                None,
                reading.dir,
            ) {
                Looked::Note(
                    file,
                    Prepared::Parsed {
                        hash,
                        docs,
                        frontmatter_unread,
                    },
                ) => {
                    let (_, writer) = match &mut open {
                        Some(open) => open,
                        None => open.insert(new_segment(index)?),
                    };
                    let sections = docs.len() as u32;
                    // A note's passages side by side in one segment, as
                    // note-level ranking reads them.
                    for document in docs {
                        writer.add_document(AddOperation {
                            opstamp: 0,
                            document,
                        })?;
                    }
                    written.reparsed += 1;
                    written.frontmatter_unread += usize::from(frontmatter_unread);
                    let entry = ManifestEntry::of(&file, hash, sections);
                    entries.push((file.rel_path, entry));
                    if writer.mem_usage() >= SEGMENT_BUDGET - SEGMENT_MARGIN {
                        if let Some(full) = open.take() {
                            written.segments.push(finish(full)?);
                        }
                    }
                }
                // Gone since the listing, or not a file: nothing to index.
                // (Unchanged and touched notes are the manifest's, and it
                // has none.)
                Looked::Note(_, Prepared::Unchanged | Prepared::Touched) | Looked::Gone => {}
                Looked::TooLarge => written.skipped_too_large += 1,
                Looked::Unreadable => written.unreadable += 1,
            }
        }
        untold += taken.len();
        if untold >= TELL_EVERY {
            let _ = done.send(Told::Done(
                std::mem::take(&mut untold),
                std::mem::take(&mut entries),
            ));
        }
    }
    let _ = done.send(Told::Done(untold, entries));
    if !failed.load(Ordering::Relaxed) {
        let _ = done.send(Told::Finishing);
    }
    if let Some(last) = open {
        written.segments.push(finish(last)?);
    }
    Ok(written)
}

/// The notes listed and not yet taken, and whether the walk is done.
#[derive(Default)]
struct Queue {
    notes: Mutex<(VecDeque<NotePath>, bool)>,
    added: Condvar,
}

impl Queue {
    /// Adds the notes in `found` (emptying it); `last` when the walk is done.
    fn add(&self, found: &mut Vec<NotePath>, last: bool) {
        let mut queue = self.notes.lock().expect("note queue lock poisoned");
        queue.0.extend(found.drain(..));
        queue.1 |= last;
        drop(queue);
        self.added.notify_all();
    }

    /// Takes notes into `taken` (emptied first), waiting for the walk if
    /// none are listed yet; false when there are no more. As the queue runs
    /// short each of the `threads` takes fewer, so that they run out
    /// together: one left with a batch of long notes would finish them
    /// alone.
    fn take(&self, taken: &mut Vec<NotePath>, threads: usize) -> bool {
        taken.clear();
        let mut queue = self.notes.lock().expect("note queue lock poisoned");
        loop {
            let (notes, walked) = &mut *queue;
            if !notes.is_empty() {
                let n = (notes.len() / (4 * threads)).clamp(1, TAKE);
                taken.extend(notes.drain(..n));
                return true;
            }
            if *walked {
                return false;
            }
            queue = self.added.wait(queue).expect("note queue lock poisoned");
        }
    }
}

/// Tells the queue the walk is done when dropped.
struct Walked<'a>(&'a Queue);

impl Drop for Walked<'_> {
    fn drop(&mut self) {
        self.0.add(&mut Vec::new(), true);
    }
}

fn new_segment(index: &Index) -> tantivy::Result<(Segment, SegmentWriter)> {
    let segment = index.new_segment();
    let writer = SegmentWriter::for_segment(TABLE_BUDGET, segment.clone())?;
    Ok((segment, writer))
}

/// Writes a segment's files and returns what the commit says of it.
fn finish((segment, writer): (Segment, SegmentWriter)) -> tantivy::Result<SegmentMeta> {
    let max_doc = writer.max_doc();
    writer.finalize()?;
    let meta = segment.with_max_doc(max_doc).meta().clone();
    // No documents were sorted, so no temporary document store is kept.
    meta.untrack_temp_docstore();
    Ok(meta)
}

/// Commits `segments` as the index's only ones, with `payload`: their files
/// made durable first, then `meta.json` replaced at once, as tantivy's own
/// commit does. Only for an index that has no segments and no writer.
pub(super) fn commit_segments(
    index: &Index,
    segments: Vec<SegmentMeta>,
    payload: &RawValue,
) -> tantivy::Result<()> {
    /// `meta.json`: tantivy's `IndexMeta`, with the payload written as made.
    #[derive(serde::Serialize)]
    struct Commit<'a> {
        #[serde(flatten)]
        meta: &'a IndexMeta,
        payload: &'a RawValue,
    }
    let mut meta = index.load_metas()?;
    meta.segments = segments;
    meta.opstamp += 1;
    meta.payload = None;
    // Compact, where tantivy writes it pretty: the manifest in it is most
    // of it, and it is read by programs.
    let mut json = serde_json::to_vec(&Commit {
        meta: &meta,
        payload,
    })?;
    json.push(b'\n');
    let directory = index.directory();
    directory.sync_directory()?;
    directory.atomic_write(Path::new("meta.json"), &json)?;
    Ok(())
}
