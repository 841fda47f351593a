//! Following changes to the brain on disk.
//!
//! Folders are watched, not files, because editors save by writing a
//! temporary file and renaming it over the note. On Linux each folder that
//! is part of the brain is watched alone, for writes only
//! ([`inotify`](super::inotify)): `.git`, `node_modules` and noggin's own
//! `.noggin` take no watches and wake nothing. Elsewhere the brain is
//! watched recursively through `notify`. Events are gathered until the
//! brain has been quiet for 250 ms (or for at most a second, so that a note
//! saved again and again is still followed) and turned into [`Change`]s:
//! note paths to re-read, or a rescan when a folder moved or events were
//! lost. If the native watcher cannot start or fails later (the limit of
//! watched folders, say), noggin falls back to rescanning periodically and
//! says so in its status; on Linux it tries watching again every 30 s.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
#[cfg(not(target_os = "linux"))]
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[cfg(not(target_os = "linux"))]
use notify::event::{AccessKind, AccessMode, EventKind};
use serde::Serialize;

use super::scan::{is_hidden_path, is_note_path, relative_path};

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
    /// "watching", "polling", "waiting" (the brain's folder is gone; on
    /// Linux) or "off".
    pub state: &'static str,
    /// Why noggin is polling or waiting, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// Which poller is the current one: a poller whose number is no longer
    /// this one ends (watching came back).
    #[serde(skip)]
    poller: u64,
}

impl WatchState {
    /// Not following changes.
    pub fn off() -> WatchState {
        WatchState {
            state: "off",
            reason: None,
            poll_interval_ms: None,
            poller: 0,
        }
    }
}

type Sink = Arc<dyn Fn(Change) + Send + Sync>;

#[cfg(not(target_os = "linux"))]
type NativeWatcher = notify::RecommendedWatcher;

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

/// File events are handed on once the brain has been quiet this long (a
/// save is a burst of events: a temporary file written, renamed, closed).
const QUIET: Duration = Duration::from_millis(250);
/// ... or once the first of them has waited this long, so that a note
/// saved again and again (more often than [`QUIET`]) is still indexed as
/// it goes, about every second, rather than only when the saves stop.
const MAX_WAIT: Duration = Duration::from_secs(1);

