//! Putting entries into a note on disk, atomically.
//!
//! The caller holds the brain's answers lock, so no other noggin process or
//! task writes answers now. The note is read again here, under that lock, so
//! a hand edit made a moment ago is kept. The new text goes to a hidden
//! temporary file in the same folder (the scanner and the watcher ignore
//! hidden files) and is fsynced; then the note is compared with what was
//! read, and only if an editor did not save it meanwhile is the new text
//! renamed over it (else everything is done again on the editor's version).
//! The folder is fsynced so that the rename itself survives a crash.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use chrono::NaiveDate;
use xxhash_rust::xxh3::xxh3_64;

use crate::brain::parse::strip_comments;

use super::note::{self, Entry};
use super::{slug, Error};

/// Notes of other prompts that share a slug on one day get ` (2)`, ` (3)`, …
const MAX_COPIES: u32 = 100;

/// Attempts at adding entries to a note that an editor keeps changing.
const MAX_ATTEMPTS: u32 = 50;

/// Attempts that fsync the new version before it replaces the note.
const SYNCED_ATTEMPTS: u32 = 3;

/// Pause before attempt `n` is `n` times this, at most [`MAX_RETRY_PAUSE`].
const RETRY_PAUSE: Duration = Duration::from_millis(1);
const MAX_RETRY_PAUSE: Duration = Duration::from_millis(20);

/// How long the note as it was before our version took its place is kept
/// after the swap, and looked at again: a program that opened the note just
/// before (`>>`, an editor writing in place) writes into that file, and its
/// write must not be dropped with it.
const LATE_WRITE_GRACE: Duration = Duration::from_millis(3);

/// Temporary files older than this are leftovers of a crash, even while
/// another noggin may be writing.
const STALE_TEMP_AGE: Duration = Duration::from_secs(3600);

/// Suffix of temporary files; with the leading dot it keeps them out of the
/// index.
const TEMP_SUFFIX: &str = ".noggin-tmp";

/// What was written.
pub(super) struct Written {
    /// The note, relative to the brain, `/`-separated.
    pub path: String,
    /// Questions that were added.
    pub saved: Vec<String>,
    /// Positions (in the entries given) that the note already held.
    pub duplicates: Vec<usize>,
}

/// Makes the folders of `rel` below `brain`, a folder at a time and never
/// the brain itself: a brain moved away must not come back as a folder of
/// one note ([`Error::BrainGone`]).
pub(super) fn make_dirs_below(brain: &Path, rel: &Path) -> Result<(), Error> {
    let mut made = brain.to_path_buf();
    for part in rel.components() {
        made.push(part);
        match fs::create_dir(&made) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::BrainGone(brain.to_path_buf()))
            }
            Err(source) => return Err(io_error(&made)(source)),
        }
    }
    Ok(())
}

