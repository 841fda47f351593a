//! Following changes to the brain on disk.
//!
//! The whole brain folder is watched recursively (folders, not files, because
//! editors save by writing a temporary file and renaming it over the note).
//! Events are debounced for about 250 ms and turned into [`Change`]s: note
//! paths to re-read, or a rescan when a folder moved. If the native watcher
//! cannot start or fails later (the inotify limit, say), noggin falls back to
//! rescanning periodically and says so in its status.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{new_debouncer_opt, DebounceEventResult, RecommendedCache};
use serde::Serialize;

use super::scan::{is_note_path, relative_path};

/// How to follow the brain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WatchMode {
    /// Native file events, falling back to polling if they fail.
    Auto,
    /// Periodic rescans only.
    Poll,
    /// Do not follow changes.
    Off,
}

/// A change the index must take in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// These notes (relative paths) were created, edited or removed.
    Notes(Vec<String>),
    /// Something larger changed (a folder moved): compare everything.
    Rescan,
}

/// What `/v1/status` says about the watcher.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WatchState {
    /// "watching", "polling" or "off".
    pub state: &'static str,
    /// Why noggin is polling, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
}

type Sink = Arc<dyn Fn(Change) + Send + Sync>;

type NativeDebouncer =
    notify_debouncer_full::Debouncer<notify::RecommendedWatcher, RecommendedCache>;

/// Keeps the watcher (or poller) alive; dropping it stops following changes.
pub struct Watcher {
    state: Arc<Mutex<WatchState>>,
    /// Held only to keep the native watcher alive; the mutex makes it `Sync`.
    _debouncer: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    stop: Arc<AtomicBool>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Watcher {
    pub fn state(&self) -> WatchState {
        self.state
            .lock()
            .expect("watch state lock poisoned")
            .clone()
    }
}

/// Debounce window for file events.
const DEBOUNCE_MS: u64 = 250;

/// Starts following the brain at `root` (canonical); `sink` receives changes
/// on a background thread.
pub fn watch_brain(root: &Path, mode: WatchMode, poll_interval: Duration, sink: Sink) -> Watcher {
    let stop = Arc::new(AtomicBool::new(false));
    let state = Arc::new(Mutex::new(WatchState {
        state: "off",
        reason: None,
        poll_interval_ms: None,
    }));
    let mut watcher = Watcher {
        state: state.clone(),
        _debouncer: Mutex::new(None),
        stop: stop.clone(),
    };
    match mode {
        WatchMode::Off => {}
        WatchMode::Poll => {
            start_polling(&state, &stop, poll_interval, sink, "polling was asked for")
        }
        WatchMode::Auto => match start_native(root, &state, &stop, poll_interval, sink.clone()) {
            Ok(debouncer) => {
                watcher._debouncer = Mutex::new(Some(debouncer));
                state.lock().expect("watch state lock poisoned").state = "watching";
            }
            Err(error) => {
                tracing::warn!(%error, "file watching failed; rescanning periodically instead");
                start_polling(
                    &state,
                    &stop,
                    poll_interval,
                    sink,
                    &format!("watcher failed: {error}"),
                );
            }
        },
    }
    watcher
}

fn start_polling(
    state: &Arc<Mutex<WatchState>>,
    stop: &Arc<AtomicBool>,
    interval: Duration,
    sink: Sink,
    reason: &str,
) {
    {
        let mut s = state.lock().expect("watch state lock poisoned");
        if s.state == "polling" {
            return;
        }
        *s = WatchState {
            state: "polling",
            reason: Some(reason.to_string()),
            poll_interval_ms: Some(interval.as_millis() as u64),
        };
    }
    let stop = stop.clone();
    let spawned = std::thread::Builder::new()
        .name("noggin-poller".to_string())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(interval);
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                sink(Change::Rescan);
            }
        });
    if let Err(error) = spawned {
        tracing::error!(%error, "cannot start the poller");
    }
}

fn start_native(
    root: &Path,
    state: &Arc<Mutex<WatchState>>,
    stop: &Arc<AtomicBool>,
    poll_interval: Duration,
    sink: Sink,
) -> Result<Box<dyn std::any::Any + Send>, notify::Error> {
    let root_owned = root.to_path_buf();
    let rescan = sink.clone();
    let state_for_events = state.clone();
    let stop_for_events = stop.clone();
    // Symlinks are no notes (`scan`); following them would also watch one
    // folder under two paths, and report its changes under the link's.
    let mut debouncer: NativeDebouncer = new_debouncer_opt(
        Duration::from_millis(DEBOUNCE_MS),
        None,
        move |result: DebounceEventResult| match result {
            Ok(events) => {
                if let Some(change) = change_of(&root_owned, &events) {
                    sink(change);
                }
            }
            Err(errors) => {
                let reason = errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ");
                tracing::warn!(%reason, "file watcher reported errors; rescanning periodically");
                start_polling(
                    &state_for_events,
                    &stop_for_events,
                    poll_interval,
                    sink.clone(),
                    &format!("watcher failed: {reason}"),
                );
                sink(Change::Rescan);
            }
        },
        RecommendedCache::new(),
        notify::Config::default().with_follow_symlinks(false),
    )?;
    debouncer.watch(root, RecursiveMode::Recursive)?;
    let debouncer = Arc::new(Mutex::new(debouncer));
    follow_the_folder_at(root, &debouncer, stop, poll_interval, rescan);
    Ok(Box::new(debouncer))
}

/// Identifies a folder on its disk, whatever its path.
fn folder_identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_dir())
        .map(|m| (m.dev(), m.ino()))
}

