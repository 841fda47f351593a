//! The brain: a folder of markdown notes that the user owns.
//!
//! The brain is the source of truth; everything noggin derives from it (the
//! index) can be thrown away and rebuilt. This module finds notes
//! ([`scan`]), turns them into sections ([`parse`]; of HTML only its text,
//! [`html`]) and follows changes on disk ([`watch`]).

pub mod html;
#[cfg(target_os = "linux")]
mod inotify;
pub mod names;
pub mod parse;
pub mod scan;
pub mod watch;

use std::path::{Path, PathBuf};

pub use parse::{parse_note, Note, NoteKind, Section};
pub use scan::{scan_brain, stat_note, NoteFile};

/// Errors about the brain folder and its notes.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("brain folder {0:?} does not exist or is not a folder")]
    NotAFolder(PathBuf),
    #[error("note {path:?} is {size} bytes, over the size limit")]
    TooLarge { path: PathBuf, size: u64 },
    #[error("cannot read {path:?}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Resolves the brain folder to its canonical path, so symlink checks and
/// path confinement compare like with like.
pub fn canonical_root(path: &Path) -> Result<PathBuf, Error> {
    match std::fs::canonicalize(path) {
        Ok(root) if root.is_dir() => Ok(root),
        _ => Err(Error::NotAFolder(path.to_path_buf())),
    }
}
