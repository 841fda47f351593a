//! A bound on the passages handed to tantivy and not yet indexed.
//!
//! On a large brain, reading and parsing run ahead of indexing: without a
//! bound, most of the brain would wait in tantivy's queue as documents, which
//! is memory that makes nothing faster. Each queued passage holds a ticket;
//! tantivy drops the document, and with it the ticket, once it has indexed
//! it. The writer thread waits for room before it queues more.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use tantivy::schema::document::Document;
use tantivy::TantivyDocument;

/// Queued passages above which the writer waits …
const MAX_QUEUED_PASSAGES: usize = 8_192;
/// … until no more than this many are left: enough to keep the indexing
/// threads busy while the next chunk of notes is read and parsed.
const RESUME_AT_PASSAGES: usize = MAX_QUEUED_PASSAGES / 2;

/// How long the writer waits without the queue getting any shorter before
/// it stops waiting: the queue then has no bound until it is shorter than it
/// was then. Only a fault stops indexing that long (tantivy's indexing
/// threads gone, say: the writer's next commit reports it); a segment being
/// written takes a fraction of it.
const STALLED_AFTER: Duration = Duration::from_secs(10);

/// The count of queued passages, shared by the writer thread and tantivy's
/// indexing threads.
pub(super) struct Backlog {
    queued: AtomicUsize,
    /// The count at which a wait found the queue stalled, else `usize::MAX`.
    stalled_at: AtomicUsize,
    stalled_after: Duration,
    lock: Mutex<()>,
    drained: Condvar,
}

impl Default for Backlog {
    fn default() -> Self {
        Backlog::new(STALLED_AFTER)
    }
}

impl Backlog {
    fn new(stalled_after: Duration) -> Self {
        Backlog {
            queued: AtomicUsize::new(0),
            stalled_at: AtomicUsize::new(usize::MAX),
            stalled_after,
            lock: Mutex::new(()),
            drained: Condvar::new(),
        }
    }

    /// Wraps a document for the queue, counting it until it is dropped.
    pub(super) fn queue(self: &Arc<Self>, doc: TantivyDocument) -> QueuedDoc {
        self.queued.fetch_add(1, Ordering::SeqCst);
        QueuedDoc {
            doc: Box::new(doc),
            _ticket: Ticket(self.clone()),
        }
    }

    pub(super) fn queued(&self) -> usize {
        self.queued.load(Ordering::SeqCst)
    }

    /// Returns at once while fewer than [`MAX_QUEUED_PASSAGES`] wait;
    /// otherwise waits until indexing has brought them down to
    /// [`RESUME_AT_PASSAGES`], or until the queue has not got shorter for
    /// [`STALLED_AFTER`] (and then does not wait again until it is shorter
    /// than it was then: documents of a failed `run` leave the queue without
    /// being indexed, and must not count as indexing).
    pub(super) fn wait_for_room(&self) {
        let queued = self.queued();
        if queued < MAX_QUEUED_PASSAGES || self.stalled() {
            return;
        }
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut last = self.queued();
        while last > RESUME_AT_PASSAGES {
            let (next, wait) = self
                .drained
                .wait_timeout(guard, self.stalled_after)
                .unwrap_or_else(|e| e.into_inner());
            guard = next;
            let now = self.queued();
            if wait.timed_out() && now >= last {
                tracing::warn!(
                    queued = now,
                    "indexing has stalled; queuing notes without waiting for it"
                );
                self.stalled_at.store(now, Ordering::SeqCst);
                return;
            }
            last = now;
        }
        self.stalled_at.store(usize::MAX, Ordering::SeqCst);
    }

    /// True while the queue is no shorter than when a wait found it stalled.
    fn stalled(&self) -> bool {
        self.queued() >= self.stalled_at.load(Ordering::SeqCst)
    }

    fn done(&self) {
        let before = self.queued.fetch_sub(1, Ordering::SeqCst);
        if before == RESUME_AT_PASSAGES + 1 {
            // Under the lock: the writer is either not waiting yet (and will
            // see the new count) or already waiting (and is woken).
            let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.drained.notify_all();
        }
    }
}