/// `rel` below `brain` with each folder named as it is on disk: a folder
/// named in the other Unicode form (decomposed, as a Mac names files, or
/// composed) is that folder, not a new one beside it that looks the same.
fn as_on_disk(brain: &Path, rel: &Path) -> std::path::PathBuf {
    use unicode_normalization::UnicodeNormalization;
    let composed = |name: &std::ffi::OsStr| name.to_str().map(|n| n.nfc().collect::<String>());
    let mut at = brain.to_path_buf();
    let mut out = std::path::PathBuf::new();
    for part in rel.components() {
        let name = part.as_os_str();
        let found = if at.join(name).exists() {
            None
        } else {
            let wanted = composed(name);
            fs::read_dir(&at).ok().and_then(|entries| {
                entries.flatten().map(|e| e.file_name()).find(|other| {
                    wanted.is_some() && composed(other) == wanted && at.join(other).is_dir()
                })
            })
        };
        let name = found.unwrap_or_else(|| name.to_os_string());
        at.push(&name);
        out.push(&name);
    }
    out
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Adds `entries` to the note of `prompt` on `date` under `brain/folder`.
///
/// The caller holds the brain's answers lock, so no other noggin writes
/// now; an editor may still save the note at any moment. Each attempt reads
/// the note, appends, and renames its new version over the note only if the
/// note still has the content it read ([`replace_if_unchanged`]); after the
/// rename the note is read again, and if an editor's save replaced it in the
/// meantime and took entries away, they are appended again. Bounded.
pub(super) fn write_entries(
    brain: &Path,
    folder: &str,
    date: NaiveDate,
    prompt: &str,
    entries: &[Entry],
) -> Result<Written, Error> {
    let on_disk = as_on_disk(brain, Path::new(folder));
    // Made of the folder given and names read from disk as UTF-8.
    let folder = on_disk.to_string_lossy();
    let folder = folder.as_ref();
    let dir = brain.join(folder);
    if !dir.is_dir() {
        make_dirs_below(brain, &on_disk)?;
        if let Some(parent) = dir.parent() {
            sync_dir(parent)?;
        }
    }
    let real = fs::canonicalize(&dir).map_err(io_error(&dir))?;
    if !real.starts_with(brain) {
        return Err(Error::OutsideBrain(dir));
    }
    // Entries this call put into the note at some attempt: reported as saved
    // (not as duplicates) when a later attempt finds them there.
    let mut added: HashSet<usize> = HashSet::new();
    let mut last_path = dir.clone();
    for attempt in 0..MAX_ATTEMPTS {
        if attempt > 0 {
            // Let the editor finish its save before reading again.
            std::thread::sleep((RETRY_PAUSE * attempt).min(MAX_RETRY_PAUSE));
        }
        // An editor saving faster than an fsync takes would make the
        // compare fail forever: later attempts fsync after the swap instead.
        let sync_first = attempt < SYNCED_ATTEMPTS;
        let (path, rel, wrote) = match apply_once(&dir, folder, date, prompt, entries, sync_first)?
        {
            Applied::Changed(path) => {
                tracing::debug!(path = %path.display(), "the note changed while answers were added; reading it again");
                last_path = path;
                continue;
            }
            Applied::Done { path, rel, wrote } => (path, rel, wrote),
        };
        added.extend(wrote);
        // An editor that saved a copy read before our rename has taken our
        // entries away again: apply once more rather than acknowledge them.
        let now = match fs::read(&path) {
            Ok(now) => now,
            // The note was renamed or moved away right after the write: the
            // entries went with it, and are written again where they are
            // looked for, rather than acknowledged in a note that is gone.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                last_path = path;
                continue;
            }
            Err(source) => return Err(Error::Io { path, source }),
        };
        let held = note::read_entries(&String::from_utf8_lossy(&now));
        let all_there = entries
            .iter()
            .all(|entry| held.iter().any(|h| h.holds(entry)));
        if !all_there {
            tracing::warn!(path = %path.display(), "an editor's save replaced the note with answers missing; adding them again");
            last_path = path;
            continue;
        }
        let (mut saved, mut duplicates) = (Vec::new(), Vec::new());
        for (i, entry) in entries.iter().enumerate() {
            if added.contains(&i) {
                saved.push(entry.question.clone());
            } else {
                duplicates.push(i);
            }
        }
        return Ok(Written {
            path: rel,
            saved,
            duplicates,
        });
    }
    Err(Error::KeptChanging(last_path))
}

/// What one attempt of [`write_entries`] did.
enum Applied {
    /// The note changed between reading and renaming; nothing was replaced.
    Changed(PathBuf),
    /// `wrote`: positions of the entries this attempt added.
    Done {
        path: PathBuf,
        rel: String,
        wrote: Vec<usize>,
    },
}

