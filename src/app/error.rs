//! The one error of the use cases, whichever way they were reached.
//!
//! The HTTP server maps it to a status (`server::error`), MCP to a tool error
//! with the same message, the CLI to its exit code; so a caller's mistake
//! reads the same everywhere.

/// Why a use case did not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The caller sent something it may not: nothing was changed.
    #[error("{message}")]
    Invalid {
        /// Stable and machine-readable, e.g. `query-too-long`.
        code: &'static str,
        message: String,
    },
    /// What the caller named does not exist (or may not be shown).
    #[error("{0}")]
    NotFound(String),
    /// The session named has no events (HTTP 404 `unknown-session`).
    #[error("{0}")]
    UnknownSession(String),
    /// The caller sent something larger than noggin takes (HTTP 413):
    /// nothing was changed.
    #[error("{message}")]
    TooLarge { code: &'static str, message: String },
    /// A passing shortage (out of file descriptors, a note an editor kept
    /// saving): nothing was acknowledged, and trying again is the remedy.
    #[error("{0}")]
    Busy(String),
    /// What the request needs is not there now (the brain folder moved
    /// away or deleted): nothing was changed (HTTP 503 with the reason).
    #[error("{message}")]
    Unavailable { code: &'static str, message: String },
    /// A failure of noggin or of the disk; the detail is for the log.
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl Error {
    pub fn invalid(code: &'static str, message: impl Into<String>) -> Error {
        Error::Invalid {
            code,
            message: message.into(),
        }
    }
}

impl From<crate::research::InvalidRequest> for Error {
    fn from(invalid: crate::research::InvalidRequest) -> Error {
        Error::invalid(invalid.code(), invalid.to_string())
    }
}

impl Error {
    /// The stable machine-readable code of a caller's mistake, as HTTP and
    /// MCP show it.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Invalid { code, .. }
            | Error::TooLarge { code, .. }
            | Error::Unavailable { code, .. } => code,
            Error::NotFound(_) => "not-found",
            Error::UnknownSession(_) => "unknown-session",
            Error::Busy(_) => "busy",
            Error::Internal(_) => "internal",
        }
    }
}

impl From<crate::context::Error> for Error {
    fn from(error: crate::context::Error) -> Error {
        use crate::context::Error as E;
        match error {
            E::InvalidSession => Error::invalid("invalid-session", error.to_string()),
            E::UnknownSession(_) => Error::UnknownSession(error.to_string()),
            E::InvalidEvent(invalid) if invalid.is_too_large() => Error::TooLarge {
                code: invalid.code(),
                message: invalid.to_string(),
            },
            E::InvalidEvent(invalid) => Error::invalid(invalid.code(), invalid.to_string()),
            // The user's file, not noggin's failure: said as such, with
            // what to do.
            E::Damaged { .. } => Error::Unavailable {
                code: "session-store-damaged",
                message: error.to_string(),
            },
            E::Unavailable { .. } => Error::Unavailable {
                code: "session-store-unavailable",
                message: error.to_string(),
            },
            other => Error::Internal(other.into()),
        }
    }
}

impl From<crate::knowledge::Error> for Error {
    fn from(error: crate::knowledge::Error) -> Error {
        use crate::knowledge::Error as E;
        use std::io::ErrorKind;
        if let Some(code) = error.input_code() {
            return Error::invalid(code, error.to_string());
        }
        // The state of the brain's disk, not noggin's fault: said as such.
        let disk = match &error {
            E::OutsideBrain(_) => Some("knowledge-folder-outside"),
            E::Io { source, .. } => match source.kind() {
                ErrorKind::StorageFull | ErrorKind::QuotaExceeded => Some("disk-full"),
                ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => {
                    Some("brain-read-only")
                }
                _ => None,
            },
            _ => None,
        };
        match (&error, disk) {
            (E::BrainGone(_), _) => Error::Unavailable {
                code: "brain-unavailable",
                message: error.to_string(),
            },
            (_, Some(code)) => Error::Unavailable {
                code,
                message: format!("{error}; nothing was written"),
            },
            _ if error.is_transient() => Error::Busy(error.to_string()),
            _ => Error::Internal(error.into()),
        }
    }
}

impl From<crate::index::Error> for Error {
    fn from(error: crate::index::Error) -> Error {
        Error::Internal(error.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::Error as K;
    use std::io::{Error as IoError, ErrorKind};
    use std::path::PathBuf;

    #[test]
    fn a_disk_that_cannot_take_the_answers_is_said_as_such() {
        let io = |kind| K::Io {
            path: PathBuf::from("/brain/Alignment Knowledge/a.md"),
            source: IoError::from(kind),
        };
        for (error, code) in [
            (io(ErrorKind::StorageFull), "disk-full"),
            (io(ErrorKind::QuotaExceeded), "disk-full"),
            (io(ErrorKind::PermissionDenied), "brain-read-only"),
            (io(ErrorKind::ReadOnlyFilesystem), "brain-read-only"),
            (
                K::OutsideBrain(PathBuf::from("/brain/Alignment Knowledge")),
                "knowledge-folder-outside",
            ),
            (K::BrainGone(PathBuf::from("/brain")), "brain-unavailable"),
            (io(ErrorKind::Other), "internal"),
        ] {
            let error = Error::from(error);
            assert_eq!(error.code(), code, "{error}");
        }
    }

    #[test]
    fn a_damaged_session_store_is_said_as_such() {
        use crate::context::Error as C;
        use rusqlite::ffi;
        let path = PathBuf::from("/brain/.noggin/sessions.sqlite");
        let sqlite = |code| rusqlite::Error::SqliteFailure(ffi::Error::new(code), None);
        for (source, code) in [
            (sqlite(ffi::SQLITE_NOTADB), "session-store-damaged"),
            (sqlite(ffi::SQLITE_CORRUPT), "session-store-damaged"),
            (sqlite(ffi::SQLITE_IOERR), "internal"),
        ] {
            let error = Error::from(C::store(&path, source));
            assert_eq!(error.code(), code, "{error}");
        }
        let gone = C::Unavailable {
            path,
            reason: "its folder is gone and cannot be made again".into(),
        };
        assert_eq!(Error::from(gone).code(), "session-store-unavailable");
    }
}
