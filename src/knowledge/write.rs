//! Putting entries into a note on disk, atomically.
//!
//! The caller holds the note's lock. The note is read again here, under that
//! lock, so a hand edit made a moment ago is kept. The new text goes to a
//! hidden temporary file in the same folder (the scanner and the watcher
//! ignore hidden files), is fsynced and renamed over the note, and the folder
//! is fsynced so that the rename itself survives a crash.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use chrono::NaiveDate;

use super::note::{self, Entry};
use super::{slug, Error};

/// Notes of other prompts that share a slug on one day get ` (2)`, ` (3)`, …
const MAX_COPIES: u32 = 100;

/// Temporary files older than this are leftovers of a crash.
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

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Adds `entries` to the note of `prompt` on `date` under `brain/folder`.
pub(super) fn write_entries(
    brain: &Path,
    folder: &str,
    date: NaiveDate,
    prompt: &str,
    entries: &[Entry],
) -> Result<Written, Error> {
    let dir = brain.join(folder);
    if !dir.is_dir() {
        fs::create_dir_all(&dir).map_err(io_error(&dir))?;
        if let Some(parent) = dir.parent() {
            sync_dir(parent)?;
        }
    }
    let real = fs::canonicalize(&dir).map_err(io_error(&dir))?;
    if !real.starts_with(brain) {
        return Err(Error::OutsideBrain(dir));
    }
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
                write_atomic(&path, &text, None)?;
                return Ok(Written {
                    path: rel,
                    saved: entries.iter().map(|e| e.question.clone()).collect(),
                    duplicates: Vec::new(),
                });
            }
            Err(source) => return Err(Error::Io { path, source }),
        };
        if !meta.is_file() {
            // A symlink or a folder by that name: leave it alone.
            continue;
        }
        let Ok(existing) = String::from_utf8(fs::read(&path).map_err(io_error(&path))?) else {
            continue;
        };
        if note::read_request(&existing).is_some_and(|r| note::comparable(&r) != wanted) {
            continue;
        }
        let held = note::read_entries(&existing);
        let mut duplicates = Vec::new();
        let mut fresh = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            if held.iter().any(|h| h.same_as(entry)) {
                duplicates.push(i);
            } else {
                fresh.push(entry.clone());
            }
        }
        if fresh.is_empty() {
            return Ok(Written {
                path: rel,
                saved: Vec::new(),
                duplicates,
            });
        }
        let text = note::append_entries(&existing, &fresh);
        let read_back = note::read_entries(&text);
        if read_back.len() != held.len() + fresh.len()
            || !fresh.iter().all(|f| read_back.contains(f))
        {
            // The user's text would swallow new entries (say, a code block
            // left open at the end): start a new note instead.
            tracing::warn!(path = %path.display(), "cannot append to this note; writing another");
            continue;
        }
        write_atomic(&path, &text, Some(meta.permissions()))?;
        return Ok(Written {
            path: rel,
            saved: fresh.into_iter().map(|e| e.question).collect(),
            duplicates,
        });
    }
    Err(Error::NoFreeName(dir))
}

/// Replaces `path` with `contents` so that a crash leaves either the old or
/// the new file, never a mix.
fn write_atomic(
    path: &Path,
    contents: &str,
    permissions: Option<fs::Permissions>,
) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let (temp_path, mut file) = create_temp(path)?;
    let written = (|| {
        file.write_all(contents.as_bytes())?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&temp_path, path)
    })();
    if let Err(source) = written {
        let _ = fs::remove_file(&temp_path);
        return Err(Error::Io {
            path: path.to_path_buf(),
            source,
        });
    }
    sync_dir(dir)
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

/// Removes temporary files that a crash left in the knowledge folder.
pub(super) fn sweep_stale_temp_files(dir: &Path) {
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
        let old = entry
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
        write_atomic(&path, "one", None).unwrap();
        write_atomic(&path, "two", None).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["n.md"]);
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
        sweep_stale_temp_files(dir.path());
        assert!(!stale.exists());
        assert!(fresh.exists() && other.exists());
    }

    #[test]
    fn a_note_left_with_an_open_code_block_is_not_swallowed() {
        let dir = tempfile::tempdir().unwrap();
        let brain = fs::canonicalize(dir.path()).unwrap();
        let date = NaiveDate::from_ymd_opt(2026, 11, 22).unwrap();
        let entry = |q: &str| Entry {
            question: q.into(),
            answer: "an answer long enough".into(),
        };
        let first = write_entries(&brain, "K", date, "p", &[entry("one?")]).unwrap();
        let path = brain.join(&first.path);
        let edited = fs::read_to_string(&path).unwrap() + "\n```\nunclosed code\n";
        fs::write(&path, &edited).unwrap();
        let second = write_entries(&brain, "K", date, "p", &[entry("two?")]).unwrap();
        assert_eq!(second.path, "K/2026-11-22 p (2).md");
        assert_eq!(fs::read_to_string(&path).unwrap(), edited);
    }
}
