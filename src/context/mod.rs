//! Working context: what an assistant session was doing, kept outside the
//! assistant so that compaction cannot lose it.
//!
//! A session is fed events ([`events`]: the user's messages, tool calls,
//! goals, progress, failures, decisions) and folds them into one
//! [`WorkingContext`](state::WorkingContext) ([`state`]), stored durably in
//! SQLite next to the index ([`sessions`]). [`block`] renders that state as a
//! `[working-context]` block within a character budget; [`pack`] assembles
//! the block with the project context and self-researched facts into one
//! context pack; [`window`] cuts a chat history to a token budget without
//! losing the user's request or splitting a tool call from its result.
//!
//! Every limit of this area is a constant here, so the API, the CLI and the
//! documentation name the same numbers.

pub mod block;
pub mod events;
pub mod pack;
pub mod sessions;
pub mod state;
pub mod window;

/// Reads a required budget from any JSON value. One that is no whole number
/// from 0 up (`-1`, `2.5`, `"abc"`) reads as `usize::MAX`, which the range
/// check refuses as `invalid-budget`, the code the same budget gets in a
/// query string, instead of as unreadable JSON.
pub(crate) fn budget<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let value = <serde_json::Value as serde::Deserialize>::deserialize(d)?;
    Ok(budget_of(&value))
}

/// [`budget`] for a budget that may be left out (or `null`).
pub(crate) fn optional_budget<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<usize>, D::Error> {
    let value = <serde_json::Value as serde::Deserialize>::deserialize(d)?;
    Ok((!value.is_null()).then(|| budget_of(&value)))
}

fn budget_of(value: &serde_json::Value) -> usize {
    value
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(usize::MAX)
}

/// Longest session id, in characters (the same as research's).
pub const MAX_SESSION_CHARS: usize = crate::research::MAX_SESSION_CHARS;
/// Most events one request may carry.
pub const MAX_EVENTS_PER_REQUEST: usize = 500;
/// Largest single event, as JSON bytes; larger ones are refused with 413.
pub const MAX_EVENT_BYTES: usize = 256 * 1024;
/// Longest user message kept, in characters (the same as a research prompt).
pub const MAX_USER_MESSAGE_CHARS: usize = crate::research::MAX_PROMPT_CHARS;
/// Longest goal, progress item or decision, in characters.
pub const MAX_ITEM_CHARS: usize = 2_000;
/// A failure's text is kept in full up to this many characters; a longer
/// one loses its middle (`state::cut_middle`): a log's start says what ran,
/// its end how it failed.
pub const MAX_FAILURE_CHARS: usize = 8_000;
/// Longest file path taken from a tool call, in characters.
pub const MAX_PATH_CHARS: usize = 4_096;
/// Recent files kept per session, most recent first.
pub const RECENT_FILES: usize = 10;
/// Goals kept per session; the oldest finished goal goes first.
pub const MAX_GOALS: usize = 20;
/// Progress items kept per session; the oldest finished item goes first.
pub const MAX_PROGRESS: usize = 100;
/// Decisions kept per session; the oldest goes first.
pub const MAX_DECISIONS: usize = 50;
/// Open questions and confirmed answers kept per session, each.
pub const MAX_QUESTIONS: usize = 50;
/// Events kept in the log of one session (the folded state keeps the rest).
pub const MAX_LOGGED_EVENTS: i64 = 10_000;
/// Default character budget of a working-context block.
pub const DEFAULT_BLOCK_BUDGET_CHARS: usize = 2_000;
/// Default character budget of a context pack.
pub const DEFAULT_PACK_BUDGET_CHARS: usize = 6_000;
/// Largest character budget a caller may ask for.
pub const MAX_BUDGET_CHARS: usize = 1_000_000;
/// Most messages a window request may carry.
pub const MAX_WINDOW_MESSAGES: usize = 10_000;
/// Largest token budget of a window.
pub const MAX_WINDOW_BUDGET_TOKENS: usize = 10_000_000;
/// Marks text that was cut.
pub const CUT_MARKER: &str = "…";

