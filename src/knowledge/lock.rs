//! The answers lock: one file lock per brain, held by every writer of
//! answers in every noggin process (the server, `noggin remember`) for the
//! whole read-append-rename of a note.
//!
//! The lock is on `<brain>/.noggin/answers.lock`, a file that is never renamed
//! or replaced: a lock on the note itself would be lost with the note's old
//! inode at the first rename. It lives under the brain rather than under
//! `--data-dir`, because two processes with different index folders still
//! write the same notes. The lock is advisory (flock): editors do not take
//! it, which is what the compare-before-rename in [`super::write`] is for.
//! The operating system releases it when its holder dies, even by `kill -9`.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use super::Error;

/// The folder of the lock, inside the brain.
const LOCK_DIR: &str = ".noggin";

/// File name of the lock, inside `<brain>/.noggin/`.
const LOCK_FILE: &str = "answers.lock";

/// Held while it lives; released when dropped (the file is closed).
pub(super) struct AnswersLock {
    _file: File,
}

/// Where the answers lock of `brain` lives.
fn lock_path(brain: &Path) -> PathBuf {
    brain.join(LOCK_DIR).join(LOCK_FILE)
}

fn open(brain: &Path) -> Result<File, Error> {
    let path = lock_path(brain);
    let io_err = |source| Error::Io {
        path: path.clone(),
        source,
    };
    if let Some(dir) = path.parent() {
        if !dir.is_dir() {
            super::write::make_dirs_below(brain, Path::new(LOCK_DIR))?;
            // The folder is noggin's; a brain under git ignores it.
            let _ = crate::index::mark_ignored_by_git(dir);
        }
    }
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(io_err)
}

impl AnswersLock {
    /// Waits until no other writer holds the lock, then holds it. Blocking.
    pub(super) fn acquire(brain: &Path) -> Result<AnswersLock, Error> {
        let file = open(brain)?;
        fs4::FileExt::lock(&file).map_err(|source| Error::Io {
            path: lock_path(brain),
            source,
        })?;
        Ok(AnswersLock { _file: file })
    }

    /// Holds the lock if its file exists and nobody holds it; `None`
    /// otherwise. It creates nothing: a brain no answer was ever written to
    /// has no lock file (every writer creates it before writing), and one
    /// only read, or indexed into another `--data-dir`, stays untouched.
    pub(super) fn try_acquire_existing(brain: &Path) -> Option<AnswersLock> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(lock_path(brain))
            .ok()?;
        fs4::FileExt::try_lock(&file).ok()?;
        Some(AnswersLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_waits_for_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let held = AnswersLock::acquire(dir.path()).unwrap();
        assert!(AnswersLock::try_acquire_existing(dir.path()).is_none());
        drop(held);
        assert!(AnswersLock::try_acquire_existing(dir.path()).is_some());
        assert!(dir.path().join(".noggin/.gitignore").exists());
    }

    #[test]
    fn looking_for_an_idle_lock_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert!(AnswersLock::try_acquire_existing(dir.path()).is_none());
        assert!(!dir.path().join(".noggin").exists());
    }
}
