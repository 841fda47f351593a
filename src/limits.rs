//! Every limit on what a caller may send to search, research and
//! write-back, and on what the card lists, defined once (the working context's own limits are defined
//! once in `crate::context`, beside the events they bound).
//!
//! The HTTP API, the CLI and MCP all reach the use cases through
//! [`crate::app::Noggin`], which checks these; `openapi.json` is built from
//! them (and a test checks that it is), so a limit changes in one place.

/// Most open questions in one research request.
pub const MAX_QUESTIONS: usize = 20;
/// Longest question, in characters (research and write-back alike).
pub const MAX_QUESTION_CHARS: usize = 500;
/// Longest prompt (the request the questions are about), in characters.
pub const MAX_PROMPT_CHARS: usize = 20_000;
/// Longest project context a research request may send, in characters.
pub const MAX_PROJECT_CONTEXT_CHARS: usize = 100_000;
/// Longest session id, in characters.
pub const MAX_SESSION_CHARS: usize = 200;
/// Most question/answer pairs written back in one request.
pub const MAX_ANSWERS: usize = 50;
/// Longest answer written back, in characters.
pub const MAX_ANSWER_CHARS: usize = 10_000;
/// Longest search query, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;
/// Most notes one search returns.
pub const MAX_SEARCH_LIMIT: usize = 100;
/// Notes a search returns when the caller does not say.
pub const DEFAULT_SEARCH_LIMIT: usize = 10;
/// Most sessions one page of `GET /v1/sessions` lists.
pub const MAX_SESSION_PAGE: usize = 1000;
/// Sessions a page lists when the caller does not say.
pub const DEFAULT_SESSION_PAGE: usize = 100;
/// Longest note path a caller may name, in characters.
pub const MAX_NOTE_PATH_CHARS: usize = 4096;
/// Most sessions the card lists (the most recently active); any other
/// can still be asked for by name (`/v1/card?session=`).
pub const CARD_SESSIONS: usize = 50;