fn apply_once(
    dir: &Path,
    folder: &str,
    date: NaiveDate,
    prompt: &str,
    entries: &[Entry],
    sync_first: bool,
) -> Result<Applied, Error> {
    let wanted = note::comparable(prompt);
    for copy in 1..=MAX_COPIES {
        let name = slug::note_file_name(date, prompt, copy);
        let path = dir.join(&name);
        let rel = format!("{}/{name}", folder.trim_end_matches('/'));
        let meta = match fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let text = note::render_note(date, prompt, entries);
                if note::read_entries(&text) != entries {
                    return Err(Error::Unrepresentable);
                }
                if !create_new(&path, &text)? {
                    return Ok(Applied::Changed(path));
                }
                return Ok(Applied::Done {
                    path,
                    rel,
                    wrote: (0..entries.len()).collect(),
                });
            }
            Err(source) => return Err(Error::Io { path, source }),
        };
        if !meta.is_file() {
            // A symlink or a folder by that name: leave it alone.
            continue;
        }
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            // Renamed or moved away since the look (Obsidian's "Rename
            // file"): read the folder again.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Applied::Changed(path))
            }
            Err(source) => return Err(Error::Io { path, source }),
        };
        let read_hash = xxh3_64(&bytes);
        let Ok(existing) = String::from_utf8(bytes) else {
            continue;
        };
        if note::read_request(&existing).is_some_and(|r| note::comparable(&r) != wanted) {
            continue;
        }
        // A note the user marked as no longer holding holds no answer for
        // research: answers go to another, even one it has.
        if crate::brain::parse::says_stale(&existing) {
            continue;
        }
        let held = note::read_entries(&existing);
        let mut wrote = Vec::new();
        let mut fresh = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            if !held.iter().any(|h| h.holds(entry)) {
                wrote.push(i);
                fresh.push(entry.clone());
            }
        }
        if fresh.is_empty() {
            return Ok(Applied::Done { path, rel, wrote });
        }
        let text = note::append_entries(&existing, &fresh);
        let read_back = note::read_entries(&text);
        // What Obsidian shows of it: a comment (`%%`) left open hides the
        // rest of the note.
        let shown = note::read_entries(&strip_comments(&text));
        if read_back.len() != held.len() + fresh.len()
            || !fresh
                .iter()
                .all(|f| read_back.contains(f) && shown.contains(f))
        {
            // The user's text would swallow new entries (say, a code block
            // or a comment left open at the end): start a new note instead.
            tracing::warn!(path = %path.display(), "cannot append to this note; writing another");
            continue;
        }
        if !replace_if_unchanged(&path, &text, read_hash, meta.permissions(), sync_first)? {
            return Ok(Applied::Changed(path));
        }
        return Ok(Applied::Done { path, rel, wrote });
    }
    Err(Error::NoFreeName(dir.to_path_buf()))
}

