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

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};

use tantivy::directory::Directory;
use tantivy::indexer::{AddOperation, SegmentWriter};
use tantivy::{Index, Segment, SegmentMeta};

use super::{look, Looked, Manifest, ManifestEntry, Prepared, Progress};
use crate::brain::scan::{NotePath, ScanReport};
use crate::index::schema::Fields;

/// Notes a thread takes at a time: few enough that the threads start at
/// once and finish together, enough that taking them costs nothing.
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

/// What the threads of a first pass found and wrote.
#[derive(Default)]
pub(super) struct Written {
    /// Finished segments, not yet named by a commit.
    pub segments: Vec<SegmentMeta>,
    /// The manifest entries of the notes indexed.
    pub notes: Vec<(String, ManifestEntry)>,
    pub reparsed: usize,
    pub skipped_too_large: usize,
    pub unreadable: usize,
    pub frontmatter_unread: usize,
}

impl Written {
    fn add(&mut self, other: Written) {
        self.segments.extend(other.segments);
        self.notes.extend(other.notes);
        self.reparsed += other.reparsed;
        self.skipped_too_large += other.skipped_too_large;
        self.unreadable += other.unreadable;
        self.frontmatter_unread += other.frontmatter_unread;
    }
}

/// Indexes the notes `walk` lists into new segments of `index`, on
/// `threads` threads that take them as the walk hands them over (the walk
/// runs on this thread). `progress` hears (notes done, notes listed) once
/// the walk is done. Nothing is committed: on an error the segments
/// written are left for tantivy's garbage collection.
pub(super) fn write_segments(
    index: &Index,
    fields: &Fields,
    max_note_bytes: u64,
    threads: usize,
    walk: impl FnOnce(&mut dyn FnMut(NotePath)) -> Result<ScanReport, crate::brain::Error>,
    progress: Option<&Progress>,
) -> (
    tantivy::Result<Written>,
    Result<ScanReport, crate::brain::Error>,
) {
    // Each thread compresses its own documents for the store: a thread of
    // its own for that (tantivy's default) would take turns with the others
    // on every block.
    let mut index = index.clone();
    index.settings_mut().docstore_compress_dedicated_thread = false;
    let index = &index;
    let failed = AtomicBool::new(false);
    let (paths_tx, paths_rx) = mpsc::channel::<Vec<NotePath>>();
    let paths_rx = Mutex::new(paths_rx);
    let (done_tx, done_rx) = mpsc::channel::<usize>();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                let done_tx = done_tx.clone();
                let (paths, failed) = (&paths_rx, &failed);
                scope.spawn(move || {
                    let written =
                        write_some(index, fields, max_note_bytes, paths, failed, &done_tx);
                    if written.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    written
                })
            })
            .collect();
        drop(done_tx);
        let mut listed = 0;
        let mut taken = Vec::with_capacity(TAKE);
        let walked = walk(&mut |path| {
            listed += 1;
            taken.push(path);
            if taken.len() == TAKE {
                let _ = paths_tx.send(std::mem::replace(&mut taken, Vec::with_capacity(TAKE)));
            }
        });
        if !taken.is_empty() {
            let _ = paths_tx.send(taken);
        }
        drop(paths_tx);
        let mut done = 0;
        for count in done_rx {
            done += count;
            if let Some(progress) = progress {
                progress(done, listed);
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
        let written = match error {
            Some(error) => Err(error),
            None => Ok(all),
        };
        (written, walked)
    })
}

/// One thread's share: takes notes as they are listed until there are no
/// more (or another thread failed), indexing them into a segment of its own.
fn write_some(
    index: &Index,
    fields: &Fields,
    max_note_bytes: u64,
    paths: &Mutex<mpsc::Receiver<Vec<NotePath>>>,
    failed: &AtomicBool,
    done: &mpsc::Sender<usize>,
) -> tantivy::Result<Written> {
    let empty = Manifest::default();
    let mut written = Written::default();
    let mut open: Option<(Segment, SegmentWriter)> = None;
    // Notes done and not yet told: told a few hundred at a time, since each
    // message wakes the thread that waits for them.
    let mut untold = 0;
    loop {
        let taken = paths.lock().expect("note queue lock poisoned").recv();
        let Ok(taken) = taken else { break };
        if failed.load(Ordering::Relaxed) {
            break;
        }
        for path in &taken {
            match look(fields, &empty, max_note_bytes, path, None) {
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
                    written.notes.push((
                        file.rel_path,
                        ManifestEntry {
                            size: file.size,
                            mtime_ns: file.mtime_ns,
                            hash,
                            sections,
                            identity: file.identity,
                        },
                    ));
                    if writer.mem_usage() >= SEGMENT_BUDGET - SEGMENT_MARGIN {
                        if let Some(full) = open.take() {
                            written.segments.push(finish(full)?);
                        }
                    }
                }
                // Gone since the listing, or not a file: nothing to index.
                Looked::Note(_, Prepared::Unchanged | Prepared::Touched) | Looked::Gone => {}
                Looked::TooLarge => written.skipped_too_large += 1,
                Looked::Unreadable => written.unreadable += 1,
            }
        }
        untold += taken.len();
        if untold >= TELL_EVERY {
            let _ = done.send(std::mem::take(&mut untold));
        }
    }
    let _ = done.send(untold);
    if let Some(last) = open {
        written.segments.push(finish(last)?);
    }
    Ok(written)
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
    payload: String,
) -> tantivy::Result<()> {
    let mut meta = index.load_metas()?;
    meta.segments = segments;
    meta.opstamp += 1;
    meta.payload = Some(payload);
    // Compact, where tantivy writes it pretty: the manifest in it is most
    // of it, and it is read by programs.
    let mut json = serde_json::to_vec(&meta)?;
    json.push(b'\n');
    let directory = index.directory();
    directory.sync_directory()?;
    directory.atomic_write(Path::new("meta.json"), &json)?;
    Ok(())
}