/// What a session id must be, as every refusal of one says it.
pub fn session_rule() -> String {
    format!(
        "session must be 1 to {MAX_SESSION_CHARS} characters, without control characters or \
         blanks at either end"
    )
}

/// Checks a session id: 1 to [`MAX_SESSION_CHARS`] characters, no control
/// characters (it is shown on the card and in logs), no blanks at either
/// end (`" a"` and `"a"` would be two sessions that look alike).
pub fn validate_session_id(id: &str) -> Result<(), Error> {
    let n = id.chars().count();
    if n == 0 || n > MAX_SESSION_CHARS || id.chars().any(char::is_control) || id.trim() != id {
        return Err(Error::InvalidSession);
    }
    Ok(())
}

/// Cuts `text` to at most `max_chars` characters, on a character boundary,
/// ending in "…" when anything was cut. Returns the text and whether it was cut.
pub fn cut_chars(text: &str, max_chars: usize) -> (String, bool) {
    if text.chars().count() <= max_chars {
        return (text.to_string(), false);
    }
    if max_chars == 0 {
        return (String::new(), true);
    }
    let keep: String = text.chars().take(max_chars - 1).collect();
    (format!("{}{CUT_MARKER}", keep.trim_end()), true)
}

/// What can go wrong with sessions and their store.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}", session_rule())]
    InvalidSession,
    #[error("no session {0:?}")]
    UnknownSession(String),
    #[error(transparent)]
    InvalidEvent(#[from] events::InvalidEvent),
    #[error("the session store {path:?} failed: {source}")]
    Store {
        path: std::path::PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// The file at the store's path is damaged, no database, another
    /// program's database or a folder: the user's to move aside; noggin
    /// writes nothing into it.
    #[error(
        "{path:?} is not a noggin session store, or is damaged ({reason}); move it aside to \
         start with no sessions; noggin did not change it"
    )]
    Damaged {
        path: std::path::PathBuf,
        reason: String,
    },
    /// The store cannot be opened at its path now; nothing was stored.
    #[error("the session store {path:?} cannot be used: {reason}")]
    Unavailable {
        path: std::path::PathBuf,
        reason: String,
    },
    #[error("the session store {path:?} holds a state that cannot be read: {source}")]
    CorruptState {
        path: std::path::PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("cannot create the data folder {path:?}: {source}")]
    DataDir {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the session store task failed: {0}")]
    Task(String),
}

impl Error {
    /// A failure of SQLite on the store at `path`: [`Error::Damaged`] when
    /// SQLite says the file is damaged or no database at all.
    pub fn store(path: &std::path::Path, source: rusqlite::Error) -> Error {
        use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
        match source.sqlite_error_code() {
            Some(DatabaseCorrupt | NotADatabase) => Error::Damaged {
                path: path.to_path_buf(),
                reason: source.to_string(),
            },
            _ => Error::Store {
                path: path.to_path_buf(),
                source,
            },
        }
    }

    /// True when the store cannot be used as it is (not when a request
    /// was wrong): its problem is logged once and shown by the status.
    pub fn is_store_problem(&self) -> bool {
        matches!(self, Error::Damaged { .. } | Error::Unavailable { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutting_keeps_whole_characters_and_marks_the_cut() {
        assert_eq!(cut_chars("abc", 3), ("abc".into(), false));
        assert_eq!(cut_chars("abcd", 3), ("ab…".into(), true));
        assert_eq!(cut_chars("두뇌에서찾기", 4), ("두뇌에…".into(), true));
        assert_eq!(cut_chars("abc", 0), (String::new(), true));
        assert_eq!(cut_chars("abc", 1), ("…".into(), true));
    }

    #[test]
    fn session_ids_are_checked() {
        assert!(validate_session_id("run-1").is_ok());
        assert!(validate_session_id("").is_err());
        assert!(validate_session_id("  ").is_err());
        assert!(validate_session_id("a\nb").is_err());
        assert!(validate_session_id(&"x".repeat(MAX_SESSION_CHARS + 1)).is_err());
    }
}