/// Creates `path` with `contents` unless something exists there; false if it
/// did. The temporary file is hard-linked to the name, which fails rather
/// than replace a file an editor created meanwhile.
fn create_new(path: &Path, contents: &str) -> Result<bool, Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let temp_path = write_temp(path, contents, None, true)?;
    let linked = fs::hard_link(&temp_path, path);
    let _ = fs::remove_file(&temp_path);
    match linked {
        Ok(()) => {
            sync_dir(dir)?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(source) => Err(Error::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Puts a new version in place of `path` if the note still hashes to
/// `read_hash`; false, with the note as the editor left it, if it changed.
///
/// With `sync_first` the new version is on disk (fsynced) before it takes
/// the note's place, so even a power cut leaves the old or the new note;
/// the compare then spans the fsync. Without it the swap follows the read
/// within microseconds and the note is fsynced right after: the answer is
/// still durable before it is acknowledged, but a power cut in those
/// milliseconds could leave the note empty. Only used when an editor keeps
/// saving faster than an fsync.
///
/// On Linux the new version is swapped in atomically (`RENAME_EXCHANGE`),
/// which hands back what was in place: if that is not what was read, an
/// editor saved in between, and its save is swapped back at once, so it is
/// never lost (a reader in that moment sees our version in its place).
/// Elsewhere (or on a file system without the exchange) the note
/// is compared just before a plain rename, after the slow fsync of the new
/// version; a save landing between that last read and the rename (a window
/// of microseconds) is then replaced.
fn replace_if_unchanged(
    path: &Path,
    contents: &str,
    read_hash: u64,
    permissions: fs::Permissions,
    sync_first: bool,
) -> Result<bool, Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let temp_path = write_temp(path, contents, Some(permissions), sync_first)?;
    let sync_after = || -> Result<(), Error> {
        if !sync_first {
            match File::open(path).and_then(|f| f.sync_all()) {
                // Renamed away meanwhile: the file is the user's now.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                other => other.map_err(io_error(path))?,
            }
        }
        sync_dir(dir)
    };
    let still = match fs::read(path) {
        Ok(now) => xxh3_64(&now) == read_hash,
        Err(_) => false,
    };
    if !still {
        let _ = fs::remove_file(&temp_path);
        return Ok(false);
    }
    #[cfg(target_os = "linux")]
    match exchange(&temp_path, path) {
        Ok(()) => {
            let replaced = settle_exchange(path, &temp_path, read_hash, contents.as_bytes())?;
            sync_after()?;
            return Ok(replaced);
        }
        // Not supported here: fall back to the compare-then-rename below.
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS | rustix::io::Errno::OPNOTSUPP) => {
        }
        // Renamed or moved away since it was read: nothing was replaced.
        Err(rustix::io::Errno::NOENT) => {
            let _ = fs::remove_file(&temp_path);
            return Ok(false);
        }
        Err(e) => {
            let _ = fs::remove_file(&temp_path);
            return Err(Error::Io {
                path: path.to_path_buf(),
                source: e.into(),
            });
        }
    }
    if let Err(source) = fs::rename(&temp_path, path) {
        let _ = fs::remove_file(&temp_path);
        return Err(Error::Io {
            path: path.to_path_buf(),
            source,
        });
    }
    sync_after()?;
    Ok(true)
}

/// Swaps the files at `a` and `b` in one step.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> Result<(), rustix::io::Errno> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE)
}