struct Ticket(Arc<Backlog>);

impl Drop for Ticket {
    fn drop(&mut self) {
        self.0.done();
    }
}

/// A passage document in tantivy's queue: indexed as the document it wraps.
pub struct QueuedDoc {
    /// Boxed: tantivy's queue is made, all of its 10,000 slots of four
    /// documents written, before the first note is read; a slot of boxed
    /// documents is 112 bytes rather than 272 (1.6 MB less to write at every
    /// start, 2–3 MB less peak RSS on a cold index of the tldr pages).
    doc: Box<TantivyDocument>,
    _ticket: Ticket,
}

impl Document for QueuedDoc {
    type Value<'a>
        = <TantivyDocument as Document>::Value<'a>
    where
        Self: 'a;
    type FieldsValuesIter<'a>
        = <TantivyDocument as Document>::FieldsValuesIter<'a>
    where
        Self: 'a;

    fn iter_fields_and_values(&self) -> Self::FieldsValuesIter<'_> {
        self.doc.iter_fields_and_values()
    }

    fn into_tantivy_document(self) -> TantivyDocument {
        *self.doc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count follows the documents' lives, and a writer waiting for
    /// room is let go once indexing has taken half of the queue.
    #[test]
    fn the_writer_waits_until_half_the_queue_is_indexed() {
        // Never stalled here: only the wake-up lets the writer go.
        let backlog = Arc::new(Backlog::new(Duration::from_secs(3600)));
        let docs: Vec<QueuedDoc> = (0..MAX_QUEUED_PASSAGES)
            .map(|_| backlog.queue(TantivyDocument::default()))
            .collect();
        assert_eq!(backlog.queued(), MAX_QUEUED_PASSAGES);
        let (sent, received) = std::sync::mpsc::channel::<QueuedDoc>();
        let indexer = std::thread::spawn(move || {
            // Takes the queue one document at a time, as tantivy does.
            for doc in received {
                drop(doc);
            }
        });
        let waiting = {
            let backlog = backlog.clone();
            std::thread::spawn(move || {
                backlog.wait_for_room();
                backlog.queued()
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiting.is_finished(), "the writer did not wait");
        for doc in docs {
            sent.send(doc).unwrap();
        }
        // Generous: the writer is woken as soon as half is indexed.
        for _ in 0..600 {
            if waiting.is_finished() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(waiting.is_finished(), "the writer was not woken");
        let left = waiting.join().unwrap();
        assert!(left <= RESUME_AT_PASSAGES, "let go with {left} queued");
        drop(sent);
        indexer.join().unwrap();
        assert_eq!(backlog.queued(), 0);
    }

    /// Indexing that stops (its threads gone) must not hang the writer,
    /// nor make it wait again for each note whose documents a failed `run`
    /// drops at once.
    #[test]
    fn a_stalled_queue_lets_the_writer_go() {
        let backlog = Arc::new(Backlog::new(Duration::from_millis(100)));
        let mut docs: Vec<QueuedDoc> = (0..MAX_QUEUED_PASSAGES)
            .map(|_| backlog.queue(TantivyDocument::default()))
            .collect();
        backlog.wait_for_room();
        assert!(backlog.stalled());
        // A failed run: queued and dropped at once, still stalled.
        drop(backlog.queue(TantivyDocument::default()));
        assert!(backlog.stalled());
        // Once the queue gets shorter, the bound is back.
        docs.pop();
        assert!(!backlog.stalled());
        drop(docs);
        assert_eq!(backlog.queued(), 0);
    }

    #[test]
    fn a_short_queue_does_not_wait() {
        let backlog = Arc::new(Backlog::default());
        let doc = backlog.queue(TantivyDocument::default());
        backlog.wait_for_room();
        drop(doc);
        assert_eq!(backlog.queued(), 0);
    }
}