/// Starts following the brain at `root` (canonical); `sink` receives changes
/// on a background thread.
pub fn watch_brain(root: &Path, mode: WatchMode, poll_interval: Duration, sink: Sink) -> Watcher {
    let stop = Arc::new(AtomicBool::new(false));
    let state = Arc::new(Mutex::new(WatchState::off()));
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
                let mut state = state.lock().expect("watch state lock poisoned");
                // Unless it fell back to polling already.
                if state.state == "off" {
                    state.state = "watching";
                }
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

/// Rescans every `interval` until noggin stops or watching comes back
/// ([`stop_polling`]).
fn start_polling(
    state: &Arc<Mutex<WatchState>>,
    stop: &Arc<AtomicBool>,
    interval: Duration,
    sink: Sink,
    reason: &str,
) {
    let poller = {
        let mut s = state.lock().expect("watch state lock poisoned");
        if s.state == "polling" {
            return;
        }
        *s = WatchState {
            state: "polling",
            reason: Some(reason.to_string()),
            poll_interval_ms: Some(interval.as_millis() as u64),
            poller: s.poller + 1,
        };
        s.poller
    };
    let (state, stop) = (state.clone(), stop.clone());
    let spawned = std::thread::Builder::new()
        .name("noggin-poller".to_string())
        .spawn(move || loop {
            std::thread::sleep(interval);
            if stop.load(Ordering::Relaxed)
                || state.lock().expect("watch state lock poisoned").poller != poller
            {
                break;
            }
            sink(Change::Rescan);
        });
    if let Err(error) = spawned {
        tracing::error!(%error, "cannot start the poller");
    }
}

/// Ends the poller: the brain is watched again.
#[cfg(target_os = "linux")]
fn stop_polling(state: &Mutex<WatchState>) {
    let mut s = state.lock().expect("watch state lock poisoned");
    *s = WatchState {
        state: "watching",
        reason: None,
        poll_interval_ms: None,
        poller: s.poller + 1,
    };
}

/// While the brain's folder is gone (deleted or moved away), nothing is
/// followed, and the state says so: `waiting` until a folder is back at
/// its path. True when it has just come back.
#[cfg(target_os = "linux")]
fn brain_is_there(state: &Mutex<WatchState>, there: bool) -> bool {
    let mut s = state.lock().expect("watch state lock poisoned");
    match (s.state, there) {
        ("watching", false) => {
            s.state = "waiting";
            s.reason = Some(
                "the brain's folder is gone (deleted or moved away); it is followed again \
                 once a folder is back at its path"
                    .to_string(),
            );
            false
        }
        ("waiting", true) => {
            s.state = "watching";
            s.reason = None;
            true
        }
        _ => false,
    }
}

/// How often watching is tried again after the limit of watched folders
/// was reached (a user may raise it, or folders go away).
#[cfg(target_os = "linux")]
const RETRY_WATCHING: Duration = Duration::from_secs(30);

/// Native file events: the brain's folders watched one by one
/// ([`Folders`](super::inotify::Folders)), read on a thread of their own that
/// also looks at the brain's path every `poll_interval`.
#[cfg(target_os = "linux")]
fn start_native(
    root: &Path,
    state: &Arc<Mutex<WatchState>>,
    stop: &Arc<AtomicBool>,
    poll_interval: Duration,
    sink: Sink,
) -> std::io::Result<Box<dyn std::any::Any + Send>> {
    use rustix::event::{eventfd, poll, EventfdFlags, PollFd, PollFlags, Timespec};

    let mut folders = super::inotify::Folders::new(root)?;
    // Written when the watcher is dropped, so that the thread ends at once.
    let wake = Arc::new(eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?);
    let (root, thread_wake) = (root.to_path_buf(), wake.clone());
    let (fail_state, fail_stop, fail_sink) = (state.clone(), stop.clone(), sink.clone());
    // Said once; the periodic rescan covers the brain until watching works
    // again.
    let fail = move |error: &dyn std::fmt::Display| {
        if fail_state.lock().expect("watch state lock poisoned").state == "polling" {
            return;
        }
        tracing::warn!(%error, "file watching failed; rescanning periodically instead");
        start_polling(
            &fail_state,
            &fail_stop,
            poll_interval,
            fail_sink.clone(),
            &format!("watcher failed: {error}"),
        );
        fail_sink(Change::Rescan);
    };
    if let Err(error) = folders.watch_all() {
        fail(&error);
    }
    let (state, stop) = (state.clone(), stop.clone());
    std::thread::Builder::new()
        .name("noggin-watch".to_string())
        .spawn(move || {
            let mut pending = Pending::default();
            let mut watched = folder_identity(&root);
            let mut next_look = Instant::now() + poll_interval;
            let mut next_retry = Instant::now() + RETRY_WATCHING;
            loop {
                let now = Instant::now();
                let wait = pending
                    .due_in(now)
                    .unwrap_or(poll_interval)
                    .min(next_look.saturating_duration_since(now));
                let timeout = Timespec {
                    tv_sec: wait.as_secs() as _,
                    tv_nsec: wait.subsec_nanos() as _,
                };
                let polled = poll(
                    &mut [
                        PollFd::from_borrowed_fd(folders.fd(), PollFlags::IN),
                        PollFd::new(&*thread_wake, PollFlags::IN),
                    ],
                    Some(&timeout),
                );
                if let Err(error) = polled.map_err(std::io::Error::from) {
                    if error.kind() != std::io::ErrorKind::Interrupted {
                        fail(&error);
                        break;
                    }
                }
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let now = Instant::now();
                match folders.read() {
                    Ok(seen) => {
                        if seen.lost {
                            pending.lose(now);
                        }
                        pending.add(&root, seen.paths, now);
                    }
                    Err(error) => fail(&error),
                }
                if now >= next_look {
                    next_look = now + poll_interval;
                    // Events follow a folder, not its path: when another
                    // folder takes the brain's path (a restore, a fresh
                    // clone), it is watched in the old one's place and
                    // compared in full. After the limit of watches was
                    // reached, watching is tried again now and then.
                    let here = folder_identity(&root);
                    let back = brain_is_there(&state, here.is_some());
                    let moved = here.filter(|id| Some(*id) != watched);
                    let polling = state.lock().expect("watch state lock poisoned").state == "polling";
                    let retry = polling && now >= next_retry;
                    if back && moved.is_none() {
                        // The same folder moved back: what changed in it
                        // while away was not followed under its path.
                        sink(Change::Rescan);
                    }
                    if moved.is_some() || retry {
                        next_retry = now + RETRY_WATCHING;
                        match folders.watch_all() {
                            Ok(()) => {
                                if let Some(id) = moved {
                                    tracing::info!(brain = %root.display(), "a new folder took the brain's path; following it");
                                    watched = Some(id);
                                }
                                if polling {
                                    tracing::info!("watching the brain's folders again; periodic rescans stop");
                                    stop_polling(&state);
                                }
                                sink(Change::Rescan);
                            }
                            Err(error) => fail(&error),
                        }
                    }
                }
                if pending.due_in(now) == Some(Duration::ZERO) {
                    if let Some(change) = pending.take(&root) {
                        sink(change);
                    }
                }
            }
        })?;
    Ok(Box::new(WakeOnDrop(wake)))
}

/// Wakes the watch thread when the [`Watcher`] that holds it is dropped.
#[cfg(target_os = "linux")]
struct WakeOnDrop(Arc<std::os::fd::OwnedFd>);

#[cfg(target_os = "linux")]
impl Drop for WakeOnDrop {
    fn drop(&mut self) {
        let _ = rustix::io::write(&*self.0, &1u64.to_ne_bytes());
    }
}

/// Native file events from `notify`: the brain watched recursively.
#[cfg(not(target_os = "linux"))]
fn start_native(
    root: &Path,
    state: &Arc<Mutex<WatchState>>,
    stop: &Arc<AtomicBool>,
    poll_interval: Duration,
    sink: Sink,
) -> Result<Box<dyn std::any::Any + Send>, notify::Error> {
    use notify::Watcher as _;
    let (events_tx, events) = mpsc::channel::<notify::Result<notify::Event>>();
    // Symlinks are no notes (`scan`); following them would also watch one
    // folder under two paths, and report its changes under the link's.
    let mut watcher = NativeWatcher::new(
        move |event| {
            let _ = events_tx.send(event);
        },
        notify::Config::default().with_follow_symlinks(false),
    )?;
    watcher.watch(root, notify::RecursiveMode::Recursive)?;
    let root_owned = root.to_path_buf();
    let (state_for_events, stop_for_events) = (state.clone(), stop.clone());
    let rescan = sink.clone();
    let spawned = std::thread::Builder::new()
        .name("noggin-watch".to_string())
        .spawn(move || {
            let mut pending = Pending::default();
            loop {
                let wait = pending.due_in(Instant::now()).unwrap_or(Duration::from_secs(3600));
                match events.recv_timeout(wait) {
                    Ok(Ok(event)) => {
                        let now = Instant::now();
                        if event.need_rescan() {
                            pending.lose(now);
                        } else if is_change(&event.kind) {
                            pending.add(&root_owned, event.paths, now);
                        }
                    }
                    Ok(Err(error)) => {
                        tracing::warn!(%error, "file watcher reported an error; rescanning periodically");
                        start_polling(
                            &state_for_events,
                            &stop_for_events,
                            poll_interval,
                            sink.clone(),
                            &format!("watcher failed: {error}"),
                        );
                        sink(Change::Rescan);
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    // The watcher was dropped: noggin stops following.
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
                if stop_for_events.load(Ordering::Relaxed) {
                    break;
                }
                if pending.due_in(Instant::now()) == Some(Duration::ZERO) {
                    if let Some(change) = pending.take(&root_owned) {
                        sink(change);
                    }
                }
            }
        });
    if let Err(error) = spawned {
        return Err(notify::Error::io(error));
    }
    let watcher = Arc::new(Mutex::new(watcher));
    follow_the_folder_at(root, &watcher, stop, poll_interval, rescan);
    Ok(Box::new(watcher))
}

/// File events not yet handed on: the paths they name, whether some were
/// lost, and when the first and the last came.
#[derive(Default)]
struct Pending {
    paths: Vec<PathBuf>,
    rescan: bool,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl Pending {
    /// Takes in paths that changed in the brain at `root`. What noggin
    /// ignores (its own data folder, `.git`) neither waits nor keeps the
    /// brain from being quiet: an index commit must not hold back the next
    /// edit.
    fn add(&mut self, root: &Path, paths: impl IntoIterator<Item = PathBuf>, now: Instant) {
        let before = self.paths.len();
        self.paths.extend(
            paths
                .into_iter()
                .filter(|path| brain_path(root, path).is_some()),
        );
        if self.paths.len() > before {
            self.seen_at(now);
        }
    }

    /// Takes in that events were lost.
    fn lose(&mut self, now: Instant) {
        self.rescan = true;
        self.seen_at(now);
    }

    fn seen_at(&mut self, now: Instant) {
        self.first.get_or_insert(now);
        self.last = Some(now);
    }

    /// How long until what is pending is due ([`QUIET`] after the last
    /// event, [`MAX_WAIT`] after the first, whichever comes first); `None`
    /// when nothing is.
    fn due_in(&self, now: Instant) -> Option<Duration> {
        let (first, last) = (self.first?, self.last?);
        let due = (last + QUIET).min(first + MAX_WAIT);
        Some(due.saturating_duration_since(now))
    }

    /// What the pending events ask of the index, and a fresh start.
    fn take(&mut self, root: &Path) -> Option<Change> {
        let pending = std::mem::take(self);
        if pending.rescan {
            // The kernel's queue overflowed: the brain changed faster than
            // noggin read (a loaded or suspended machine), and any note may
            // have changed unseen.
            tracing::warn!(
                "file events were lost (the kernel's queue overflowed); comparing the whole brain"
            );
            return Some(Change::Rescan);
        }
        classify_paths(root, pending.paths.iter())
    }
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
#[cfg(not(target_os = "linux"))]
fn follow_the_folder_at(
    root: &Path,
    watcher: &Arc<Mutex<NativeWatcher>>,
    stop: &Arc<AtomicBool>,
    interval: Duration,
    sink: Sink,
) {
    use notify::{RecursiveMode, Watcher as _};
    let Some(mut watched) = folder_identity(root) else {
        return;
    };
    let (root, watcher, stop) = (root.to_path_buf(), watcher.clone(), stop.clone());
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
                let mut watcher = watcher.lock().expect("watcher lock poisoned");
                // The old folder's watches go first: it may live on elsewhere.
                let _ = watcher.unwatch(&root);
                if let Err(error) = watcher.watch(&root, RecursiveMode::Recursive) {
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

/// False for events that only report reading (a file or folder opened, read
/// or closed unwritten): noggin's own scans cause those, and treating them as
/// changes would make every rescan trigger the next one.
#[cfg(not(target_os = "linux"))]
fn is_change(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// `path` relative to the brain at `root`, unless noggin never reads it as
/// part of the brain: outside it, or hidden ([`is_hidden_path`]: `.noggin`,
/// `.git`, `.obsidian`, `node_modules`).
pub(super) fn brain_path(root: &Path, path: &Path) -> Option<String> {
    relative_path(root, path).filter(|rel| !is_hidden_path(rel))
}

/// Turns changed absolute paths into what the index must do; `None` when
/// nothing of interest changed (hidden files, the index itself, images).
pub fn classify_paths<'a>(root: &Path, paths: impl Iterator<Item = &'a PathBuf>) -> Option<Change> {
    let mut notes = Vec::new();
    for path in paths {
        let Some(rel) = brain_path(root, path) else {
            continue;
        };
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
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let now = Instant::now();
        let edit = || vec![root.join("a.md")];
        let mut pending = Pending::default();
        pending.add(root, edit(), now);
        assert_eq!(pending.take(root), Some(Change::Notes(vec!["a.md".into()])));
        pending.add(root, edit(), now);
        pending.lose(now);
        assert_eq!(pending.take(root), Some(Change::Rescan));
        assert_eq!(pending.due_in(now), None, "taken: nothing pending");
        pending.lose(now);
        assert_eq!(pending.due_in(now), Some(Duration::from_millis(250)));
    }

    /// Events are handed on once the brain is quiet, or a second after the
    /// first of them when it never is (a note saved every 100 ms).
    #[test]
    fn events_wait_for_quiet_but_never_more_than_a_second() {
        let root = Path::new("/brain");
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let save = || vec![root.join("log.md")];
        let mut pending = Pending::default();
        assert_eq!(pending.due_in(at(0)), None);
        pending.add(root, vec![root.join(".noggin/index/meta.json")], at(0));
        assert_eq!(
            pending.due_in(at(0)),
            None,
            "noggin's own files are no change"
        );
        pending.add(root, save(), at(0));
        assert_eq!(pending.due_in(at(100)), Some(Duration::from_millis(150)));
        // Saved every 100 ms: never quiet, due a second after the first.
        for ms in (100..1000).step_by(100) {
            pending.add(root, save(), at(ms));
            assert!(pending.due_in(at(ms)).unwrap() > Duration::ZERO, "{ms} ms");
        }
        assert_eq!(pending.due_in(at(1000)), Some(Duration::ZERO));
        assert_eq!(
            pending.take(root),
            Some(Change::Notes(vec!["log.md".into()]))
        );
        // Quiet: due 250 ms after the last event.
        pending.add(root, save(), at(1100));
        assert_eq!(pending.due_in(at(1200)), Some(Duration::from_millis(150)));
        assert_eq!(pending.due_in(at(1350)), Some(Duration::ZERO));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_poller_ends_when_watching_comes_back() {
        use std::sync::atomic::AtomicUsize;
        let state = Arc::new(Mutex::new(WatchState::off()));
        let stop = Arc::new(AtomicBool::new(false));
        let rescans = Arc::new(AtomicUsize::new(0));
        let counted = rescans.clone();
        let sink: Sink = Arc::new(move |change| {
            assert_eq!(change, Change::Rescan);
            counted.fetch_add(1, Ordering::SeqCst);
        });
        let every = Duration::from_millis(10);
        start_polling(&state, &stop, every, sink, "watcher failed: test");
        std::thread::sleep(every * 10);
        assert!(rescans.load(Ordering::SeqCst) > 0);
        assert_eq!(state.lock().unwrap().state, "polling");

        stop_polling(&state);
        assert_eq!(state.lock().unwrap().state, "watching");
        assert_eq!(state.lock().unwrap().reason, None);
        std::thread::sleep(every * 3);
        let after = rescans.load(Ordering::SeqCst);
        std::thread::sleep(every * 10);
        assert_eq!(rescans.load(Ordering::SeqCst), after, "the poller ended");
    }

    #[cfg(not(target_os = "linux"))]
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
