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
    /// A passing shortage (out of file descriptors, a note an editor kept
    /// saving): nothing was acknowledged, and trying again is the remedy.
    #[error("{0}")]
    Busy(String),
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

impl From<crate::knowledge::Error> for Error {
    fn from(error: crate::knowledge::Error) -> Error {
        match error.input_code() {
            Some(code) => Error::invalid(code, error.to_string()),
            None if error.is_transient() => Error::Busy(error.to_string()),
            None => Error::Internal(error.into()),
        }
    }
}

impl From<crate::index::Error> for Error {
    fn from(error: crate::index::Error) -> Error {
        Error::Internal(error.into())
    }
}
