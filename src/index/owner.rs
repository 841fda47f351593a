//! Ownership of an index folder across processes.
//!
//! Before a process may delete, rebuild or write the index in a data folder,
//! it takes an exclusive lock on `<data_dir>/owner.lock` and keeps it for as
//! long as it has the index open for writing. tantivy's own writer lock comes
//! too late for that: it lives inside the index folder, which a rebuild
//! deletes first, so a second process that found a half-created index
//! (no first commit yet) used to remove the live one under a starting server.
//! The lock file is never renamed or deleted, and the operating system drops
//! the lock when its holder dies (even by `kill -9`). The holder writes its
//! process id, whether it follows the brain and its command into the file,
//! and on a second line the brain it serves, so that others can say who has
//! it and for which brain.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::Error;

/// File name of the lock, inside the data folder.
const LOCK_FILE: &str = "owner.lock";

/// Held while it lives.
pub(super) struct OwnerLock {
    data_dir: PathBuf,
    /// The brain whose index this is.
    brain: PathBuf,
    /// Another file once the data folder was deleted or replaced
    /// ([`OwnerLock::take_again`]).
    file: Mutex<File>,
    follows: Mutex<Follows>,
}

/// How the holder of an index follows the brain, and so whether (and how
/// soon) it indexes the notes others write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follows {
    /// A one-shot command: it follows nothing.
    Once,
    /// A live noggin told of every change: within a second.
    Events,
    /// A live noggin that looks every so many milliseconds.
    Polling(u64),
    /// A live noggin that does not follow the brain (`--watch off`).
    Nothing,
}

impl Follows {
    /// The word the lock file keeps.
    fn word(self) -> String {
        match self {
            Follows::Once => "once".into(),
            Follows::Events => "watching".into(),
            Follows::Polling(ms) => format!("polling-{ms}"),
            Follows::Nothing => "unwatched".into(),
        }
    }

    fn from_word(word: &str) -> Follows {
        match word {
            "watching" => Follows::Events,
            "unwatched" => Follows::Nothing,
            _ => word
                .strip_prefix("polling-")
                .and_then(|ms| ms.parse().ok())
                .map_or(Follows::Once, Follows::Polling),
        }
    }

    /// True for a live noggin (serve, mcp), which keeps the index whether or
    /// not it follows the brain.
    pub fn is_live(self) -> bool {
        self != Follows::Once
    }
}

impl Drop for OwnerLock {
    fn drop(&mut self) {
        // Leave no name behind; closing the file then releases the lock.
        if let Ok(file) = self.file.get_mut() {
            let _ = file.set_len(0);
        }
    }
}

pub(super) fn lock_path(data_dir: &Path) -> PathBuf {
    data_dir.join(LOCK_FILE)
}

impl OwnerLock {
    /// Takes the lock without waiting; [`Error::Locked`] if another process
    /// (or another open index in this one) has it.
    pub(super) fn try_acquire(data_dir: &Path, brain: &Path) -> Result<OwnerLock, Error> {
        let lock = OwnerLock {
            data_dir: data_dir.to_path_buf(),
            brain: brain.to_path_buf(),
            file: Mutex::new(lock_file(data_dir)?),
            follows: Mutex::new(Follows::Once),
        };
        lock.declare(Follows::Once);
        Ok(lock)
    }

    /// Says who holds the lock and how it follows the brain, for the
    /// messages of the others.
    pub(super) fn declare(&self, follows: Follows) {
        *self.follows.lock().expect("owner lock poisoned") = follows;
        let file = self.file.lock().expect("owner lock poisoned");
        let mut file = &*file;
        let command = std::env::args().nth(1).unwrap_or_default();
        let mode = follows.word();
        // One write: another process reading it meanwhile finds it empty
        // or whole, never half written.
        let text = format!(
            "{} {mode} {command}\n{}\n",
            std::process::id(),
            self.brain.display()
        );
        let _ = file
            .set_len(0)
            .and_then(|()| std::io::Seek::rewind(&mut file))
            .and_then(|_| file.write_all(text.as_bytes()));
    }

    /// The data folder was deleted or another took its path: the lock is
    /// taken again in the folder now there, before anything is written in
    /// it. Nothing to do while the file held is still the one at the path.
    pub(super) fn take_again(&self) -> Result<(), Error> {
        use std::os::unix::fs::MetadataExt;
        let identity = |m: std::fs::Metadata| (m.dev(), m.ino());
        let mut held = self.file.lock().expect("owner lock poisoned");
        let at_path = std::fs::metadata(lock_path(&self.data_dir)).map(identity);
        if at_path.is_ok() && at_path.ok() == held.metadata().map(identity).ok() {
            return Ok(());
        }
        let _ = held.set_len(0);
        *held = lock_file(&self.data_dir)?;
        drop(held);
        let follows = *self.follows.lock().expect("owner lock poisoned");
        self.declare(follows);
        Ok(())
    }
}

/// Opens the lock file of `data_dir` and locks it without waiting.
fn lock_file(data_dir: &Path) -> Result<File, Error> {
    let path = lock_path(data_dir);
    let io_err = |source| Error::DataDir {
        path: path.clone(),
        source,
    };
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(io_err)?;
    match fs4::FileExt::try_lock(&file) {
        Ok(()) => Ok(file),
        Err(fs4::TryLockError::WouldBlock) => Err(Error::Locked(data_dir.to_path_buf())),
        Err(fs4::TryLockError::Error(source)) => Err(io_err(source)),
    }
}

/// Who holds an index, as its lock file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    /// How the holder follows the brain.
    pub follows: Follows,
    /// Its subcommand, e.g. `serve`.
    pub command: String,
    /// The brain it holds the index for (unknown from an older noggin).
    pub brain: Option<PathBuf>,
}

/// As the user would run it: `` `noggin serve` (pid 42) ``.
impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`noggin {}` (pid {})", self.command, self.pid)
    }
}

/// The process holding the index of `data_dir`, if the lock is held and
/// says so.
pub fn holder(data_dir: &Path) -> Option<Holder> {
    let path = lock_path(data_dir);
    let file = File::open(&path).ok()?;
    // Free (a holder that crashed left its words behind): nobody holds it.
    if fs4::FileExt::try_lock_shared(&file).is_ok() {
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let mut lines = text.lines();
    let mut words = lines.next()?.trim().splitn(3, ' ');
    let pid = words.next()?.parse().ok()?;
    let follows = Follows::from_word(words.next()?);
    let command = words.next().unwrap_or_default().to_string();
    let brain = lines.next().filter(|l| !l.is_empty()).map(PathBuf::from);
    Some(Holder {
        pid,
        follows,
        command,
        brain,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_owner_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let brain = Path::new("/notes/my brain");
        assert_eq!(holder(dir.path()), None);
        let first = OwnerLock::try_acquire(dir.path(), brain).unwrap();
        assert!(matches!(
            OwnerLock::try_acquire(dir.path(), brain),
            Err(Error::Locked(_))
        ));
        let held = holder(dir.path()).expect("a holder");
        assert_eq!(
            (held.pid, held.follows),
            (std::process::id(), Follows::Once)
        );
        assert_eq!(held.brain.as_deref(), Some(brain));
        for follows in [Follows::Events, Follows::Polling(2000), Follows::Nothing] {
            first.declare(follows);
            assert_eq!(holder(dir.path()).expect("a holder").follows, follows);
        }
        drop(first);
        assert_eq!(holder(dir.path()), None);
        assert!(OwnerLock::try_acquire(dir.path(), brain).is_ok());
    }
}