/// After our version was swapped into `path`, `temp_path` holds what was
/// there. True if that was the note as read, and still is a moment later
/// (it is dropped); otherwise it is an editor's save or a write into the
/// note as it was, which is put back (lines appended to our version
/// meanwhile are appended to it; a newer save that replaced ours wins over
/// it), and false.
#[cfg(target_os = "linux")]
fn settle_exchange(
    path: &Path,
    temp_path: &Path,
    read_hash: u64,
    ours: &[u8],
) -> Result<bool, Error> {
    let ours_hash = xxh3_64(ours);
    let mut swapped_out = fs::read(temp_path).map_err(io_error(temp_path))?;
    if xxh3_64(&swapped_out) == read_hash {
        std::thread::sleep(LATE_WRITE_GRACE);
        swapped_out = fs::read(temp_path).map_err(io_error(temp_path))?;
        if xxh3_64(&swapped_out) == read_hash {
            let _ = fs::remove_file(temp_path);
            return Ok(true);
        }
        // Written to after the swap: the user's write goes back in place,
        // and the entries are added to it on the next attempt.
    }
    // `temp_path` holds the user's save; `path` holds ours (expected back).
    let mut expected = ours_hash;
    let mut holding = xxh3_64(&swapped_out);
    for _ in 0..MAX_ATTEMPTS {
        exchange(temp_path, path).map_err(|e| Error::Io {
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        let back = fs::read(temp_path).map_err(io_error(temp_path))?;
        let back_hash = xxh3_64(&back);
        if back_hash == expected {
            let _ = fs::remove_file(temp_path);
            return Ok(false);
        }
        // Lines appended to our version while it was in place (`>>`): they
        // go on the end of the user's version, as they were written.
        if expected == ours_hash && back.len() > ours.len() && back.starts_with(ours) {
            fs::OpenOptions::new()
                .append(true)
                .open(path)
                .and_then(|mut f| {
                    f.write_all(&back[ours.len()..])?;
                    f.sync_data()
                })
                .map_err(io_error(path))?;
            let _ = fs::remove_file(temp_path);
            return Ok(false);
        }
        // Yet another save replaced what was in place; it is newer than
        // the one just put back, so it goes back in next.
        expected = holding;
        holding = back_hash;
    }
    // An editor saving faster than this can follow: keep the version in
    // hand as a visible file rather than drop it.
    let keep = path.with_extension(format!("conflict-{}.md", std::process::id()));
    fs::rename(temp_path, &keep).map_err(io_error(&keep))?;
    tracing::warn!(path = %keep.display(), "kept an editor's version of a note beside it");
    Err(Error::KeptChanging(path.to_path_buf()))
}

/// Writes `contents` to a new hidden temporary file next to `path` and
/// fsyncs it; removed again if anything fails.
fn write_temp(
    path: &Path,
    contents: &str,
    permissions: Option<fs::Permissions>,
    sync: bool,
) -> Result<PathBuf, Error> {
    let (temp_path, mut file) = create_temp(path)?;
    let written = (|| {
        file.write_all(contents.as_bytes())?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        if sync {
            file.sync_all()?;
        }
        Ok(())
    })();
    drop(file);
    if let Err(source) = written {
        let _ = fs::remove_file(&temp_path);
        return Err(Error::Io {
            path: path.to_path_buf(),
            source,
        });
    }
    Ok(temp_path)
}

/// Creates `.<name>.<unique>.noggin-tmp` next to `path`.
fn create_temp(path: &Path) -> Result<(PathBuf, File), Error> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    loop {
        let unique = format!(
            "{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let temp_path = dir.join(format!(".{name}.{unique}{TEMP_SUFFIX}"));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp_path)
        {
            Ok(file) => return Ok((temp_path, file)),
            // Left by an earlier process with the same id.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(source) => {
                return Err(Error::Io {
                    path: temp_path,
                    source,
                })
            }
        }
    }
}

/// Makes a rename or a new entry in `dir` durable.
fn sync_dir(dir: &Path) -> Result<(), Error> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io_error(dir))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Removes temporary files that a crash left in the knowledge folder: all of
/// them when `any_age` (the caller holds the answers lock, so no write is
/// under way anywhere), else only old ones.
pub(super) fn sweep_stale_temp_files(dir: &Path, any_age: bool) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with('.') && name.ends_with(TEMP_SUFFIX)) {
            continue;
        }
        let old = any_age
            || entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|age| age > STALE_TEMP_AGE);
        if old {
            if let Err(error) = fs::remove_file(entry.path()) {
                tracing::warn!(path = %entry.path().display(), %error, "cannot remove a stale temporary file");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.md");
        assert!(create_new(&path, "one").unwrap());
        assert!(!create_new(&path, "uno").unwrap());
        let permissions = fs::metadata(&path).unwrap().permissions();
        assert!(
            replace_if_unchanged(&path, "two", xxh3_64(b"one"), permissions.clone(), true).unwrap()
        );
        assert!(
            !replace_if_unchanged(&path, "three", xxh3_64(b"one"), permissions, false).unwrap()
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["n.md"]);
    }

    #[test]
    fn a_folder_named_in_the_other_unicode_form_is_that_folder() {
        let brain = tempfile::tempdir().unwrap();
        // Decomposed, as a Mac names it; asked for composed.
        fs::create_dir_all(brain.path().join("Cafe\u{301}/Notes")).unwrap();
        assert_eq!(
            as_on_disk(brain.path(), Path::new("Caf\u{e9}/Notes/New")),
            Path::new("Cafe\u{301}/Notes/New")
        );
        let entries = [Entry {
            question: "Who roasts the beans?".into(),
            answer: "The shop on the corner, every Friday.".into(),
        }];
        let date = NaiveDate::from_ymd_opt(2026, 11, 27).unwrap();
        let written = write_entries(brain.path(), "Caf\u{e9}", date, "Coffee", &entries).unwrap();
        assert!(written.path.starts_with("Cafe\u{301}/"), "{}", written.path);
        let folders: Vec<_> = fs::read_dir(brain.path()).unwrap().collect();
        assert_eq!(folders.len(), 1, "no second folder that looks the same");
    }

    #[test]
    fn stale_temporary_files_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let stale = dir.path().join(".n.md.1-0.noggin-tmp");
        let fresh = dir.path().join(".n.md.1-1.noggin-tmp");
        let other = dir.path().join(".other");
        for p in [&stale, &fresh, &other] {
            fs::write(p, "x").unwrap();
        }
        let old = SystemTime::now() - STALE_TEMP_AGE * 2;
        File::options()
            .write(true)
            .open(&stale)
            .unwrap()
            .set_modified(old)
            .unwrap();
        File::options()
            .write(true)
            .open(&other)
            .unwrap()
            .set_modified(old)
            .unwrap();
        sweep_stale_temp_files(dir.path(), false);
        assert!(!stale.exists());
        assert!(fresh.exists() && other.exists());
        sweep_stale_temp_files(dir.path(), true);
        assert!(!fresh.exists() && other.exists());
    }

    /// Today's note of a prompt that the user marked superseded takes no
    /// more answers, not even one it holds: research reads none from it.
    #[test]
    fn a_note_marked_superseded_takes_no_answers() {
        let dir = tempfile::tempdir().unwrap();
        let brain = fs::canonicalize(dir.path()).unwrap();
        let date = NaiveDate::from_ymd_opt(2026, 11, 22).unwrap();
        let entry = Entry {
            question: "Which cache do we use?".into(),
            answer: "We use memcached for the session cache.".into(),
        };
        let first = write_entries(&brain, "K", date, "p", std::slice::from_ref(&entry)).unwrap();
        let path = brain.join(&first.path);
        let marked =
            fs::read_to_string(&path)
                .unwrap()
                .replacen("---\n", "---\nstatus: superseded\n", 1);
        fs::write(&path, &marked).unwrap();
        let again = write_entries(&brain, "K", date, "p", &[entry]).unwrap();
        assert_eq!(again.path, "K/2026-11-22 p (2).md");
        assert_eq!(again.saved, ["Which cache do we use?"]);
        assert_eq!(fs::read_to_string(&path).unwrap(), marked);
    }

    /// A code block or a comment the user left open at a note's end would
    /// swallow or hide answers appended after it: they go to another note,
    /// and so do the next ones.
    #[test]
    fn a_note_left_with_an_open_block_gets_no_answers_after_it() {
        for open in [
            "\n```\nunclosed code\n",
            "%% TODO: double-check the limit with Helen\n",
        ] {
            let dir = tempfile::tempdir().unwrap();
            let brain = fs::canonicalize(dir.path()).unwrap();
            let date = NaiveDate::from_ymd_opt(2026, 11, 22).unwrap();
            let entry = |q: &str| Entry {
                question: q.into(),
                answer: "an answer long enough".into(),
            };
            let first = write_entries(&brain, "K", date, "p", &[entry("one?")]).unwrap();
            let path = brain.join(&first.path);
            let edited = fs::read_to_string(&path).unwrap() + open;
            fs::write(&path, &edited).unwrap();
            let second = write_entries(&brain, "K", date, "p", &[entry("two?")]).unwrap();
            assert_eq!(second.path, "K/2026-11-22 p (2).md", "{open:?}");
            assert_eq!(fs::read_to_string(&path).unwrap(), edited);
            let third = write_entries(&brain, "K", date, "p", &[entry("three?")]).unwrap();
            assert_eq!(third.path, second.path, "{open:?}");
        }
    }
}