/// File events follow a folder, not its path: when the brain is moved away
/// or deleted and another folder takes its path (a restore, a fresh clone),
/// the events stop. Every `interval` the path is looked at again, and a new
/// folder there is watched in the old one's place and compared in full.
fn follow_the_folder_at(
    root: &Path,
    debouncer: &Arc<Mutex<NativeDebouncer>>,
    stop: &Arc<AtomicBool>,
    interval: Duration,
    sink: Sink,
) {
    let Some(mut watched) = folder_identity(root) else {
        return;
    };
    let (root, debouncer, stop) = (root.to_path_buf(), debouncer.clone(), stop.clone());
    let spawned = std::thread::Builder::new()
        .name("noggin-brain-path".to_string())
        .spawn(move || loop {
            std::thread::sleep(interval);
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let Some(now) = folder_identity(&root).filter(|now| *now != watched) else {
                continue;
            };
            {
                let mut debouncer = debouncer.lock().expect("watcher lock poisoned");
                // The old folder's watches go first: it may live on elsewhere.
                let _ = debouncer.unwatch(&root);
                if let Err(error) = debouncer.watch(&root, RecursiveMode::Recursive) {
                    tracing::warn!(%error, "cannot watch the brain's new folder");
                    continue;
                }
            }
            tracing::info!(brain = %root.display(), "a new folder took the brain's path; following it");
            watched = now;
            sink(Change::Rescan);
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "cannot follow the brain's path; a folder made there later is seen at restart");
    }
}

/// What a batch of debounced events asks of the index. Events the kernel
/// could not queue (its queue overflowed: the brain changed faster than
/// noggin read, on a loaded or suspended machine) are lost, and the
/// watcher says so with an event that asks for a rescan: then the whole
/// brain is compared, since any note may have changed unseen.
fn change_of(root: &Path, events: &[notify_debouncer_full::DebouncedEvent]) -> Option<Change> {
    if events.iter().any(|e| e.need_rescan()) {
        tracing::warn!(
            "file events were lost (the kernel's queue overflowed); comparing the whole brain"
        );
        return Some(Change::Rescan);
    }
    let paths = events
        .iter()
        .filter(|e| is_change(&e.kind))
        .flat_map(|e| e.paths.iter());
    classify_paths(root, paths)
}

/// False for events that only report reading (a file or folder opened, read
/// or closed unwritten): noggin's own scans cause those, and treating them as
/// changes would make every rescan trigger the next one.
fn is_change(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// Turns changed absolute paths into what the index must do; `None` when
/// nothing of interest changed (hidden files, the index itself, images).
pub fn classify_paths<'a>(root: &Path, paths: impl Iterator<Item = &'a PathBuf>) -> Option<Change> {
    let mut notes = Vec::new();
    for path in paths {
        let Some(rel) = relative_path(root, path) else {
            continue;
        };
        let hidden = rel
            .split('/')
            .any(|c| c.starts_with('.') || c == "node_modules");
        if hidden {
            continue;
        }
        if is_note_path(&rel) {
            if !notes.contains(&rel) {
                notes.push(rel);
            }
        } else if !path.is_file() {
            // A folder appeared, moved or vanished: its notes did too.
            return Some(Change::Rescan);
        }
    }
    (!notes.is_empty()).then_some(Change::Notes(notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_classified() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("image.png"), b"png").unwrap();
        std::fs::create_dir(root.join("folder")).unwrap();
        let p = |s: &str| root.join(s);
        let cases: Vec<(Vec<PathBuf>, Option<Change>)> = vec![
            (
                vec![p("a.md"), p("a.md"), p("b/c.md")],
                Some(Change::Notes(vec!["a.md".into(), "b/c.md".into()])),
            ),
            (
                vec![p(".noggin/index/meta.json"), p(".obsidian/w.json")],
                None,
            ),
            (vec![p("image.png")], None),
            (vec![p(".tmpX1y2")], None),
            (vec![p("folder")], Some(Change::Rescan)),
            (vec![p("moved-away")], Some(Change::Rescan)),
            (vec![PathBuf::from("/elsewhere/x.md")], None),
        ];
        for (paths, expected) in cases {
            assert_eq!(classify_paths(root, paths.iter()), expected, "{paths:?}");
        }
    }

    #[test]
    fn lost_events_ask_for_a_rescan() {
        use notify::event::{Flag, ModifyKind};
        use notify_debouncer_full::DebouncedEvent;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let edit = DebouncedEvent::new(
            notify::Event::new(EventKind::Modify(ModifyKind::Any)).add_path(root.join("a.md")),
            std::time::Instant::now(),
        );
        let overflow = DebouncedEvent::new(
            notify::Event::new(EventKind::Other).set_flag(Flag::Rescan),
            std::time::Instant::now(),
        );
        assert_eq!(
            change_of(root, std::slice::from_ref(&edit)),
            Some(Change::Notes(vec!["a.md".into()]))
        );
        assert_eq!(change_of(root, &[edit, overflow]), Some(Change::Rescan));
    }

    #[test]
    fn reading_is_no_change() {
        use notify::event::{CreateKind, ModifyKind};
        let cases = [
            (EventKind::Access(AccessKind::Open(AccessMode::Any)), false),
            (EventKind::Access(AccessKind::Read), false),
            (
                EventKind::Access(AccessKind::Close(AccessMode::Read)),
                false,
            ),
            (
                EventKind::Access(AccessKind::Close(AccessMode::Write)),
                true,
            ),
            (EventKind::Create(CreateKind::File), true),
            (EventKind::Modify(ModifyKind::Any), true),
            (EventKind::Any, true),
        ];
        for (kind, expected) in cases {
            assert_eq!(is_change(&kind), expected, "{kind:?}");
        }
    }
}
